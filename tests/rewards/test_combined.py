"""`rewards.combined`: several critics with weights, summed or GDPO-combined, with credit from a named critic."""

from __future__ import annotations

import statistics

import gin
import pytest
import torch

from tvrl_bench import registry
from tvrl_bench.config import load_config
from tvrl_bench.datasets.toy import toy_prompt_set
from tvrl_bench.objectives.advantages import group_advantages
from tvrl_bench.rewards.combined import CombinedReward, gdpo_advantages
from tvrl_bench.rewards.toy_oracle import ToyOracle
from tvrl_bench.rewards.toy_verdicts import ToyVerdicts
from tvrl_bench.training.scoring import score_videos
from tvrl_bench.world.render import ground_truth_videos


@pytest.fixture(scope="module")
def batch():
    """Six videos of three prompts: some ground truth, some shifted to another prompt's (partly wrong)."""
    items = toy_prompt_set(seed=5, n_train=6, n_eval=2).train[:6]
    prompts, checks = [it.prompt for it in items], [list(it.checks) for it in items]
    truth = ground_truth_videos(prompts, 2)
    videos = torch.where(torch.arange(6)[:, None, None, None, None] % 2 == 0, truth, torch.roll(truth, 1, dims=0))
    return videos * 0.9 + 0.05, prompts, checks


def _oracle() -> ToyOracle:
    return ToyOracle(score="prob")


