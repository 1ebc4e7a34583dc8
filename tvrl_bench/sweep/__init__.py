"""The sweep engine: study files, expansion into trials, executors (local, Ray), resume and retries."""

from tvrl_bench.sweep import executors, study  # noqa: F401  (registers sweeps.study and the executors)
