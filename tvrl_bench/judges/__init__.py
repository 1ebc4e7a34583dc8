"""Pairwise judges for win-rate studies (`judges.evaluator`, `judges.vlm`); the contract is in `base.py`.

Importing this package imports neither torch nor any model: judges load what they need when they are built.
"""

from tvrl_bench.judges.base import Judge, compare, judge_label
from tvrl_bench.judges.evaluator import EvaluatorJudge
from tvrl_bench.judges.vlm import CriticJudge

__all__ = ["CriticJudge", "EvaluatorJudge", "Judge", "compare", "judge_label"]