def test_gdpo_matches_a_hand_computation():
    groups = torch.tensor([0, 0, 0, 1, 1, 1])
    first, second = [1.0, 2.0, 4.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 5.0, 5.0, 5.0]  # group 1 of `second`: no spread
    weights = {"a": 2.0, "b": 0.5, "unused": 0.0}
    rewards = {"a": torch.tensor(first), "b": torch.tensor(second), "unused": torch.tensor([float("nan")] * 6)}

    def normalised(values):
        out = []
        for g in (values[:3], values[3:]):
            mean, std = statistics.fmean(g), statistics.pstdev(g)
            out += [(v - mean) / max(std, 1e-6) for v in g]
        return out

    summed = [2.0 * x + 0.5 * y for x, y in zip(normalised(first), normalised(second))]
    mean, std = statistics.fmean(summed), statistics.pstdev(summed)
    expected = torch.tensor([(v - mean) / max(std, 1e-6) for v in summed])
    torch.testing.assert_close(gdpo_advantages(rewards, weights, groups), expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(gdpo_advantages(rewards, weights, groups, clip=1.0), expected.clamp(-1, 1),
                               rtol=1e-5, atol=1e-6)
    combined = CombinedReward({"a": _oracle(), "b": ToyVerdicts(), "unused": _oracle()}, weights, "gdpo", "a")
    torch.testing.assert_close(combined.group_advantages(torch.zeros(6), rewards, groups, "group", 1e-4, None),
                               expected, rtol=1e-5, atol=1e-6)


def test_sum_is_the_weighted_sum_of_the_critics_rewards(batch):
    videos, prompts, checks = batch
    oracle, verdicts = _oracle(), ToyVerdicts()
    combined = CombinedReward({"toy_oracle": oracle, "toy_verdicts": verdicts}, {"toy_oracle": 0.3, "toy_verdicts": 0.7},
                              credit_from="toy_oracle")
    scored = score_videos(combined, videos, prompts, checks, need_grads=False)
    alone = {name: score_videos(c, videos, prompts, checks, need_grads=False) for name, c in combined.critics().items()}
    assert scored.by_critic.keys() == {"toy_oracle", "toy_verdicts"}
    for name, s in alone.items():
        torch.testing.assert_close(scored.by_critic[name], s.rewards())
    hand = 0.3 * alone["toy_oracle"].rewards() + 0.7 * alone["toy_verdicts"].rewards()
    torch.testing.assert_close(scored.rewards(), hand)
    torch.testing.assert_close(scored.scores, 0.3 * alone["toy_oracle"].scores + 0.7 * alone["toy_verdicts"].scores)
    torch.testing.assert_close(combined.score(videos, prompts, checks), scored.scores)  # through score_pairs
    groups = torch.tensor([0, 0, 1, 1, 2, 2])
    torch.testing.assert_close(combined.group_advantages(scored.rewards(), scored.by_critic, groups, "group", 1e-4, 5.0),
                               group_advantages(scored.rewards(), groups, "group", 1e-4, 5.0))


@pytest.mark.parametrize("weights", [{"toy_verdicts": 1.0, "toy_oracle": 0.0}, {"toy_verdicts": 0.5, "toy_oracle": 0.5}])
def test_the_credit_map_comes_from_the_named_critic_even_at_weight_zero(batch, weights):
    videos, prompts, checks = batch
    combined = CombinedReward({"toy_verdicts": ToyVerdicts(), "toy_oracle": _oracle()}, weights, credit_from="toy_oracle")
    assert combined.grad_spaces == ("pixels",)
    scored = score_videos(combined, videos, prompts, checks, need_grads=True)
    own = score_videos(_oracle(), videos, prompts, checks, need_grads=True)
    assert torch.equal(scored.grads, own.grads) and torch.equal(scored.mask, own.mask)
    if weights["toy_oracle"] == 0:  # no reward from the credit critic: the reward is the verdicts alone
        torch.testing.assert_close(scored.rewards(), scored.by_critic["toy_verdicts"])
        torch.testing.assert_close(scored.by_critic["toy_oracle"], own.rewards())


def test_a_non_differentiable_credit_critic_is_refused(batch):
    videos, prompts, checks = batch
    verdicts_credit = CombinedReward({"toy_verdicts": ToyVerdicts()})
    assert verdicts_credit.credit_from == "toy_verdicts"  # the one weighted critic by default
    with pytest.raises(ValueError, match="not differentiable"):
        score_videos(verdicts_credit, videos, prompts, checks, need_grads=True)


@pytest.mark.parametrize("kwargs,message", [
    (dict(critics={}), "empty"),
    (dict(critics={"a.b": ToyVerdicts()}), "no '.'"),
    (dict(critics={"a": ToyVerdicts()}, weights={"b": 1.0}), "give every critic"),
    (dict(critics={"a": ToyVerdicts()}, weights={"a": 0.0}), "non-zero"),
    (dict(critics={"a": ToyVerdicts()}, aggregate="mean"), "aggregate"),
    (dict(critics={"a": ToyVerdicts(), "b": ToyVerdicts()}), "credit_from"),
    (dict(critics={"a": ToyVerdicts()}, credit_from="c"), "not one of the critics"),
])
def test_mistakes_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CombinedReward(**kwargs)


def test_a_refused_value_is_shown_fixed_in_the_configs_own_critic_names():
    from tvrl_bench.config import ConfigError, load_config

    with pytest.raises(ConfigError) as refused:
        load_config(["components/profiles/toy.gin", "components/rewards/combined_sum.gin"],
                    ["rewards.combined.weights = {'toy_oracle': 0.0, 'toy_verdicts': 0.0}"])
    assert str(refused.value).endswith("e.g. rewards.combined.weights = {'toy_oracle': 1.0, 'toy_verdicts': 1.0}")
    with pytest.raises(ConfigError) as refused:
        load_config(["components/profiles/toy.gin", "components/rewards/combined_sum.gin"],
                    ["rewards.combined.critics = {'toy.oracle': @rewards.toy_oracle(), 'v': @rewards.toy_verdicts()}"])
    assert "e.g. rewards.combined.critics = {'toy_oracle': @rewards.toy_oracle(), 'v': @rewards.toy_verdicts()}" \
        in str(refused.value)


def test_a_critic_alone_keeps_the_plain_path(batch):
    videos, prompts, checks = batch
    oracle = _oracle()
    assert oracle.critics() == {} and score_videos(oracle, videos, prompts, checks, need_grads=False).by_critic == {}
    rewards, groups = torch.tensor([0.1, 0.4, 0.2, 0.9]), torch.tensor([0, 0, 1, 1])
    assert torch.equal(oracle.group_advantages(rewards, {}, groups, "group", 1e-4, 5.0),
                       group_advantages(rewards, groups, "group", 1e-4, 5.0))


@pytest.mark.parametrize("preset,aggregate,weights", [
    ("toy_verdicts", "sum", {"toy_verdicts": 1.0, "toy_oracle": 0.0}),
    ("combined_sum", "sum", {"toy_oracle": 0.5, "toy_verdicts": 0.5}),
    ("combined_gdpo", "gdpo", {"toy_oracle": 0.5, "toy_verdicts": 0.5}),
])
def test_presets_build_on_the_toy_profile(preset, aggregate, weights):
    load_config(["components/profiles/toy_v1.gin", f"components/rewards/{preset}.gin"], [])
    reward = registry.build("REWARD")
    gin.clear_config()
    assert isinstance(reward, CombinedReward) and reward.aggregate == aggregate and reward.weights == weights
    assert reward.credit_from == "toy_oracle" and reward.critics()["toy_oracle"].score_space == "prob"
    assert reward.score_space == "prob"  # weights summing to 1 over p(Yes) critics: a yes-probability too


def test_a_sum_that_is_not_a_probability_stays_a_score():
    both = {"toy_oracle": ToyOracle(score="prob"), "toy_verdicts": ToyVerdicts()}
    assert CombinedReward(both, weights={"toy_oracle": 1.0, "toy_verdicts": 1.0},
                          credit_from="toy_oracle").score_space == "score"
    assert CombinedReward({"toy_oracle": ToyOracle(score="log_prob"), "toy_verdicts": ToyVerdicts()},
                          weights={"toy_oracle": 0.5, "toy_verdicts": 0.5}, credit_from="toy_oracle").score_space == "score"
