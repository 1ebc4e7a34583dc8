"""Noise injected at a coarser resolution than the latent: one standard normal per block of latent positions.

With block (bt, bh, bw), a step draws z[B, C, T/bt, H/bh, W/bw] and adds sqrt(Var) * z copied over each block,
so every element keeps the step variance Var but the elements of a block move together. The transition is then a
Gaussian over the block means: with P the block average (P of a copied block is the block's value),

    P x' = P mu + sqrt(Var) z  ~  N(P mu, Var)   per block and channel,

and its log-density per element is the log-density of the element's block, so a token's mean log-prob is the
mean over its blocks. The part of mu finer than a block, mu - P mu, is carried into x' deterministically; the
policy gradient follows the block means only. Block (1, 1, 1) is the ordinary per-element transition.

Why: the score-function estimate's noise grows with the number of independent noise values per transition
while the reward depends on few of them. Measured on the toy_v2.gin regime it did not help (docs/log/toy_rl_log.md,
the regime's gate 2, item 2: token-sized noise's gradient was no better than its null control's).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tvrl_bench.samplers.base import Sampler

Block = tuple[int, int, int]
ELEMENT: Block = (1, 1, 1)


def check_block(block: Block, latent_shape: tuple[int, ...], where: str = "training.schedule.noise_block") -> Block:
    """The block as a tuple of 3 positive ints dividing the latent's (T, H, W); a clear error otherwise."""
    block = tuple(int(b) for b in block)
    if len(block) != 3 or min(block) < 1:
        raise ValueError(f"{where}={block} must be 3 positive integers (frames, rows, columns of latent positions)")
    t, h, w = latent_shape[-3:]
    if t % block[0] or h % block[1] or w % block[2]:
        raise ValueError(
            f"{where}={block} must divide the latent's (T, H, W) = {(t, h, w)}; pick a divisor of each, "
            "e.g. the transformer's patch size"
        )
    return block  # type: ignore[return-value]


def block_noise(shape: tuple[int, ...], block: Block, generator: torch.Generator | None = None) -> torch.Tensor:
    """Standard normal noise [B, C, T, H, W] constant over each block (drawn at [B, C, T/bt, H/bh, W/bw])."""
    b, c, t, h, w = shape
    bt, bh, bw = block
    z = torch.randn(b, c, t // bt, h // bh, w // bw, generator=generator)
    return expand_blocks(z, block)


def expand_blocks(values: torch.Tensor, block: Block) -> torch.Tensor:
    """[B, C, T', H', W'] -> [B, C, T' bt, H' bh, W' bw], each value copied over its block."""
    bt, bh, bw = block
    return values.repeat_interleave(bt, dim=2).repeat_interleave(bh, dim=3).repeat_interleave(bw, dim=4)


def block_mean(values: torch.Tensor, block: Block) -> torch.Tensor:
    """[B, C, T, H, W] -> [B, C, T/bt, H/bh, W/bw]: the average over each block."""
    if tuple(block) == ELEMENT:
        return values
    return F.avg_pool3d(values, kernel_size=block, stride=block)


def block_log_prob(sampler: Sampler, x_next: torch.Tensor, mean: torch.Tensor, var: torch.Tensor,
                   block: Block) -> torch.Tensor:
    """Per-element log-density [B, C, T, H, W]: each element carries the sampler's log N(P x'; P mu, Var) of its
    block. var is broadcastable against the pooled latent (a scalar or [B, 1, 1, 1, 1]). Block (1, 1, 1) is
    `sampler.log_prob` itself.
    """
    if tuple(block) == ELEMENT:
        return sampler.log_prob(x_next, mean, var)
    pooled = sampler.log_prob(block_mean(x_next.detach().to(torch.float32), block), block_mean(mean.to(torch.float32), block), var)
    return expand_blocks(pooled, block)
