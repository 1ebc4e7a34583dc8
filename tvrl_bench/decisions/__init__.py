"""Staged decisions: a study that adds seeds in stages only where its question is still open.

`sequential.py` holds the group-sequential permutation test (the decisions and their error rate), `design.py`
what a study file says it decides (`sweeps.study.decide`) and the arms it compares, `planner.py` which seeds each
stage runs for which arm.
"""
