"""The rollout schedule: noise levels, which steps are stochastic, and which transitions are trained.

Selection rules (the published variants, combined by three parameters):
- all but the last: by default every step is an SDE step except the last, which is a deterministic ODE step
  so the final sample is clean;
- a contiguous SDE window: `sde_window=(start, size)` makes steps start .. start+size-1 stochastic and all
  other steps ODE (the window may not contain the last step);
- a moving window (MixGRPO's sliding window, Tencent-Hunyuan/MixGRPO fastvideo/utils/grpo_states.py, its
  'progressive' strategy): with `window_shift_every=N` the window moves `window_stride` steps later every N
  optimizer updates, from `sde_window`'s start until it ends at the last SDE-able step (num_steps - 2); there it
  stays, or with `window_restart=True` it starts again from its first position (MixGRPO's roll_back). Its
  position is a pure function of the updates done so far (`window_start`), so a resumed trial needs no state;
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
    """Denoising schedule: timestep shift, SDE window (fixed or moving), trained fraction, shuffle, noise blocks, shared start."""

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
        window_shift_every: int = 0,
        window_stride: int = 1,
        window_restart: bool = False,
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
        for name, value, low in (("window_shift_every", window_shift_every, 0), ("window_stride", window_stride, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"training.schedule.{name} = {value!r} must be an integer >= {low}")
        if window_shift_every and sde_window is None:
            raise ConfigError(f"training.schedule.window_shift_every = {window_shift_every} moves the SDE window: bind "
                              "training.schedule.sde_window = (start, size) too, e.g. (0, 2)")
        self.window_shift_every = window_shift_every
        self.window_stride = window_stride
        self.window_restart = window_restart

    def balance_factors(self, sampler: Sampler) -> torch.Tensor | None:
        """Per-step loss factors [num_steps] (see samplers/balance.py), or None when balancing is off."""
        if not self.balance:
            return None
        from tvrl_bench.samplers.balance import balance_factors

        return balance_factors(sampler, self.sigmas(), self.reachable_steps())

    def sigmas(self) -> torch.Tensor:
        """Noise levels [num_steps + 1] from 1 to 0."""
        return shifted_sigmas(self.num_steps, self.shift)

    def window_start(self, updates: int = 0) -> int | None:
        """The SDE window's first step after `updates` optimizer updates (None without a window)."""
        if self.sde_window is None:
            return None
        start, size = self.sde_window
        if not self.window_shift_every:
            return start
        last = self.num_steps - 1 - size  # the window's last step is then num_steps - 2
        moves = updates // self.window_shift_every
        if self.window_restart:
            moves %= (last - start) // self.window_stride + 1  # the positions start, start + stride, ... <= last
        return min(start + moves * self.window_stride, last)

    def stochastic_steps(self, updates: int = 0) -> list[int]:
        """Indices of the SDE steps after `updates` optimizer updates; every other step is a deterministic ODE step."""
        if self.sde_window is None:
            return list(range(self.num_steps - 1))
        start = self.window_start(updates)
        return list(range(start, start + self.sde_window[1]))

    def reachable_steps(self) -> list[int]:
        """Every step that is stochastic at some update (the fixed schedule's stochastic steps without a moving window)."""
        if not self.window_shift_every:
            return self.stochastic_steps()
        start, size = self.sde_window
        moves = (self.num_steps - 1 - size - start) // self.window_stride + 2  # past the end: clipped or restarted
        return sorted({s for k in range(moves) for s in self.stochastic_steps(k * self.window_shift_every)})

    @property
    def num_trained(self) -> int:
        """How many transitions of each rollout are trained."""
        return math.ceil(self.train_fraction * len(self.stochastic_steps()) - 1e-9)

    def trained_steps(self, batch_size: int, generator: torch.Generator | None = None, updates: int = 0) -> torch.Tensor:
        """Step indices [B, S_train] whose transitions each rollout trains after `updates` optimizer updates
        (ascending unless shuffled)."""
        steps = torch.tensor(self.stochastic_steps(updates), dtype=torch.long)
        if not self.shuffle:
            return steps[: self.num_trained].expand(batch_size, -1).clone()
        order = torch.stack([torch.randperm(len(steps), generator=generator) for _ in range(batch_size)])
        return steps[order[:, : self.num_trained]]

    def validate(self, sampler: Sampler) -> None:
        """Raise ZeroVarianceError if a trained step of this schedule (at any update) has zero variance under `sampler`."""
        sigmas = self.sigmas()
        for step in self.reachable_steps():
            var = sampler.variance(sigmas[step], sigmas[step + 1])
            if not bool(var > 0):
                raise ZeroVarianceError(
                    f"step {step} (sigma {float(sigmas[step]):.4f} -> {float(sigmas[step + 1]):.4f}) has zero variance "
                    f"under {type(sampler).__name__}, so it cannot be trained. Use an SDE sampler with non-zero noise "
                    "(flow, dance, sage, cps), or exclude the step with training.schedule.sde_window."
                )
