"""Staged decisions: a study that adds seeds in stages only where its question is still open.

    sequential.py  the group-sequential permutation test: the decisions after each stage and their error rate
    design.py      what a study file says it decides (`sweeps.study.decide`), its stages' seeds, the arms compared
    outcome.py     (arm, seed, value) records -> the test's stage results, so the sweep and the report decide alike
    simulation.py  synthetic studies: the test's false-decision rate, power and trials run against a fixed grid

Which trials each stage runs is the sweep's (`sweeps/stages.py`); this package imports nothing above the foundation.
"""
