"""Credit routers: uniform (GRPO), frame, k x k window, shuffled window (control), feature map (control), and the
official routing-grid layout with its uniform and shuffled controls. The contract is in `base.py`."""

from tvrl_bench.credit.base import CreditRouter, GradientRouter, combine, normalise
from tvrl_bench.credit.stats import credit_entropy
from tvrl_bench.credit.weights import CreditWeights

__all__ = ["CreditRouter", "CreditWeights", "GradientRouter", "combine", "normalise", "credit_entropy"]
