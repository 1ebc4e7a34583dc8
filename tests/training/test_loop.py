"""The trial loop on the tiny toy policy: hooks, checkpoints, exact resume, failures and stop requests."""

from __future__ import annotations

import math
import os
import signal

import gin
import pytest
import torch

from tests.training.conftest import FAST
from tvrl_bench.config import load_config
from tvrl_bench.objectives.base import Objective
from tvrl_bench.rewards.base import Reward
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.evaluation import Evaluation
from tvrl_bench.training.loop import Hooks, StepOutput, StopRequested, Trainer, TrialFailed
from tvrl_bench.training.settings import TrialSettings


class Poisonable(Reward):
    """A critic that scores like the one it wraps until `poisoned` is set, then gives NaN scores (as a broken
    critic would: still a function of the video)."""

    def __init__(self, inner: Reward):
        super().__init__()
        self.inner = inner
        self.poisoned = False
        self.floor_score, self.score_space = inner.floor_score, inner.score_space
        self.freeze()

    def score_pairs(self, videos, prompts, questions):
        scores = self.inner.score_pairs(videos, prompts, questions)
        return scores * float("nan") if self.poisoned else scores


def settings(policy_path: str, *bindings: str, **given) -> TrialSettings:
    load_config(["components/profiles/toy_v1.gin"], [*FAST, f"policies.toy.path = '{policy_path}'", *bindings])
    built = TrialSettings(**given)
    gin.clear_config()
    return built


def trainer(policy_path: str, folder, *bindings: str, hooks: Hooks | None = None, run_id: str | None = "run-1",
            **given) -> Trainer:
    return Trainer(settings(policy_path, *bindings, **given), Processes(cpu=True), CheckpointDir(folder), run_id, hooks,
                   progress=False)


