"""Flow-matching pretraining, step by step: the loss is the velocity error, noise levels, prompt dropout and the
learning rate follow the recipe, the EMA follows its warm-up decay, and the loss falls on a fixed batch."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from tvrl_bench.datasets.toy import training_batch
from tvrl_bench.recipes.flow_matching import (
    Ema,
    PolicyRecipe,
    draw_noise,
    drop_prompts,
    flow_matching_loss,
    learning_rate,
    pretrained_parameters,
    pretrained_parameters_by_name,
    to_latents,
)
from tvrl_bench.recipes.pretrain_policy import build_policy

TINY = PolicyRecipe(batch=4, val_every=2, n_val=2, n_eval=2, sample_steps=2)


def test_flow_matching_loss_is_the_velocity_error_of_the_policy(tmp_path):
    """Independent check: the loss equals mean ||v_hat - (noise - x0)||^2 with v_hat from the policy's own
    velocity (guidance 1), at noise levels above both clamps."""
    recipe = PolicyRecipe()
    policy = build_policy(tmp_path, seed=0, recipe=recipe)
    batch = training_batch(3, 0)
    x0 = to_latents(batch.videos)
    assert x0.shape == (3, 3, 8, 16, 16) and x0.min() >= -1 and x0.max() <= 1
    noise = torch.randn(x0.shape, generator=torch.Generator().manual_seed(1))
    sigma = torch.tensor([0.1, 0.5, 0.9])
    with torch.no_grad():
        loss = flow_matching_loss(policy, x0, list(batch.prompts), noise, sigma, recipe)
        policy.guidance = 1.0
        x = torch.stack([(1 - s) * a + s * n for a, n, s in zip(x0, noise, sigma)])
        v_hat = policy.velocity(x, sigma, policy.encode(list(batch.prompts)))
        expected = ((v_hat - (noise - x0)) ** 2).mean()
        x0_loss = flow_matching_loss(policy, x0, list(batch.prompts), noise, sigma, replace(recipe, loss="x0"))
        balanced = flow_matching_loss(policy, x0, list(batch.prompts), noise, sigma, replace(recipe, loss="balanced"))
        x0_hat = x - sigma.reshape(-1, 1, 1, 1, 1) * v_hat
    torch.testing.assert_close(loss, expected, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(x0_loss, ((x0_hat - x0) ** 2).mean(), rtol=1e-4, atol=1e-6)
    # balanced: the per-video x0 error over sigma, i.e. the velocity error times sigma
    per_video = ((v_hat - (noise - x0)) ** 2).mean(dim=(1, 2, 3, 4))
    torch.testing.assert_close(balanced, (per_video * sigma).mean(), rtol=1e-4, atol=1e-6)


def test_an_unknown_loss_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="loss='v'.*'velocity', 'balanced', 'x0'"):
        PolicyRecipe(loss="v")


def test_noise_levels_dropout_and_learning_rate():
    recipe = PolicyRecipe()
    g = torch.Generator().manual_seed(0)
    noise, sigma = draw_noise(torch.zeros(20000, 1), g, recipe)
    logits = torch.logit(sigma)
    assert abs(float(logits.mean())) < 0.03 and abs(float(logits.std()) - 1) < 0.03  # logit-normal(0, 1)
    assert abs(float(noise.std()) - 1) < 0.03
    dropped = drop_prompts(tuple(["a red circle standing still on a black background"] * 20000), g, 0.1)
    assert abs(dropped.count("") / 20000 - 0.1) < 0.01
    assert learning_rate(0, recipe) == pytest.approx(1e-3 / 300)
    assert learning_rate(149, recipe) == pytest.approx(0.5e-3)
    assert learning_rate(299, recipe) == learning_rate(5000, recipe) == pytest.approx(1e-3)


def test_ema_follows_the_warm_up_decay_and_skips_frozen_branches(tmp_path):
    policy = build_policy(tmp_path, seed=0, recipe=PolicyRecipe())
    ema = Ema(policy, decay=0.999)
    frozen = dict(ema.model.transformer.context_embedder_2.named_parameters())
    start = [p.detach().clone() for p in pretrained_parameters(policy)]
    with torch.no_grad():
        for p in pretrained_parameters(policy):
            p.add_(1.0)
    ema.update(step=5)  # warm-up decay (1 + 5) / (10 + 5) = 0.4
    averages = pretrained_parameters_by_name(ema.model, policy)
    assert len(averages) == len(start) and averages[0] is not pretrained_parameters(policy)[0]
    for average, before in zip(averages, start):
        torch.testing.assert_close(average, 0.4 * before + 0.6 * (before + 1.0))
    ema.update(step=100_000)  # capped at 0.999
    first = averages[0]
    torch.testing.assert_close(first, 0.999 * (0.4 * start[0] + 0.6 * (start[0] + 1)) + 0.001 * (start[0] + 1))
    assert all(float(p.abs().sum()) == 0 for p in frozen.values())


def test_loss_decreases_on_a_fixed_batch(tmp_path):
    recipe = PolicyRecipe(warmup=0)
    policy = build_policy(tmp_path, seed=0, recipe=recipe)
    batch = training_batch(4, 0)
    x0 = to_latents(batch.videos)
    noise, sigma = draw_noise(x0, torch.Generator().manual_seed(0), recipe)
    prompts = list(batch.prompts)
    optimizer = torch.optim.AdamW(pretrained_parameters(policy), lr=recipe.lr)
    with torch.no_grad():
        before = float(flow_matching_loss(policy, x0, prompts, noise, sigma, recipe))
    for _ in range(50):
        loss = flow_matching_loss(policy, x0, prompts, noise, sigma, recipe)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        after = float(flow_matching_loss(policy, x0, prompts, noise, sigma, recipe))
    assert after < 0.5 * before, (before, after)
