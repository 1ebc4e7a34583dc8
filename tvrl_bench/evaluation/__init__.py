"""Evaluators. Importing this package registers every evaluator."""

from tvrl_bench.evaluation import vbench2  # noqa: F401
