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

from tvrl_bench.config.rules import Checks, Relation, Rule, Values, integer, number
from tvrl_bench.registry import register
from tvrl_bench.samplers.base import Sampler, ZeroVarianceError, shifted_sigmas


def _window(value: object) -> bool:
    return value is None or (isinstance(value, (list, tuple)) and len(value) == 2
                             and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
                             and value[0] >= 0 and value[1] >= 1)


def _block(value: object) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) == 3
            and all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in value))


def _window_fits(v: Values) -> str | None:
    window, steps = v["sde_window"], v["num_steps"]
    if window is None or window[0] + window[1] <= steps - 1:
        return None
    return (f"{v.binding('sde_window')} must lie within steps 0..{steps - 2} (the last step, {steps - 1}, is the "
            f"deterministic ODE step; {v.binding('num_steps')}), e.g. {v.name('sde_window')} = (0, 2)")


def _moving_window_has_a_window(v: Values) -> str | None:
    if not v["window_shift_every"] or v["sde_window"] is not None:
        return None
    return (f"{v.binding('window_shift_every')} moves the SDE window: bind {v.name('sde_window')} = (start, size) "
            "too, e.g. (0, 2)")


def _window_moves(v: Values) -> str | None:
    """MixGRPO's window must have somewhere to move: refused when it never would (the run would equal one without
    the moving window)."""
    window, every, stride = v["sde_window"], v["window_shift_every"], v["window_stride"]
    if not every or window is None:
        return None
    start, size = window
    room = v["num_steps"] - 1 - size - start  # steps the window's start can move before it ends at num_steps - 2
    if room <= 0:
        return (f"{v.binding('sde_window')} already ends at the last SDE step ({v.binding('num_steps')}), so "
                f"{v.binding('window_shift_every')} never moves it; start it earlier or shrink it, e.g. "
                f"{v.name('sde_window')} = (0, 2)")
    if stride > room and v["window_restart"]:
        return (f"{v.binding('window_stride')} is larger than the {room} step(s) {v.binding('sde_window')} can move "
                f"before it ends at step {v['num_steps'] - 2}, and with {v.name('window_restart')} = True every move wraps back to the "
                f"start: the window never moves (the run equals one without it); bind a stride of 1..{room}, e.g. "
                f"{v.name('window_stride')} = 1")
    return None


def _window_stride_clipped(v: Values) -> str | None:
    window, every, stride = v["sde_window"], v["window_shift_every"], v["window_stride"]
    if not every or window is None or v["window_restart"]:
        return None
    room = v["num_steps"] - 1 - window[0] - window[1]
    if 0 < room < stride:
        return (f"{v.binding('window_stride')} is larger than the {room} step(s) {v.binding('sde_window')} can "
                f"move: its first move takes it straight to its last position, where it stays; bind a stride of "
                f"1..{room} for a sliding window, e.g. {v.name('window_stride')} = 1")
    return None


def _window_moves_within_the_trial(v: Values) -> str | None:
    every, window = v["window_shift_every"], v["sde_window"]
    updates = v["training.trial.steps"] * v["training.trial.minibatches"]
    if not every or window is None or every < updates or updates == 0:
        return None
    return (f"{v.binding('window_shift_every')} updates is not below the trial's {updates} optimizer updates "
            f"(training.trial.steps x minibatches): the SDE window never moves in this trial; bind fewer, e.g. "
            f"{v.name('window_shift_every')} = {max(1, updates // 5)}")


@register("training", "schedule")
class Schedule:
    """Denoising schedule: timestep shift, SDE window (fixed or moving), trained fraction, shuffle, noise blocks, shared start."""

    CHECKS = Checks(
        [Relation(("sde_window", "num_steps"), _window_fits),
         Relation(("window_shift_every", "sde_window"), _moving_window_has_a_window),
         Relation(("window_stride", "sde_window", "num_steps", "window_shift_every", "window_restart"), _window_moves),
         Relation(("window_stride", "sde_window", "num_steps", "window_shift_every", "window_restart"),
                  _window_stride_clipped, warn=True),
         Relation(("window_shift_every", "sde_window", "training.trial.steps", "training.trial.minibatches"),
                  _window_moves_within_the_trial, warn=True)],
        num_steps=integer(2, example="10", note="one SDE step and a final ODE step"),
        shift=number(0, low_open=True, example="1.0"),
        sde_window=Rule(_window, "None or (start, size) with integers start >= 0 and size >= 1", "(0, 2)"),
        train_fraction=number(0, 1, low_open=True, example="1.0"),
        noise_block=Rule(_block, "3 positive integers (latent frames, rows, columns sharing one noise value), e.g. "
                         "(1, 1, 1) for per-element noise or the transformer's patch size", "(1, 1, 1)"),
        window_shift_every=integer(0, example="12", note="0: the window stays"),
        window_stride=integer(1, example="1"),
    )

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
        self.num_steps = num_steps
        self.shift = shift
        self.sde_window = tuple(sde_window) if sde_window is not None else None
        self.train_fraction = train_fraction
        self.shuffle = shuffle
        self.balance = balance
        self.noise_block = tuple(noise_block)
        self.shared_start = shared_start
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
