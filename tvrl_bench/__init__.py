"""tvrl-bench: a component registry and sweep engine for token-level video RL (TVRL) benchmarks."""

__version__ = "0.1.0"
