"""The trial loop on accelerate: rollouts, critic scoring and credit, the policy update, checkpoints."""

from tvrl_bench.training import settings  # noqa: F401  (registers training.trial)
from tvrl_bench.training import optimizers  # noqa: F401,E402  (registers training.optimizer)
