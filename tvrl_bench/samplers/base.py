"""The sampler contract and the drift shared by every SDE sampler of flow-matching GRPO.

Notation (docs/method.md): noise level s at a step, next level s' < s, dt = s' - s < 0, velocity v, x_hat0 = x - s v.
Flow, Dance and SAGE share one drift and differ only in the step variance Var:

    mu = x + v dt - (Var / (2 s)) * (x + (1 - s) v)
    x' = mu + sqrt(Var) * eps

Shapes: x, v [B, ...]; sigma, sigma_next are Python floats, 0-d tensors or [B] tensors (one level per sample,
so samples of one batch may sit at different steps). Everything is computed in float32.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import torch


class ZeroVarianceError(ValueError):
    """A deterministic transition was asked for a log-probability; it can never be trained."""


def as_levels(sigma: float | torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """Float64 noise levels broadcastable against `like`[B, ...]: a scalar stays 0-d, [B] becomes [B, 1, ...]."""
    s = torch.as_tensor(sigma, dtype=torch.float64, device=like.device)
    if s.ndim == 1:
        s = s.reshape(-1, *([1] * (like.ndim - 1)))
    return s


def shifted_sigmas(num_steps: int, shift: float = 1.0) -> torch.Tensor:
    """Noise levels [num_steps + 1] from 1 to 0 with the flow-matching timestep shift s -> shift s / (1 + (shift - 1) s)."""
    if num_steps < 1:
        raise ValueError(f"num_steps must be >= 1, got {num_steps}")
    if shift <= 0:
        raise ValueError(f"shift must be > 0, got {shift}")
    s = torch.linspace(1.0, 0.0, num_steps + 1, dtype=torch.float64)
    return (shift * s / (1 + (shift - 1) * s)).to(torch.float32)


def gaussian_log_prob(x_next: torch.Tensor, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
    """Per-element log N(x_next; mean, var) in float32; x_next is treated as data (detached)."""
    var = torch.as_tensor(var, dtype=torch.float32, device=mean.device)
    if bool((var <= 0).any()):
        raise ZeroVarianceError(
            "log-probability of a zero-variance (deterministic) transition: such steps are never trained. "
            "Train only stochastic steps (the sampler's SDE steps, not the last ODE step), or pick an SDE sampler "
            "with non-zero noise."
        )
    diff = x_next.detach().to(torch.float32) - mean.to(torch.float32)
    return -(diff**2) / (2 * var) - 0.5 * torch.log(2 * math.pi * var)


def euler_step(x: torch.Tensor, v: torch.Tensor, sigma: float | torch.Tensor,
               sigma_next: float | torch.Tensor) -> torch.Tensor:
    """The deterministic flow-matching step x' = x + v (sigma_next - sigma), float32; x, v: [B, ...].

    Every sampler's drift with zero variance: the untrained steps of a rollout and evaluation use it.
    """
    x, v = x.to(torch.float32), v.to(torch.float32)
    s, s_next = as_levels(sigma, x).to(torch.float32), as_levels(sigma_next, x).to(torch.float32)
    return x + v * (s_next - s)


class Sampler(ABC):
    """One denoising step of a flow-matching sampler and its transition log-probability."""

    stochastic: bool = True

    def ode_step(self, x: torch.Tensor, v: torch.Tensor, sigma: float | torch.Tensor,
                 sigma_next: float | torch.Tensor) -> torch.Tensor:
        """The deterministic step x'[B, ...] this sampler takes where no noise is injected (Euler by default)."""
        return euler_step(x, v, sigma, sigma_next)

    @abstractmethod
    def variance(self, sigma: torch.Tensor, sigma_next: torch.Tensor) -> torch.Tensor:
        """Step variance Var for levels broadcast like the latent (see `as_levels`)."""

    def mean(
        self, x: torch.Tensor, v: torch.Tensor, sigma: torch.Tensor, sigma_next: torch.Tensor, var: torch.Tensor
    ) -> torch.Tensor:
        """The shared drift mu = x + v dt - (Var / (2 s)) (x + (1 - s) v), float32."""
        dt = sigma_next - sigma
        return x + v * dt - (var / (2 * sigma)) * (x + (1 - sigma) * v)

    def transition(
        self, x: torch.Tensor, v: torch.Tensor, sigma: float | torch.Tensor, sigma_next: float | torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(mean, var) of the step's Gaussian, float32; var is broadcastable against x[B, ...]."""
        x = x.to(torch.float32)
        v = v.to(torch.float32)
        # The variance is a difference of nearby levels (and a log ratio for SAGE): computed in float64.
        s64, s_next64 = as_levels(sigma, x), as_levels(sigma_next, x)
        var = self.variance(s64, s_next64).to(torch.float32)
        s, s_next = s64.to(torch.float32), s_next64.to(torch.float32)
        return self.mean(x, v, s, s_next, var), var

    def step(
        self,
        x: torch.Tensor,
        v: torch.Tensor,
        sigma: float | torch.Tensor,
        sigma_next: float | torch.Tensor,
        noise: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One step from level sigma to sigma_next: (x_next, mean, var), all float32.

        x, v: [B, C, T, H, W] (any [B, ...]); noise: standard normal like x, drawn from `generator` when None.
        var is broadcastable against x. Deterministic given the noise.
        """
        mean, var = self.transition(x, v, sigma, sigma_next)
        if not self.stochastic:
            return mean, mean, var
        if noise is None:
            noise = torch.randn(x.shape, generator=generator, dtype=torch.float32).to(x.device)
        return mean + torch.sqrt(var) * noise.to(device=x.device, dtype=torch.float32), mean, var

    def log_prob(self, x_next: torch.Tensor, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
        """Per-element log-density of x_next under N(mean, var), float32, same shape as x_next."""
        return gaussian_log_prob(x_next, mean, var)
