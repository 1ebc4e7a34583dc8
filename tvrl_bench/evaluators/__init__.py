"""Evaluators: the toy world's exact evaluator (`evaluators.toy`) and VBench-2.0 (`vbench2/`). The contract is
in `base.py`."""
