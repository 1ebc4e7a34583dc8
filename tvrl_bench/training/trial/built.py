"""One trial's parts, built once from profile files and bindings: what the trial trains with, and what every tool
that samples, scores, evaluates or loads a trial's weights uses instead of building its own.

    from tvrl_bench.training.trial.built import build_trial

    trial = build_trial(["components/profiles/toy.gin"], ["policies.toy.base = 'slots_clean'"])
    sampled = trial.sample(prompts, trial.noise("rollout", 0, 0), group=4)  # exactly as the training step samples
    scores = trial.score(sampled.videos, prompts, checks)                   # the critic, as the step scores
    metrics, records = trial.evaluate(sampled.videos, prompts, checks)       # the trial's evaluator
    trial.load_weights("runs/trials/KEY")                                    # a trial's trained policy
    trainer = trial.trainer(folder)                                          # train it (no MLflow run)

`build_trial` loads the config, checks it as a trial does (its values, the worlds of its parts, its prompts), builds
the components through gin and clears gin's config; `BuiltTrial.of(loaded)` builds from a config already loaded
(the trial itself, which logs gin's operative config afterwards). The parts are explicit: `policy`, `sampler`,
`schedule`, `reward` (the critic), `credit` (the router), `objective`, `evaluator` and `dataset`, the components
gin built, with `micro_batch` (rollouts per policy forward on one process, as the step splits them) and `noise`
(the trial's named random streams, training/seeding.py). Every part lives on the CPU until a trainer moves it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gin
import torch

from tvrl_bench import config as gin_config
from tvrl_bench.credit.base import CreditRouter
from tvrl_bench.policies.base import Policy
from tvrl_bench.prompts import PromptItem
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.evaluation import TrialEvaluation
from tvrl_bench.training.loop import Hooks, Trainer
from tvrl_bench.training.parallel.sharded_state import load_parameters
from tvrl_bench.training.parallel.sharding import ShardingSettings
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.seeding import generator
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.step.batch_split import BatchSplit
from tvrl_bench.training.ode import chunks, generate, ode_sample
from tvrl_bench.training.step.rollout import Sampled, roll_out
from tvrl_bench.training.scoring import Scores, score_videos
from tvrl_bench.training.trial.build import build_settings, build_sharding, locate_values
from tvrl_bench.training.trial.checks import check_prompts, check_values

__all__ = ["BuiltTrial", "Sampled", "Scores", "build_trainer", "build_trial", "build_trial_and_trainer"]


def build_trial(files: list[str | Path], bindings: list[str] | None = None, *,
                sharding: ShardingSettings | None = None, trains: bool = True) -> BuiltTrial:
    """The trial of config `files` and `bindings`, checked and built (see the module); gin's config is cleared
    afterwards. sharding: FSDP settings (default: the config's `training.sharding`). trains: False for a trial
    whose parts sample and score but never train (the critic card: settings only training reads are not checked).
    A config mistake is a ConfigError naming where it was bound."""
    loaded = gin_config.load_config([str(f) for f in files], list(bindings or []))
    try:
        return BuiltTrial.of(loaded, sharding, trains=trains)
    finally:
        gin.clear_config()


def _part(axis: str, doc: str) -> property:
    """A read-only view of the built component of `axis` (TrialSettings holds them)."""
    return property(lambda self: getattr(self.settings, axis), doc=doc)


def build_trainer(files: list[str | Path], bindings: list[str] | None, folder: str | Path, *,
                  credit: CreditRouter | None = None, cpu: bool = True, sharding: ShardingSettings | None = None,
                  progress: bool = False) -> Trainer:
    """The trainer of the trial of `files` and `bindings` (`build_trial(...).trainer(...)`), checkpointing to
    `folder`, with no MLflow run: what the scripts of diagnostics/ and benchmarks/ train and measure. The trainer is
    built while the config is loaded, as a trial's own is."""
    return build_trial_and_trainer(files, bindings, folder, credit=credit, cpu=cpu, sharding=sharding,
                                   progress=progress)[1]


def build_trial_and_trainer(files: list[str | Path], bindings: list[str] | None, folder: str | Path, *,
                            credit: CreditRouter | None = None, cpu: bool = True,
                            sharding: ShardingSettings | None = None,
                            progress: bool = False) -> tuple[BuiltTrial, Trainer]:
    """The built trial of `files` and `bindings` and its trainer (`build_trainer`'s), for a tool that samples or
    scores beside training."""
    loaded = gin_config.load_config([str(f) for f in files], list(bindings or []))
    try:
        trial = BuiltTrial.of(loaded, sharding)
        return trial, trial.trainer(folder, cpu=cpu, credit=credit, progress=progress)
    finally:
        gin.clear_config()


@dataclass
class BuiltTrial:
    """A built trial's parts (see the module): `settings` as gin built them, `loaded` (the config, so a mistake
    found later names where it was bound) and `sharding`."""

    settings: TrialSettings
    loaded: gin_config.LoadedConfig
    sharding: ShardingSettings

    @classmethod
    def of(cls, loaded: gin_config.LoadedConfig, sharding: ShardingSettings | None = None,
           values_checked: bool = False, trains: bool = True) -> BuiltTrial:
        """Check and build the trial of the config gin has loaded (`loaded`), leaving gin's config as it is;
        `values_checked`: the caller ran `check_values(loaded)` already (the trial does, before taking its lock);
        `trains`: as `build_trial`'s."""
        if not values_checked:
            check_values(loaded, trains=trains)  # before anything is built: a bad value costs a second
        sharding = sharding if sharding is not None else build_sharding(loaded)
        settings = build_settings(loaded)
        check_prompts(settings)
        return cls(settings, loaded, sharding)

    # -- the parts, as gin built them ------------------------------------------------------------------------
    policy = _part("policy", "the video generator (policies/): encode, velocity, decode, trainable parameters")
    sampler = _part("sampler", "one denoising step and its transition log-probability (samplers/)")
    schedule = _part("schedule", "the denoising schedule: noise levels, SDE window, trained steps")
    reward = _part("reward", "the critic (rewards/): check scores and their gradients")
    credit = _part("credit", "the credit router (credit/): per-token weights from the critic's gradients")
    objective = _part("objective", "group advantages and the policy-gradient loss (objectives/)")
    evaluator = _part("evaluator", "the metrics of generated videos (evaluators/)")
    dataset = _part("dataset", "the train and eval prompts with their checks (datasets/)")

    @property
    def micro_batch(self) -> int:
        """Rollouts per policy forward on one process: the step's own split (`training.trial.micro_batch`, at most
        a minibatch's rollouts), so a sample here chunks its forwards as training does."""
        s = self.settings
        return BatchSplit.of(s.prompts_per_step, s.group_size, s.minibatches, s.micro_batch, 1).micro_batch

    def noise(self, *names: Any, seed: int | None = None) -> torch.Generator:
        """The random stream `names` of this trial's seed (or `seed`): ("rollout", step, rank) is a step's rollout
        noise, ("eval",) the evaluation's, ("prompts", step) a step's prompt draw (training/seeding.py)."""
        return generator(self.settings.seed if seed is None else seed, *names)

    # -- what the tools do with them --------------------------------------------------------------------------
    def sample(self, prompts: list[str], noise: torch.Generator, group: int = 1, updates: int = 0,
               policy: Policy | None = None) -> Sampled:
        """Rollouts of `prompts` (B; consecutive groups of `group` share a prompt) sampled exactly as the training
        step samples them (its sampler, schedule, SDE window after `updates` optimizer updates, micro-batches):
        (cond, rollout, videos[B, F, 3, H, W]). policy: another policy sampled the same way (a copy being tuned)."""
        with torch.no_grad():
            return roll_out(policy or self.policy, self.sampler, self.schedule, prompts, noise, self.micro_batch,
                            group, updates=updates)

    def generate(self, prompts: list[str], noise: torch.Generator, policy: Policy | None = None) -> torch.Tensor:
        """Deterministic (ODE) samples as the trial's evaluation draws them: videos[B, F, 3, H, W] in [0, 1] (of
        `policy` when given)."""
        return generate(policy or self.policy, self.sampler, self.schedule, prompts, noise, self.micro_batch)

    def ode_sample(self, x: torch.Tensor, cond: Any) -> torch.Tensor:
        """The sampler's ODE limit from noise x[B, C, T, H, W] to clean latents x0[B, C, T, H, W], differentiable
        where the caller has gradients on."""
        return ode_sample(self.policy, self.sampler, self.schedule, x, cond, self.micro_batch)

    def micro_batches(self, count: int) -> list[slice]:
        """Consecutive slices of at most `micro_batch` covering range(count)."""
        return chunks(count, self.micro_batch)

    def score(self, videos: torch.Tensor, prompts: list[str], checks: list, need_grads: bool = False,
              space: str = "pixels") -> Scores:
        """The critic's scores[B, K] of videos[B, F, 3, H, W] as the step scores them, with gradient maps when
        `need_grads` (in `space`; the router's own: `credit.needs_grads`, `credit.grad_space`)."""
        return score_videos(self.reward, videos, prompts, [list(c) for c in checks], need_grads, space)

    def rewards_with_graph(self, videos: torch.Tensor, prompts: list[str], checks: list) -> torch.Tensor:
        """The critic's reward R[B] (mean of each prompt's check scores) with the autograd graph to the videos."""
        checks = [list(c) for c in checks]
        return Scores(self.reward.score(videos, prompts, checks), self.reward.score_mask(checks), None).rewards()

    def evaluate(self, videos: torch.Tensor, prompts: list[str], checks: list) -> tuple[dict[str, float], list]:
        """The trial's evaluator on videos[B, F, 3, H, W]: (metrics, one record per video)."""
        return self.evaluator.evaluate_detailed(videos, prompts, [tuple(c) for c in checks])

    def evaluation(self, items: list[PromptItem], policy: Policy | None = None) -> TrialEvaluation:
        """The trial's evaluation of `items` (fixed noise from the trial's seed), on the policy's device (of
        `policy` when given)."""
        policy = policy or self.policy
        return TrialEvaluation(self.settings, policy, items, self.micro_batch, next(policy.parameters()).device)

    def load_weights(self, checkpoint: str | Path | CheckpointDir | dict[str, Any]) -> int | None:
        """Load a trial checkpoint's trained parameters into the policy (a checkpoint folder, or a state it
        `load`ed); the step it was saved at, or None when the folder holds no state (an untrained base's).
        CheckpointError for a damaged state.pt."""
        saved = checkpoint if isinstance(checkpoint, dict) else (
            checkpoint if isinstance(checkpoint, CheckpointDir) else CheckpointDir(checkpoint)).load()
        if saved is None:
            return None
        with torch.no_grad():
            load_parameters(self.policy.trainable_parameters(), saved["parameters"])
        return int(saved["step"])

    def trainer(self, folder: str | Path | CheckpointDir, *, processes: Processes | None = None, cpu: bool = True,
                credit: CreditRouter | None = None, run_id: str | None = None, hooks: Hooks | None = None,
                progress: bool = False) -> Trainer:
        """The Trainer of this trial, checkpointing to `folder`. processes: the trial's processes (default: this
        one, on the CPU unless `cpu` is False). credit: another router to route every batch with. run_id and
        hooks: the MLflow run it reports to (none by default)."""
        processes = processes or Processes(cpu=cpu, sharding=self.sharding)
        checkpoints = folder if isinstance(folder, CheckpointDir) else CheckpointDir(folder)
        if credit is not None:
            self.settings.credit = credit  # before the trainer exists: it routes every batch with it
        try:  # the one place a Trainer is constructed
            return Trainer(self.settings, processes, checkpoints, run_id, hooks, progress, self.sharding)
        except ValueError as exc:  # values that do not fit together (batch splits, processes)
            raise gin_config.ConfigError(locate_values(self.loaded, str(exc))) from None
