"""Critic scores and, when the router needs them, per-check pixel gradients in one batched backward.

All (video, question) pairs of a step go through the critic together: pair p holds its own copy of its video,
so the gradient of sum_p r_p w.r.t. the copies is, copy by copy, d r_p / d video. One forward and one backward
give the B x K gradient maps (docs/method.md: never loop K backward passes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from tvrl_bench.credit.temporal import fill_skipped_frames
from tvrl_bench.rewards.base import Reward


@dataclass
class Scores:
    """scores[B, K] (0 where masked), mask[B, K], grads[B, K, F, H, W] = |d r_ik / d video_i| summed over colour
    (space "pixels"), or grads[B, K, Tc, Hc, Wc] on the critic's patch grid (space "critic"; see score_videos).

    The mask is moved to the scores' device: a critic on a GPU scores pairs whose mask was built on the CPU.
    by_critic: each critic's own rewards R_j[B] when the reward is made of several (`Reward.critics`), else {}.
    """

    scores: torch.Tensor
    mask: torch.Tensor
    grads: torch.Tensor | None
    by_critic: dict[str, torch.Tensor] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.mask = self.mask.to(self.scores.device)

    def rewards(self) -> torch.Tensor:
        """R_i = mean of the prompt's check scores, [B]."""
        m = self.mask.to(self.scores.dtype)
        return (self.scores * m).sum(dim=1) / m.sum(dim=1).clamp_min(1)


GRAD_SPACES = ("pixels", "critic")


def score_videos(
    reward: Reward, video: torch.Tensor, prompts: list[str], checks: list, need_grads: bool, space: str = "pixels"
) -> Scores:
    """Score video[B, F, 3, H, W] against each prompt's questions; gradients only when `need_grads`.

    space "pixels": grads[B, K, F, H, W] w.r.t. the video; frames a frame-sampling critic skips
    (`Reward.sampled_frames`) get the linear interpolation in time of the sampled frames' maps
    (credit/temporal.py), so every latent frame receives credit. space "critic": grads[B, K, Tc, Hc, Wc] w.r.t. the
    critic's own input patches, from `Reward.score_with_maps`. A critic that scores a video's checks jointly
    (`Reward.scores_jointly`) is always scored through `score_with_maps`. A reward made of several critics
    (`Reward.critics`) has each scored on its own, its check scores combined by `Reward.combine`, and the
    gradients of its `credit_from` critic only.
    """
    if space not in GRAD_SPACES:
        raise ValueError(f"gradient space must be one of {GRAD_SPACES}, got '{space}'")
    if need_grads and not reward.grad_spaces:
        raise ValueError(
            f"the credit router needs gradient maps, but {type(reward).__name__} is not differentiable; route the "
            "credit from another critic (rewards.combined.credit_from) or pick a router that needs none "
            "(credit.uniform)"
        )
    if need_grads and space not in reward.grad_spaces:
        raise ValueError(
            f"the credit router needs '{space}' gradient maps, but {type(reward).__name__} gives only "
            f"{', '.join(reward.grad_spaces)}; pick a pixel-space router (credit.window, credit.frame) for this critic"
        )
    critics = reward.critics()
    if critics:
        scored = {name: score_videos(critic, video, prompts, checks, need_grads and name == reward.credit_from, space)
                  for name, critic in critics.items()}
        credit = scored[reward.credit_from]
        return Scores(reward.combine({name: s.scores for name, s in scored.items()}), credit.mask, credit.grads,
                      {name: s.rewards() for name, s in scored.items()})
    mask = reward.score_mask(checks)  # [B, K]
    if reward.scores_jointly or (need_grads and space == "critic"):
        with torch.set_grad_enabled(bool(need_grads)):
            scores, maps = reward.score_with_maps(video.detach(), prompts, checks, space if need_grads else None)
        if maps is not None and space == "pixels":
            maps = _fill(maps, reward, video.shape[1])
        return Scores(scores.detach(), mask, None if maps is None else maps.detach())
    # index[P]: each (video, check) pair's video; flat[P]: its position in the [B * K] grid
    index, pair_prompts, pair_questions, flat = reward.pairs(video, prompts, checks)
    b, k = mask.shape
    video = video.detach()
    if not need_grads:
        with torch.no_grad():
            pair_scores = reward.score_pairs(video[index], pair_prompts, pair_questions)  # [P]
        return Scores(_scatter(pair_scores, flat, b, k), mask, None)
    copies = video[index].clone().requires_grad_(True)  # [P, F, 3, H, W]
    with torch.enable_grad():
        pair_scores = reward.score_pairs(copies, pair_prompts, pair_questions)  # [P]
        (grad,) = torch.autograd.grad(pair_scores.sum(), copies)
    magnitude = grad.abs().sum(dim=2)  # [P, F, H, W]
    grads = magnitude.new_zeros(b * k, *magnitude.shape[1:])  # [B * K, F, H, W], 0 for masked checks
    grads[flat.to(grads.device)] = magnitude
    grads = _fill(grads, reward, video.shape[1])
    return Scores(_scatter(pair_scores.detach(), flat, b, k), mask, grads.reshape(b, k, *magnitude.shape[1:]))


def score_videos_looped(reward: Reward, video: torch.Tensor, prompts: list[str], checks: list) -> Scores:
    """The same result with one forward and backward per check index k (for the batched-vs-looped benchmark)."""
    index, pair_prompts, pair_questions, flat = reward.pairs(video, prompts, checks)
    mask = reward.score_mask(checks)
    b, k = mask.shape
    scores = torch.zeros(b * k)  # [B * K]
    grads = torch.zeros(b * k, video.shape[1], video.shape[3], video.shape[4])  # [B * K, F, H, W]
    for j in range(k):
        chosen = [p for p in range(len(index)) if int(flat[p]) % k == j]
        copies = video.detach()[index[chosen]].clone().requires_grad_(True)
        with torch.enable_grad():
            pair_scores = reward.score_pairs(copies, [pair_prompts[p] for p in chosen], [pair_questions[p] for p in chosen])
            (grad,) = torch.autograd.grad(pair_scores.sum(), copies)
        scores[flat[chosen]] = pair_scores.detach().to(scores.dtype)
        grads[flat[chosen]] = grad.abs().sum(dim=2).to(grads.dtype)
    return Scores(scores.reshape(b, k), mask, _fill(grads, reward, video.shape[1]).reshape(b, k, *grads.shape[1:]))


def _fill(maps: torch.Tensor, reward: Reward, num_frames: int) -> torch.Tensor:
    """Pixel maps [..., F, H, W] with the frames a frame-sampling critic skips filled in (credit/temporal.py)."""
    sampled = reward.sampled_frames(num_frames)
    return maps if sampled is None else fill_skipped_frames(maps, sampled)


def _scatter(pair_scores: torch.Tensor, flat: torch.Tensor, b: int, k: int) -> torch.Tensor:
    out = pair_scores.new_zeros(b * k)
    out[flat.to(out.device)] = pair_scores
    return out.reshape(b, k)
