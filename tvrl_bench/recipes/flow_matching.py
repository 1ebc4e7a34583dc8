"""Flow-matching pretraining of the toy policy, step by step: the recipe's hyperparameters, the loss on noised
clean latents, the noise and prompt-dropout draws, the learning-rate warm-up and the EMA of the weights.
See `pretrain_policy.py` for the recipe as a whole."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch

from tvrl_bench.recipes.caption_noise import CaptionNoise

# The squared x0 error at noise level sigma is weighted by 1 / sigma^power.
LOSS_SIGMA_POWER = {"velocity": 2, "balanced": 1, "x0": 0}


@dataclass(frozen=True)
class PolicyRecipe:
    """The pretraining settings of the toy policy (defaults: the shipped checkpoint's recipe).

    Model: width, heads, layers, patch (spatial), patch_t (temporal); the video size is the default difficulty's.
    Optimisation: steps, batch, lr, warmup (linear, then constant), weight_decay, grad_clip (max norm).
    Flow matching: loss, the weight of the squared x0 error at noise level sigma: "velocity" 1 / sigma^2 (the
    velocity's squared error), "x0" 1, "balanced" 1 / sigma (between the two: the high-noise steps where a layout
    and its motion are decided get 10 times the velocity loss's share at sigma 0.1 vs 1); loss_sigma_min (clamp of
    sigma in the weight), logit_mean and logit_std (sigma = sigmoid(N(logit_mean, logit_std))), prompt_dropout
    (fraction of prompts replaced by '').
    EMA: ema (decay; the warm-up uses min(ema, (1 + t) / (10 + t)) at step t).
    lean_forward: train through the policy's lean forward (policies/lean_forward.py: the same result to float
    rounding, faster) instead of diffusers' own forward (the v1 checkpoint was trained through the latter).
    Fine-tuning: init, a shipped base (policies.toy.base) to start from instead of fresh weights; such a recipe
    trains the transformer only (as RL does: the words keep the embeddings the base learned). caption_noise: the
    captions' corruption (recipes/caption_noise.py; p 0 leaves them as the world wrote them).
    world: the world it is trained on, 'sprites' (world/) or 'slots' (world/slots.py) (recipes/worlds.py).
    Validation: val_every (steps), n_val (held-out prompts), guidance, sample_steps; n_eval: final scores on the
    first n_eval prompts of the datasets.toy eval set (its default 64), micro_batch: prompts per sampling forward.
    """

    steps: int = 6000
    batch: int = 16
    lr: float = 1e-3
    warmup: int = 300
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    loss: str = "velocity"
    loss_sigma_min: float = 0.05
    logit_mean: float = 0.0
    logit_std: float = 1.0
    prompt_dropout: float = 0.1
    ema: float = 0.999
    width: int = 64
    heads: int = 2
    layers: int = 3
    patch: int = 2
    patch_t: int = 2
    val_every: int = 500
    n_val: int = 64
    n_eval: int = 64
    guidance: float = 3.0
    sample_steps: int = 16
    micro_batch: int = 64
    lean_forward: bool = False
    init: str | None = None
    caption_noise: CaptionNoise = CaptionNoise()
    world: str = "sprites"

    def __post_init__(self) -> None:
        problems = []
        if self.loss not in LOSS_SIGMA_POWER:
            problems.append(f"loss={self.loss!r}: choose one of {', '.join(map(repr, LOSS_SIGMA_POWER))}")
        for name in ("steps", "batch", "val_every", "n_val", "n_eval", "sample_steps", "micro_batch"):
            if getattr(self, name) < 1:
                problems.append(f"{name}={getattr(self, name)}: must be >= 1")
        if not 0 <= self.prompt_dropout < 1 or not 0 <= self.ema < 1 or self.warmup < 0:
            problems.append(f"prompt_dropout={self.prompt_dropout}, ema={self.ema} must lie in [0, 1), warmup={self.warmup} >= 0")
        if problems:
            raise ValueError("invalid PolicyRecipe: " + "; ".join(problems))


def pretrained_parameters(policy) -> list[torch.nn.Parameter]:
    """What pretraining updates: the transformer (minus the frozen, all-zero ByT5 and image branches) and the
    word embedding. The unused branches are left out of the optimizer so nothing (weight decay included) moves them."""
    return [p for p in policy.transformer.parameters() if p.requires_grad] + list(policy.text_encoder.parameters())


def to_latents(videos: torch.Tensor) -> torch.Tensor:
    """x0[B, 3, F, H, W] in [-1, 1] from videos[B, F, 3, H, W] in [0, 1]."""
    return (2 * videos - 1).permute(0, 2, 1, 3, 4).contiguous()


def flow_matching_loss(
    policy,
    x0: torch.Tensor,
    prompts: list[str],
    noise: torch.Tensor,
    sigma: torch.Tensor,
    recipe: PolicyRecipe,
) -> torch.Tensor:
    """Scalar loss for clean latents x0[B, 3, F, H, W], noise[B, 3, F, H, W] and noise levels sigma[B]."""
    s = sigma.reshape(-1, 1, 1, 1, 1)
    x = (1 - s) * x0 + s * noise
    text, mask = policy.text_encoder(prompts)
    error = (policy.predict_x0(x, sigma, text, mask) - x0) ** 2
    power = LOSS_SIGMA_POWER[recipe.loss]
    if power:
        error = error / s.clamp_min(recipe.loss_sigma_min) ** power
    return error.mean()


def draw_noise(x0: torch.Tensor, generator: torch.Generator, recipe: PolicyRecipe) -> tuple[torch.Tensor, torch.Tensor]:
    """(noise[B, 3, F, H, W] ~ N(0, I), logit-normal sigma[B]) for clean latents x0."""
    sigma = torch.sigmoid(recipe.logit_mean + recipe.logit_std * torch.randn(x0.shape[0], generator=generator))
    return torch.randn(x0.shape, generator=generator), sigma


def drop_prompts(prompts: tuple[str, ...], generator: torch.Generator, rate: float) -> list[str]:
    """Each prompt replaced by '' (the <null> token) with probability `rate`."""
    keep = torch.rand(len(prompts), generator=generator) >= rate
    return [p if k else "" for p, k in zip(prompts, keep.tolist())]


def learning_rate(step: int, recipe: PolicyRecipe) -> float:
    """Linear warm-up over `warmup` steps (step counted from 0), then constant."""
    return recipe.lr * min(1.0, (step + 1) / recipe.warmup) if recipe.warmup else recipe.lr


class Ema:
    """An exponential moving average of a policy's pretrained parameters, held in a copy of the policy."""

    def __init__(self, policy, decay: float):
        self.decay = decay
        self.model = copy.deepcopy(policy).requires_grad_(False)
        self._source = pretrained_parameters(policy)
        self._target = pretrained_parameters_by_name(self.model, policy)

    @torch.no_grad()
    def update(self, step: int) -> None:
        """Move the average towards the current weights; the warm-up decay min(decay, (1+t)/(10+t)) at step t."""
        decay = min(self.decay, (1 + step) / (10 + step))
        torch._foreach_lerp_(self._target, [p.detach() for p in self._source], 1 - decay)


def pretrained_parameters_by_name(copy_model, original) -> list[torch.nn.Parameter]:
    """The parameters of `copy_model` (a deep copy of `original`) matching `pretrained_parameters(original)`, in order."""
    names = {id(p): n for n, p in original.named_parameters()}
    by_name = dict(copy_model.named_parameters())
    return [by_name[names[id(p)]] for p in pretrained_parameters(original)]
