"""Block noise: one value per block of latent positions, and the log-density of the block means it implies."""

from __future__ import annotations

import math

import pytest
import torch

from tvrl_bench.samplers.noise_blocks import block_log_prob, block_mean, block_noise, check_block
from tvrl_bench.samplers.sage import SageSampler

SHAPE = (2, 3, 4, 8, 8)


def test_block_noise_is_constant_within_blocks_and_standard_normal_across():
    noise = block_noise(SHAPE, (2, 2, 4), torch.Generator().manual_seed(0))
    assert noise.shape == SHAPE
    blocks = noise.reshape(2, 3, 2, 2, 4, 2, 2, 4)
    assert torch.equal(blocks, blocks[:, :, :, :1, :, :1, :, :1].expand_as(blocks))
    big = block_noise((64, 3, 4, 8, 8), (2, 2, 4), torch.Generator().manual_seed(1))
    values = big[:, :, ::2, ::2, ::4]
    assert abs(float(values.mean())) < 0.05 and abs(float(values.std()) - 1) < 0.05


def test_element_blocks_draw_exactly_the_per_element_noise():
    a = block_noise(SHAPE, (1, 1, 1), torch.Generator().manual_seed(3))
    assert torch.equal(a, torch.randn(SHAPE, generator=torch.Generator().manual_seed(3)))


def test_block_log_prob_is_the_gaussian_density_of_the_block_means():
    g = torch.Generator().manual_seed(2)
    mean, x_next = torch.randn(SHAPE, generator=g), torch.randn(SHAPE, generator=g)
    var = torch.tensor(0.3)
    logp = block_log_prob(SageSampler(eta=0.5), x_next, mean, var, (1, 2, 2))
    # independent: average each 1 x 2 x 2 block by hand, then the scalar Gaussian formula
    xm = x_next.reshape(2, 3, 4, 4, 2, 4, 2).mean(dim=(4, 6))
    mm = mean.reshape(2, 3, 4, 4, 2, 4, 2).mean(dim=(4, 6))
    expected = -((xm - mm) ** 2) / (2 * 0.3) - 0.5 * math.log(2 * math.pi * 0.3)
    assert logp.shape == SHAPE
    torch.testing.assert_close(logp[:, :, :, ::2, ::2], expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(logp[:, :, :, 1::2, 1::2], expected, rtol=1e-5, atol=1e-6)


def test_a_sampled_step_has_block_means_distributed_as_the_log_prob_says():
    sampler = SageSampler(eta=0.5)
    x, v = torch.randn(SHAPE), torch.randn(SHAPE)
    noise = block_noise(SHAPE, (2, 2, 2), torch.Generator().manual_seed(4))
    x_next, mean, var = sampler.step(x, v, 0.8, 0.7, noise=noise)
    residual = block_mean(x_next - mean, (2, 2, 2)) / torch.sqrt(var)
    # the block mean of copied noise is the noise value itself: the residual is exactly the drawn z
    torch.testing.assert_close(residual, noise[:, :, ::2, ::2, ::2])
    # finer than a block the step is deterministic: x' - P x' = mu - P mu
    fine = lambda t: t - block_mean(t, (2, 2, 2)).repeat_interleave(2, 2).repeat_interleave(2, 3).repeat_interleave(2, 4)
    torch.testing.assert_close(fine(x_next), fine(mean), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("block", [(3, 1, 1), (1, 0, 1), (2, 2)])
def test_a_block_that_does_not_fit_the_latent_names_the_parameter(block):
    with pytest.raises(ValueError, match="training.schedule.noise_block"):
        check_block(block, SHAPE)
