"""One batched backward gives every (video, check) gradient map, as separate backward passes would."""

from __future__ import annotations

import torch

from tvrl_bench.rewards.toy_oracle import ToyOracle
from tvrl_bench.training.scoring import score_videos, score_videos_looped
from tvrl_bench.datasets.toy import toy_prompt_set
from tvrl_bench.world.render import ground_truth_videos


def test_batched_gradients_equal_per_pair_backward_passes():
    items = list(toy_prompt_set(seed=3, n_train=4, n_eval=2).train[:3])
    prompts, checks = [it.prompt for it in items], [list(it.checks) for it in items]
    video = ground_truth_videos(prompts, 0) * 0.8 + 0.1
    reward = ToyOracle()
    batched = score_videos(reward, video, prompts, checks, need_grads=True)
    k = max(len(c) for c in checks)
    assert batched.scores.shape == (3, k) and batched.grads.shape == (3, k, 8, 16, 16)
    for i in range(3):
        for j in range(k):
            if j >= len(checks[i]):
                assert not batched.mask[i, j] and torch.all(batched.grads[i, j] == 0)
                continue
            single = video[i : i + 1].clone().requires_grad_(True)
            score = reward.score_pairs(single, [prompts[i]], [checks[i][j]])
            (grad,) = torch.autograd.grad(score.sum(), single)
            torch.testing.assert_close(batched.scores[i, j], score[0].detach(), rtol=1e-5, atol=1e-6)
            torch.testing.assert_close(batched.grads[i, j], grad[0].abs().sum(dim=1), rtol=1e-4, atol=1e-7)
    looped = score_videos_looped(reward, video, prompts, checks)
    torch.testing.assert_close(looped.grads, batched.grads, rtol=1e-4, atol=1e-7)
    torch.testing.assert_close(looped.scores, batched.scores, rtol=1e-5, atol=1e-6)


def test_without_credit_gradients_no_backward_is_done():
    items = list(toy_prompt_set(seed=4, n_train=2, n_eval=2).train[:2])
    prompts, checks = [it.prompt for it in items], [list(it.checks) for it in items]
    video = ground_truth_videos(prompts, 1)
    scored = score_videos(ToyOracle(), video, prompts, checks, need_grads=False)
    assert scored.grads is None
    expected = torch.stack([scored.scores[i, : len(c)].mean() for i, c in enumerate(checks)])
    torch.testing.assert_close(scored.rewards(), expected)
