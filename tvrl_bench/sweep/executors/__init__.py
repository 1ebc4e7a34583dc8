"""Where the trials of a sweep run: local processes (default) or Ray tasks. Importing registers both."""

from tvrl_bench.sweep.executors import local, ray_executor  # noqa: F401
from tvrl_bench.sweep.executors.base import Executor, TrialCommand

__all__ = ["Executor", "TrialCommand"]