def parameters_equal(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def optimizer_states_equal(a: dict, b: dict) -> bool:
    if a["param_groups"] != b["param_groups"] or a["state"].keys() != b["state"].keys():
        return False
    for i in a["state"]:
        x, y = a["state"][i], b["state"][i]
        if x.keys() != y.keys() or not all(torch.equal(torch.as_tensor(x[k]), torch.as_tensor(y[k])) for k in x):
            return False
    return True


def test_run_reports_through_the_hooks_in_order_and_returns_the_final_evaluation(tiny_policy_path, tmp_path):
    events: list = []
    hooks = Hooks(
        on_step=lambda step, out: events.append(("step", step, out)),
        on_samples=lambda tag, videos, items: events.append(("samples", tag, videos, items)),
        on_eval=lambda step, metrics: events.append(("eval", step, metrics)),
    )
    t = trainer(tiny_policy_path, tmp_path, "training.trial.steps = 2", "training.trial.eval_every = 1",
                "training.trial.eval_subset = 2", hooks=hooks)
    before = t.evaluation.generate(2)
    result = t.run(0)

    assert [e[:2] for e in events] == [("samples", "start"), ("eval", 0), ("step", 0), ("eval", 1), ("step", 1),
                                       ("samples", "final")]  # the end's evaluation is returned, not an on_eval
    _, _, start_videos, start_items = events[0]
    assert torch.equal(start_videos, before) and start_items == t.eval_items[:2]
    for _, step, out in (e for e in events if e[0] == "step"):
        assert isinstance(out, StepOutput)
        assert {"train/reward_mean", "train/loss", "train/grad_norm", "time/step_s"} <= set(out.metrics)
        assert all(math.isfinite(v) for v in out.metrics.values())
        frames, channels, height, width = out.video.shape  # the first rollout's video and its credit map
        assert channels == 3 and out.weights.shape == t.policy.token_grid.grid_from_video((frames, height, width))
        assert out.prompt in {item.prompt for item in t.train_items}
    assert {"overall", "critic_reward"} <= set(events[1][2])

    assert isinstance(result, Evaluation)
    assert {"overall", "critic_reward"} <= set(result.metrics)
    assert len(result.records) == 4  # eval_prompts
    _, _, final_videos, final_items = events[-1]
    assert final_videos is result.samples and final_videos.shape == (2, *events[2][2].video.shape)
    assert final_items == t.eval_items[:2]
    assert not torch.equal(final_videos, start_videos)  # the same noise, a trained policy


def test_checkpoints_are_written_every_checkpoint_every_steps_and_at_the_end(tiny_policy_path, tmp_path):
    checkpoints = CheckpointDir(tmp_path)
    seen: list = []
    hooks = Hooks(on_step=lambda step, out: seen.append(getattr(checkpoints.info(), "step", None)),
                  on_samples=lambda *a: seen.append("samples"))
    t = trainer(tiny_policy_path, tmp_path, "training.trial.steps = 3", "training.trial.checkpoint_every = 2",
                "training.trial.sample_videos = 0", hooks=hooks, run_id="run-7")
    t.run(0)
    assert seen == [None, None, 2]  # on_step of step 2 (the third) sees the checkpoint after 2 steps; no samples
    info = checkpoints.info()
    assert (info.run_id, info.step, info.finished) == ("run-7", 3, False)  # finishing is the caller's to mark
    saved = checkpoints.load()
    assert saved["step"] == 3 and parameters_equal(saved["parameters"], t.state())
    assert optimizer_states_equal(saved["optimizer"], t.optimizer.state_dict())


def test_load_state_restores_parameters_and_optimizer_exactly(tiny_policy_path, tmp_path):
    source = trainer(tiny_policy_path, tmp_path / "a", "training.trial.steps = 2", "training.trial.sample_videos = 0")
    source.run(0)
    saved = CheckpointDir(tmp_path / "a").load()
    target = trainer(tiny_policy_path, tmp_path / "b", "training.trial.steps = 2")
    assert not parameters_equal(target.state(), saved["parameters"])  # a fresh policy: the test can tell
    assert target.load_state(saved) == 2
    assert parameters_equal(target.state(), saved["parameters"])
    assert optimizer_states_equal(target.optimizer.state_dict(), saved["optimizer"])


@pytest.mark.parametrize("credit", ["window3", "shuffled3"])  # shuffled: a router with state (its generator)
def test_a_trial_resumed_from_a_checkpoint_ends_with_the_weights_of_one_run_straight_through(tiny_policy_path, tmp_path,
                                                                                          credit):
    steps = ("training.trial.steps = 3", "training.trial.sample_videos = 0", f"include 'components/credit/{credit}.gin'")
    straight = trainer(tiny_policy_path, tmp_path / "straight", *steps)
    straight_eval = straight.run(0)

    def stop_after_first(step, out):
        first._request_stop(signal.SIGTERM, None)

    first = trainer(tiny_policy_path, tmp_path / "resumed", *steps, hooks=Hooks(on_step=stop_after_first))
    with pytest.raises(StopRequested):
        first.run(0)
    saved = CheckpointDir(tmp_path / "resumed").load()
    assert saved["step"] == 1

    resumed_steps: list[int] = []
    second = trainer(tiny_policy_path, tmp_path / "resumed", *steps,
                     hooks=Hooks(on_step=lambda step, out: resumed_steps.append(step)))
    start = second.load_state(saved)
    resumed_eval = second.run(start)
    assert resumed_steps == [1, 2]
    assert parameters_equal(second.state(), straight.state())
    assert optimizer_states_equal(second.optimizer.state_dict(), straight.optimizer.state_dict())
    assert resumed_eval.metrics == straight_eval.metrics


def test_a_resumed_run_logs_no_start_samples_and_no_step_zero_evaluation(tiny_policy_path, tmp_path):
    events: list = []
    hooks = Hooks(on_samples=lambda tag, *a: events.append(tag), on_eval=lambda step, m: events.append(step))
    t = trainer(tiny_policy_path, tmp_path, "training.trial.steps = 2", "training.trial.eval_every = 1",
                "training.trial.eval_subset = 1", hooks=hooks)
    t.run(1)
    assert events == ["final"]  # eval at done=2 is the final one (returned), samples only at the end


def test_a_non_finite_reward_fails_the_trial_and_keeps_a_checkpoint_of_the_weights_it_failed_with(tiny_policy_path,
                                                                                               tmp_path):
    from tvrl_bench import registry

    registry.import_components()
    reward = Poisonable(registry.get("rewards.toy_oracle").target(score="prob"))
    events: list = []

    def on_step(step, out):
        events.append(step)
        reward.poisoned = True  # the next step's critic returns NaN

    t = trainer(tiny_policy_path, tmp_path, "training.trial.steps = 3", "training.trial.checkpoint_every = 10",
                hooks=Hooks(on_step=on_step, on_samples=lambda tag, *a: events.append(tag)), reward=reward)
    with pytest.raises(TrialFailed, match=r"step 1: the critic returned a non-finite reward"):
        t.run(0)
    assert events == ["start", 0]
    info = CheckpointDir(tmp_path).info()
    assert (info.run_id, info.step, info.finished) == ("run-1", 1, False)
    saved = CheckpointDir(tmp_path).load()
    assert saved["step"] == 1 and parameters_equal(saved["parameters"], t.state())  # after step 0's update


def test_sigterm_stops_the_loop_at_the_step_boundary_after_a_checkpoint(tiny_policy_path, tmp_path):
    received: list[int] = []

    def ours(signum, frame):
        received.append(signum)

    previous = signal.signal(signal.SIGTERM, ours)
    try:
        events: list = []

        def on_step(step, out):
            events.append(step)
            if step == 0:
                os.kill(os.getpid(), signal.SIGTERM)

        t = trainer(tiny_policy_path, tmp_path, "training.trial.steps = 3", "training.trial.checkpoint_every = 10",
                    hooks=Hooks(on_step=on_step, on_samples=lambda tag, *a: events.append(tag)))
        with pytest.raises(StopRequested, match="after step 1; checkpoint saved"):
            t.run(0)
        assert received == []  # the trainer's handler took it, not ours
        assert signal.getsignal(signal.SIGTERM) is ours  # and ours is back
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert events == ["start", 0]  # no further step, no final samples
    info = CheckpointDir(tmp_path).info()
    assert info.step == 1 and not info.finished
    assert parameters_equal(CheckpointDir(tmp_path).load()["parameters"], t.state())


def test_a_second_stop_request_interrupts_at_once(tiny_policy_path, tmp_path):
    t = trainer(tiny_policy_path, tmp_path)
    t._request_stop(signal.SIGINT, None)
    with pytest.raises(KeyboardInterrupt):
        t._request_stop(signal.SIGINT, None)


def test_a_micro_batch_that_does_not_divide_a_minibatch_is_rejected(tiny_policy_path, tmp_path):
    with pytest.raises(ValueError, match=r"training\.trial\.micro_batch = 3 must divide the 4 rollouts"):
        trainer(tiny_policy_path, tmp_path, "training.trial.micro_batch = 3")
    t = trainer(tiny_policy_path, tmp_path, "training.trial.minibatches = 2")
    assert t.micro_batch == 2  # capped at a minibatch's rollouts


def test_step_prompts_are_drawn_from_the_seed_and_step(tiny_policy_path, tmp_path):
    t = trainer(tiny_policy_path, tmp_path)
    items, ids = t.step_items(0)
    again, _ = t.step_items(0)
    assert items == again and ids.tolist() == [0, 1] and len({i.prompt for i in items}) == 2
    assert len({tuple(i.prompt for i in t.step_items(step)[0]) for step in range(5)}) > 1
    other = trainer(tiny_policy_path, tmp_path, "training.trial.seed = 1")
    assert [other.step_items(s)[0] for s in range(5)] != [t.step_items(s)[0] for s in range(5)]
    many = trainer(tiny_policy_path, tmp_path, "training.trial.prompts_per_step = 20")  # more than 16 train prompts
    assert len(many.step_items(0)[0]) == 20


def test_state_is_a_copy_of_the_trained_parameters(tiny_policy_path, tmp_path):
    t = trainer(tiny_policy_path, tmp_path)
    state = t.state()
    assert len(state) == len(t.parameters) and all(not v.requires_grad for v in state.values())
    state["0"].add_(1.0)
    assert not torch.equal(state["0"], t.parameters[0].detach().cpu())


CONTRACT = {"credit_layout", "advantages", "reference", "old", "update", "needs_old_means", "loss", "after_update",
            "state_dict", "load_state_dict", "method",
            "timesteps", "levels", "units", "draws", "matching_loss"}  # the last five: a matching objective's parts


class ContractOnly(Objective):
    """An objective that shows the trainer its contract's parts only: reading anything else (a flag such as
    kl_beta or per_check_weights) fails the test."""

    def __init__(self, inner: Objective):
        object.__setattr__(self, "_inner", inner)

    def __getattribute__(self, name: str):
        if name in CONTRACT:
            return getattr(object.__getattribute__(self, "_inner"), name)
        if name.startswith("__"):
            return object.__getattribute__(self, name)
        raise AssertionError(f"the trainer read objective.{name}, which is not one of the objective's parts")


@pytest.mark.parametrize("preset,bindings", [
    ("components/objectives/grpo_kl.gin", []),  # a KL term to the pretrained policy
    ("components/objectives/tvrl_official.gin", ["objectives.tvrl_official.mode = 'question'",
                                                 "objectives.tvrl_official.refresh_every = 1"]),
    ("components/objectives/nft.gin", ["objectives.nft.old_decay = 0.5"]),  # a matching objective, moving old policy
    ("components/objectives/grpo_guard.gin", []),  # transitions with the sampling-time means
    ("components/objectives/best_of_n_null.gin", []),  # a matching objective choosing its units, permuted advantages
], ids=["pretrained_kl", "per_check_moving_kl", "nft_moving_old", "grpo_guard", "best_of_n_null"])
def test_the_trainer_calls_the_objectives_parts_without_asking_it_anything_else(tiny_policy_path, tmp_path, preset,
                                                                             bindings):
    def train(folder, strict: bool):
        load_config(["components/profiles/toy_v1.gin", preset],
                    [*FAST, f"policies.toy.path = '{tiny_policy_path}'", *bindings])
        built = TrialSettings()
        gin.clear_config()
        objective = built.objective
        if strict:
            built.objective = ContractOnly(objective)
        t = Trainer(built, Processes(cpu=True), CheckpointDir(folder), None, progress=False)
        metrics = [t.step(step).metrics for step in range(2)]
        t.save(2)
        t.load_state(CheckpointDir(folder).load())
        return metrics, t.state(), objective.state_dict()

    plain, strict = train(tmp_path / "plain", False), train(tmp_path / "strict", True)
    for a, b in zip(plain[0], strict[0]):
        assert {k: v for k, v in a.items() if k != "time/step_s"} == {k: v for k, v in b.items() if k != "time/step_s"}
    assert parameters_equal(plain[1], strict[1])
    assert same_tree(plain[2], strict[2])


def same_tree(a, b) -> bool:
    """Nested dicts / lists of tensors and plain values, equal exactly."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_tree(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    return a == b
