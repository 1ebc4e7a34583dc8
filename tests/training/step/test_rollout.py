"""Rollouts keep exactly the log-probs of the transitions they sampled."""

from __future__ import annotations

import torch

from tvrl_bench.policies.toy import ToyPolicy
from tvrl_bench.samplers.base import gaussian_log_prob
from tvrl_bench.samplers.sage import SageSampler
from tvrl_bench.training.schedule import Schedule
from tvrl_bench.training.step.rollout import roll_out, sample_rollouts

PROMPTS = ["a red circle moving right on a black background", "a blue square standing still on a white background"]


def test_rollout_log_probs_equal_an_independent_recomputation(tiny_policy_path):
    policy = ToyPolicy(tiny_policy_path, guidance=2.0)
    schedule = Schedule(num_steps=4, sde_window=(1, 2))
    cond = policy.encode(PROMPTS)
    rollout = sample_rollouts(policy, SageSampler(eta=0.5), schedule, cond, 2, torch.Generator().manual_seed(0), micro_batch=2)
    assert rollout.latents.shape == (2, 5, 3, 8, 16, 16)
    assert rollout.log_probs.shape == (2, 4, 4 * 8 * 8)
    assert rollout.trained.tolist() == [[1, 2], [1, 2]]
    sigmas = schedule.sigmas()
    for step in (1, 2):
        x, x_next = rollout.latents[:, step], rollout.latents[:, step + 1]
        with torch.no_grad():
            v = policy.velocity(x, sigmas[step].expand(2), cond)
        s, s_next = float(sigmas[step]), float(sigmas[step + 1])
        var = 0.25 * (-(s - s_next) + torch.log(torch.tensor((1 - s_next) / (1 - s), dtype=torch.float64)))
        mean = x + v * (s_next - s) - var.float() / (2 * s) * (x + (1 - s) * v)
        per_element = gaussian_log_prob(x_next, mean, var.float())  # [2, 3, 8, 16, 16]
        per_token = per_element.reshape(2, 3, 4, 2, 8, 2, 8, 2).mean(dim=(1, 3, 5, 7)).reshape(2, -1)
        torch.testing.assert_close(rollout.log_probs[:, step], per_token, rtol=1e-5, atol=1e-5)
    # ODE steps outside the window are deterministic Euler steps and carry no log-prob
    assert torch.all(rollout.log_probs[:, 0] == 0) and torch.all(rollout.log_probs[:, 3] == 0)


def test_sampling_is_deterministic_given_the_generator(tiny_policy_path):
    policy = ToyPolicy(tiny_policy_path)
    schedule = Schedule(num_steps=3)
    cond = policy.encode(PROMPTS)
    a = sample_rollouts(policy, SageSampler(), schedule, cond, 2, torch.Generator().manual_seed(5), micro_batch=1)
    b = sample_rollouts(policy, SageSampler(), schedule, cond, 2, torch.Generator().manual_seed(5), micro_batch=1)
    assert torch.equal(a.latents, b.latents) and torch.equal(a.log_probs, b.log_probs)


def test_roll_out_encodes_samples_and_decodes_as_sample_rollouts_does(tiny_policy_path):
    """The one place rollouts are sampled: the prompts' encoding, sample_rollouts from the same noise, and the
    decoded final samples, micro-batch by micro-batch."""
    policy = ToyPolicy(tiny_policy_path)
    schedule = Schedule(num_steps=3)
    sampled = roll_out(policy, SageSampler(), schedule, PROMPTS * 2, torch.Generator().manual_seed(5), 2, group_size=2)
    direct = sample_rollouts(policy, SageSampler(), schedule, policy.encode(PROMPTS * 2), 4,
                             torch.Generator().manual_seed(5), 2, group_size=2)
    assert torch.equal(sampled.rollout.latents, direct.latents)
    with torch.no_grad():
        assert torch.equal(sampled.videos, policy.decode(direct.final))


def test_block_noise_rollouts_keep_the_log_probs_of_their_block_means(tiny_policy_path):
    policy = ToyPolicy(tiny_policy_path, guidance=2.0)
    schedule = Schedule(num_steps=4, sde_window=(1, 1), noise_block=(2, 2, 2))
    cond = policy.encode(PROMPTS)
    rollout = sample_rollouts(policy, SageSampler(eta=0.5), schedule, cond, 2, torch.Generator().manual_seed(0), micro_batch=2)
    assert rollout.noise_block == (2, 2, 2)
    sigmas = schedule.sigmas()
    x, x_next = rollout.latents[:, 1], rollout.latents[:, 2]
    with torch.no_grad():
        v = policy.velocity(x, sigmas[1].expand(2), cond)
    s, s_next = float(sigmas[1]), float(sigmas[2])
    var = 0.25 * (-(s - s_next) + torch.log(torch.tensor((1 - s_next) / (1 - s), dtype=torch.float64)))
    mean = x + v * (s_next - s) - var.float() / (2 * s) * (x + (1 - s) * v)
    # a token is one 2 x 2 x 2 block here: its log-prob is the channel mean of log N(block mean of x'; of mu, var)
    pooled = lambda t: t.reshape(2, 3, 4, 2, 8, 2, 8, 2).mean(dim=(3, 5, 7))
    per_channel = gaussian_log_prob(pooled(x_next), pooled(mean), var.float())
    torch.testing.assert_close(rollout.log_probs[:, 1], per_channel.mean(dim=1).reshape(2, -1), rtol=1e-5, atol=1e-5)


def test_shared_start_gives_a_group_one_initial_noise_and_its_own_injected_noise(tiny_policy_path):
    policy = ToyPolicy(tiny_policy_path, guidance=2.0)
    schedule = Schedule(num_steps=4, sde_window=(1, 1), shared_start=True)
    cond = policy.encode([PROMPTS[0]] * 2 + [PROMPTS[1]] * 2)
    rollout = sample_rollouts(policy, SageSampler(eta=0.5), schedule, cond, 4, torch.Generator().manual_seed(0),
                              micro_batch=4, group_size=2)
    start, after_ode, after_sde = rollout.latents[:, 0], rollout.latents[:, 1], rollout.latents[:, 2]
    assert torch.equal(start[0], start[1]) and torch.equal(start[2], start[3]) and not torch.equal(start[0], start[2])
    assert torch.equal(after_ode[0], after_ode[1])  # the ODE step before the window keeps the group together
    assert not torch.allclose(after_sde[0], after_sde[1])  # the SDE step's noise is each rollout's own
