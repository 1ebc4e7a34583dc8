"""Credit routers: uniform (GRPO), frame, k x k window, shuffled window (control), feature map (control), and the
official routing-grid layout with its uniform and shuffled controls."""

from tvrl_bench.credit import extractors, feature_map, frame, shuffled, uniform, window  # noqa: F401
from tvrl_bench.credit import dinov2  # noqa: F401,E402  (registers extractors.dinov2)
from tvrl_bench.credit import routing_grid  # noqa: F401,E402  (registers credit.routing_grid)
from tvrl_bench.credit.base import CreditRouter, GradientRouter, combine, normalise
from tvrl_bench.credit.stats import credit_entropy

__all__ = ["CreditRouter", "GradientRouter", "combine", "normalise", "credit_entropy"]
