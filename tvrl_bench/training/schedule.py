"""The rollout schedule: noise levels, which steps are stochastic, and which transitions are trained.

Selection rules (the published variants, combined by three parameters):
- all but the last: by default every step is an SDE step except the last, which is a deterministic ODE step
  so the final sample is clean;
- a contiguous SDE window: `sde_window=(start, size)` makes steps start .. start+size-1 stochastic and all
  other steps ODE (the window may not contain the last step);
- a fraction: `train_fraction` trains the first ceil(fraction * n) of the n stochastic steps;
- a per-sample random permutation: `shuffle=True` permutes each sample's stochastic steps before taking that
  fraction, so every sample trains its own random subset.
`balance=True` scales each trained transition's loss by median_t(g) / g_t (samplers/balance.py), so low-noise
steps do not drown the gradient of the high-noise steps that decide the reward.
`noise_block=(bt, bh, bw)` injects one noise value per block of latent positions instead of one per element
(samplers/noise_blocks.py): fewer independent noise values per transition, a less noisy policy gradient.
`shared_start=True` starts every rollout of a prompt's group from the same initial noise (DanceGRPO's
init_same_noise), so the rewards within a group differ only through the noise the trained steps inject.
"""

from __future__ import annotations

import math

import torch

from tvrl_bench.config.errors import ConfigError
from tvrl_bench.registry import register
from tvrl_bench.samplers.base import Sampler, ZeroVarianceError, shifted_sigmas


@register("training", "schedule")
class Schedule:
    """Denoising schedule: levels with a timestep shift, SDE window, trained fraction, shuffling, noise blocks, shared start."""

    def __init__(
        self,
        num_steps: int = 16,
        shift: float = 1.0,
        sde_window: tuple[int, int] | None = None,
        train_fraction: float = 1.0,
        shuffle: bool = False,
        balance: bool = False,
        noise_block: tuple[int, int, int] = (1, 1, 1),
        shared_start: bool = False,
    ):
        if num_steps < 2:
            raise ConfigError(f"training.schedule.num_steps = {num_steps} must be >= 2 (one SDE step and a final ODE step), "
                              "e.g. training.schedule.num_steps = 10")
        if not 0 < train_fraction <= 1:
            raise ConfigError(f"training.schedule.train_fraction = {train_fraction} must be in (0, 1]")
        if sde_window is not None:
            start, size = sde_window
            if size < 1 or start < 0 or start + size > num_steps - 1:
                raise ConfigError(
                    f"training.schedule.sde_window = {tuple(sde_window)} must lie within steps 0..{num_steps - 2} "
                    f"(the last step, {num_steps - 1}, is the deterministic ODE step)"
                )
        self.num_steps = num_steps
        self.shift = shift
        self.sde_window = tuple(sde_window) if sde_window is not None else None
        self.train_fraction = train_fraction
        self.shuffle = shuffle
        self.balance = balance
        block = tuple(noise_block)
        if len(block) != 3 or not all(isinstance(b, int) and b >= 1 for b in block):
            raise ConfigError(
                f"training.schedule.noise_block = {noise_block!r} must be 3 positive integers (latent frames, rows, "
                "columns sharing one noise value), e.g. (1, 1, 1) for per-element noise or the transformer's patch size"
            )
        self.noise_block = block
        self.shared_start = shared_start

    def balance_factors(self, sampler: Sampler) -> torch.Tensor | None:
        """Per-step loss factors [num_steps] (see samplers/balance.py), or None when balancing is off."""
        if not self.balance:
            return None
        from tvrl_bench.samplers.balance import balance_factors

        return balance_factors(sampler, self.sigmas(), self.stochastic_steps())

    def sigmas(self) -> torch.Tensor:
        """Noise levels [num_steps + 1] from 1 to 0."""
        return shifted_sigmas(self.num_steps, self.shift)

    def stochastic_steps(self) -> list[int]:
        """Indices of the SDE steps; every other step is a deterministic ODE step."""
        if self.sde_window is None:
            return list(range(self.num_steps - 1))
        start, size = self.sde_window
        return list(range(start, start + size))

    @property
    def num_trained(self) -> int:
        """How many transitions of each rollout are trained."""
        return math.ceil(self.train_fraction * len(self.stochastic_steps()) - 1e-9)

    def trained_steps(self, batch_size: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """Step indices [B, S_train] whose transitions each rollout trains (ascending unless shuffled)."""
        steps = torch.tensor(self.stochastic_steps(), dtype=torch.long)
        if not self.shuffle:
            return steps[: self.num_trained].expand(batch_size, -1).clone()
        order = torch.stack([torch.randperm(len(steps), generator=generator) for _ in range(batch_size)])
        return steps[order[:, : self.num_trained]]

    def validate(self, sampler: Sampler) -> None:
        """Raise ZeroVarianceError if a trained step of this schedule has zero variance under `sampler`."""
        sigmas = self.sigmas()
        for step in self.stochastic_steps():
            var = sampler.variance(sigmas[step], sigmas[step + 1])
            if not bool(var > 0):
                raise ZeroVarianceError(
                    f"step {step} (sigma {float(sigmas[step]):.4f} -> {float(sigmas[step + 1]):.4f}) has zero variance "
                    f"under {type(sampler).__name__}, so it cannot be trained. Use an SDE sampler with non-zero noise "
                    "(flow, dance, sage, cps), or exclude the step with training.schedule.sde_window."
                )
