"""Samplers: SDE steps sharing one drift with pluggable variance (flow, dance, sage), cps, and the ODE step."""

from tvrl_bench.samplers.base import Sampler, ZeroVarianceError, gaussian_log_prob, shifted_sigmas

__all__ = ["Sampler", "ZeroVarianceError", "gaussian_log_prob", "shifted_sigmas"]
