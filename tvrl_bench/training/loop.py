"""The trial loop: rollouts -> decode -> critic scores (+ gradients) -> advantages and credit -> policy update.

One step (ARCHITECTURE.md): the step's prompts (the same on every process, each process taking its share) are
encoded and sampled group_size times with the SDE sampler, keeping per-token old log-probs; videos are decoded
and scored by the critic in one batched forward (and one backward to the pixels when the router needs it);
rewards are gathered across processes for group advantages; the router turns gradients into token weights; the
objective is backpropagated through every trained transition; gradients are averaged across processes, clipped,
and the optimizer steps. The trainer only talks to components through their contracts.
"""

from __future__ import annotations

import hashlib
import logging
import math
import signal
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from tqdm import tqdm

from tvrl_bench.credit.stats import credit_entropy
from tvrl_bench.objectives.advantages import group_advantages
from tvrl_bench.training import diagnostics
from tvrl_bench.prompts import PromptItem
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.consistency import check_schedule_shift
from tvrl_bench.training.optimizers import OptimizerChoice
from tvrl_bench.training.distributed import Processes
from tvrl_bench.training.rollout import chunks, generate, sample_rollouts
from tvrl_bench.training.rollout import Rollout
from tvrl_bench.training.scoring import Scores, score_videos
from tvrl_bench.training.seeding import generator
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.anchor import accumulate_anchor_gradient
from tvrl_bench.training.update import accumulate_policy_gradient


log = logging.getLogger("tvrl_bench.trial")


class TrialFailed(RuntimeError):
    """The trial cannot go on (a non-finite reward, loss or gradient); its checkpoint is kept."""


class StopRequested(KeyboardInterrupt):
    """SIGTERM/SIGINT arrived; the loop stopped at a step boundary after saving a checkpoint."""


@dataclass
class StepOutput:
    metrics: dict[str, float]
    video: torch.Tensor  # first rollout's video [F, 3, H, W]
    weights: torch.Tensor  # its credit map [T', H', W']
    prompt: str


@dataclass
class Hooks:
    """What the loop reports to (the main process's tracker): metrics, media, checkpoints."""

    on_step: Callable[[int, StepOutput], None] = lambda step, out: None
    on_samples: Callable[[str, torch.Tensor, list[PromptItem]], None] = lambda tag, videos, items: None
    on_eval: Callable[[int, dict[str, float]], None] = lambda step, metrics: None
    extra_state: dict[str, Any] = field(default_factory=dict)


@dataclass
class StepBatch:
    """What one step collects before any update: B = this process's rollouts.

    prompts[B], checks[B], cond (the policy's encoding), rollout, video[B, F, 3, H, W], scored (scores[B, K], mask,
    grads), all_rewards[B_all] and all_groups[B_all] (every process; rollouts of a prompt share a group id),
    all_advantages[B_all], advantages[B] (this process's, as the loss uses them), weight_maps[B, T', H', W']
    (credit, mean 1 per rollout), step (the optimizer step it was collected for).
    """

    prompts: list[str]
    checks: list[list[str]]
    cond: Any
    rollout: Rollout
    video: torch.Tensor
    scored: Scores
    all_rewards: torch.Tensor
    all_groups: torch.Tensor
    all_advantages: torch.Tensor
    advantages: torch.Tensor
    weight_maps: torch.Tensor
    train_weights: torch.Tensor | None = None  # [B, K, N] per-check maps (zero for missing checks) when asked
    step: int = 0


class Trainer:
    """Runs the steps of one trial on this process."""

    def __init__(self, settings: TrialSettings, processes: Processes, checkpoints: CheckpointDir, run_id: str | None, hooks: Hooks | None = None, progress: bool = True):
        self.s = settings
        self.processes = processes
        self.checkpoints = checkpoints
        self.run_id = run_id
        self.hooks = hooks or Hooks()
        self.progress = progress and processes.is_main
        self.policy = settings.policy.to(processes.device)
        settings.reward.to(processes.device)
        self.parameters = self.policy.trainable_parameters()
        self.optimizer = (settings.optimizer or OptimizerChoice()).build(
            self.parameters, settings.learning_rate, settings.betas, settings.weight_decay
        )
        settings.objective.bind(self.parameters)
        if settings.objective.kl_beta > 0 and settings.objective.policy_reference:
            self.policy.keep_reference()  # now, before any checkpoint is loaded: a resumed trial keeps it
        if settings.prompts_per_step % processes.world:
            raise ValueError(
                f"training.trial.prompts_per_step = {settings.prompts_per_step} must be divisible by the "
                f"{processes.world} processes"
            )
        self.local_prompts = settings.prompts_per_step // processes.world
        self.local_rollouts = self.local_prompts * settings.group_size
        if self.local_rollouts % settings.minibatches:
            raise ValueError(
                f"training.trial.minibatches = {settings.minibatches} must divide the {self.local_rollouts} rollouts "
                "of a step on each process"
            )
        rows = self.local_rollouts // settings.minibatches
        self.micro_batch = min(settings.micro_batch, rows)
        if rows % self.micro_batch:
            raise ValueError(
                f"training.trial.micro_batch = {settings.micro_batch} must divide the {rows} rollouts of a minibatch "
                "(sampling and training must split rollouts the same way for the ratio to start at exactly 1)"
            )
        check_schedule_shift(settings.schedule, self.policy)
        self.balance = settings.schedule.balance_factors(settings.sampler)
        self.train_items = list(settings.dataset.train)
        self.eval_items = list(settings.dataset.eval)[: settings.eval_prompts]
        if not self.train_items or not self.eval_items:
            raise ValueError(f"dataset {settings.dataset.name!r} has no train or no eval prompts")
        self._stop = False

    # -- state ------------------------------------------------------------------------------------------------
    def state(self) -> dict[str, torch.Tensor]:
        return {str(i): p.detach().cpu().clone() for i, p in enumerate(self.parameters)}

    def load_state(self, saved: dict[str, Any]) -> int:
        with torch.no_grad():
            for i, p in enumerate(self.parameters):
                p.copy_(saved["parameters"][str(i)].to(p.device))
        self.optimizer.load_state_dict(saved["optimizer"])
        self.s.credit.load_state_dict(saved["extra"].get("credit", {}))
        self.s.objective.load_state_dict(saved["extra"].get("objective", {}))
        return int(saved["step"])

    def save(self, step: int) -> None:
        if self.processes.is_main:
            extra = {"credit": self.s.credit.state_dict(), "objective": self.s.objective.state_dict()}
            self.checkpoints.save(step, self.run_id, self.state(), self.optimizer, extra)
        self.processes.barrier()

    # -- one step ---------------------------------------------------------------------------------------------
    def step_items(self, step: int) -> tuple[list[PromptItem], torch.Tensor]:
        """This process's prompts for `step` and their global group ids (identical draws on every process)."""
        g = generator(self.s.seed, "prompts", step)
        n = self.s.prompts_per_step
        if n <= len(self.train_items):
            picks = torch.randperm(len(self.train_items), generator=g)[:n]
        else:
            picks = torch.randint(len(self.train_items), (n,), generator=g)
        start = self.processes.rank * self.local_prompts
        ids = list(range(start, start + self.local_prompts))
        return [self.train_items[int(picks[i])] for i in ids], torch.tensor(ids)

    def collect(self, step: int) -> StepBatch:
        """Roll out, decode and score the step's prompts; advantages and credit maps (no gradient to the policy)."""
        s, device = self.s, self.processes.device
        items, group_ids = self.step_items(step)
        prompts = [it.prompt for it in items for _ in range(s.group_size)]
        checks = [list(it.checks) for it in items for _ in range(s.group_size)]
        groups = group_ids.repeat_interleave(s.group_size)
        cond = self.policy.encode(prompts)
        rollout = sample_rollouts(
            self.policy, s.sampler, s.schedule, cond, len(prompts),
            generator(s.seed, "rollout", step, self.processes.rank), self.micro_batch,
        )
        with torch.no_grad():
            video = torch.cat([self.policy.decode(rollout.final[c]) for c in chunks(len(prompts), self.micro_batch)])
        scored = score_videos(s.reward, video, prompts, checks, need_grads=s.credit.needs_grads,
                              space=s.credit.grad_space)
        all_rewards = self.processes.gather(scored.rewards().to(torch.float32).to(device))
        if not torch.isfinite(all_rewards).all():
            raise TrialFailed(f"step {step}: the critic returned a non-finite reward ({all_rewards.tolist()})")
        all_groups = self.processes.gather(groups.to(device)).cpu()
        all_advantages = group_advantages(all_rewards.cpu(), all_groups, s.advantage_std, s.advantage_eps, s.advantage_clip)
        all_advantages = s.objective.step_advantages(all_advantages, generator(s.seed, "advantages", step), all_groups)
        mine = slice(self.processes.rank * len(prompts), (self.processes.rank + 1) * len(prompts))
        if s.objective.per_check_advantages:  # one advantage per (rollout, check) [B, K]
            all_advantages = s.objective.check_advantages(
                self.processes.gather(scored.scores.to(torch.float32).to(device)).cpu(), all_groups,
                self.processes.gather(scored.mask.to(device)).cpu(),
            )
        weight_maps = s.credit(scored.grads, video, self.policy.token_grid, scored.mask).to(device)
        train_weights = None
        if s.objective.per_check_weights:  # one map per check for one ratio per check
            maps = s.credit.per_check(scored.grads, video, self.policy.token_grid, scored.mask).to(device)
            if maps.shape[1] == scored.mask.shape[1]:
                maps = maps * scored.mask.to(maps)[..., None, None, None]
            train_weights = maps.reshape(len(prompts), maps.shape[1], -1)
        return StepBatch(prompts, checks, cond, rollout, video, scored, all_rewards, all_groups,
                         all_advantages, all_advantages[mine].to(device), weight_maps, train_weights, step)

    def policy_gradient(self, batch: StepBatch, minibatch: int) -> dict[str, float]:
        """Accumulate the objective's gradient over one minibatch of the batch's rollouts (no optimizer step)."""
        s, device = self.s, self.processes.device
        rows_per = len(batch.prompts) // s.minibatches
        rows = torch.arange(minibatch * rows_per, (minibatch + 1) * rows_per, device=device)
        stats = accumulate_policy_gradient(
            self.policy, s.sampler, s.objective, batch.rollout, batch.cond, rows, batch.advantages,
            batch.weight_maps.reshape(len(batch.prompts), -1) if batch.train_weights is None else batch.train_weights,
            self.micro_batch,
            check_ratio_tolerance=s.ratio_tolerance if minibatch == 0 else None, balance=self.balance,
        )
        if s.anchor_weight > 0:
            stats["anchor"] = accumulate_anchor_gradient(
                self.policy, batch.rollout, batch.cond, rows, s.anchor_weight, self.micro_batch,
                generator(s.seed, "anchor", batch.step, minibatch, self.processes.rank),
            )
        return stats

    def step(self, step: int) -> StepOutput:
        s, device = self.s, self.processes.device
        started = time.perf_counter()
        batch = self.collect(step)
        totals: dict[str, float] = {}
        grad_norms = []
        for m in range(s.minibatches):
            stats = self.policy_gradient(batch, m)
            if not math.isfinite(stats["loss"]):
                raise TrialFailed(f"step {step}: non-finite loss {stats['loss']}")
            self.processes.average_gradients(self.parameters)
            norm = torch.nn.utils.clip_grad_norm_(self.parameters, s.max_grad_norm)
            if not torch.isfinite(norm):
                raise TrialFailed(f"step {step}: non-finite gradient norm")
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            s.objective.after_update(stats)  # e.g. an adaptive KL coefficient, a moving reference's refresh
            grad_norms.append(float(norm))
            for k, v in stats.items():
                totals[k] = totals.get(k, 0.0) + v / s.minibatches
        entropy = self.processes.gather(credit_entropy(batch.weight_maps).to(device))
        metrics = {
            "train/reward_mean": float(batch.all_rewards.mean()),
            "train/reward_std": float(batch.all_rewards.std(unbiased=False)),
            "train/loss": totals["loss"],
            "train/ratio_mean": totals["ratio_mean"],
            "train/clipfrac": totals["clipfrac"],
            "train/approx_kl": totals["approx_kl"],
            "train/grad_norm": sum(grad_norms) / len(grad_norms),
            "train/credit_entropy": float(entropy.mean()),
            "train/advantage_abs": float(batch.all_advantages.abs().mean()),
            **diagnostics.group_spread(batch.all_rewards.cpu(), batch.all_groups),
            **diagnostics.reward_per_kind(batch.scored.scores.cpu(), batch.checks),
            "time/step_s": time.perf_counter() - started,
        }
        if s.reward.floor_score is not None:
            metrics["train/floor_fraction"] = diagnostics.floor_fraction(batch.scored.scores, batch.scored.mask, s.reward.floor_score)
        if "kl" in totals:
            metrics["train/kl"] = totals["kl"]
        for name in ("kl_coef", "kl_moving", "kl_stepwise", "anchor"):
            if name in totals:
                metrics[f"train/{name}"] = totals[name]
        return StepOutput(metrics, batch.video[0].cpu(), batch.weight_maps[0].cpu(), batch.prompts[0])

    # -- the loop ---------------------------------------------------------------------------------------------
    def generate_eval(self, count: int) -> torch.Tensor:
        """ODE samples for the first `count` eval prompts with the generation seed: videos[count, F, 3, H, W]."""
        prompts = [it.prompt for it in self.eval_items[:count]]
        return generate(self.policy, self.s.schedule, prompts, generator(self.s.seed, "eval"), self.micro_batch).cpu()

    def run(self, start_step: int = 0) -> dict[str, float]:
        """Train from `start_step` to `steps`, then evaluate; returns the final eval metrics (main process)."""
        s = self.s
        previous = {sig: signal.signal(sig, self._request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            if start_step == 0 and self.processes.is_main and s.sample_videos:
                self.hooks.on_samples("start", self.generate_eval(s.sample_videos), self.eval_items[: s.sample_videos])
            # before training (a base run, with no steps, has only its final evaluation)
            if start_step == 0 and s.eval_every and s.steps and self.processes.is_main:
                self.hooks.on_eval(0, self.evaluate_subset())
            bar = tqdm(range(start_step, s.steps), total=s.steps, initial=start_step, desc="train", disable=not self.progress, unit="step")
            for step in bar:
                try:
                    out = self.step(step)
                except TrialFailed:
                    self.save(step)  # the weights as they were when the step failed
                    raise
                if self.processes.is_main:
                    self.hooks.on_step(step, out)
                bar.set_postfix(reward=f"{out.metrics['train/reward_mean']:.3f}", s=f"{out.metrics['time/step_s']:.2f}")
                done = step + 1
                if s.eval_every and done % s.eval_every == 0 and done < s.steps and self.processes.is_main:
                    self.hooks.on_eval(done, self.evaluate_subset())
                if done % s.checkpoint_every == 0 or done == s.steps or self._stop:
                    self.save(done)
                if self._stop:
                    raise StopRequested(f"stopped by a signal after step {done}; checkpoint saved")
            self.log_parameter_digest()
            return self.evaluate() if self.processes.is_main else {}
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def log_parameter_digest(self) -> None:
        """Log a hash of the trained parameters per process (all processes must end with the same weights)."""
        digest = hashlib.sha256()
        for p in self.parameters:
            digest.update(p.detach().cpu().contiguous().numpy().tobytes())
        log.info("rank %d/%d final parameters sha256=%s", self.processes.rank, self.processes.world, digest.hexdigest()[:16])

    def evaluate(self) -> dict[str, float]:
        """Generate the eval set batch by batch into the evaluator (which may stream them to disk)."""
        g = generator(self.s.seed, "eval")
        final_samples: list[torch.Tensor] = []

        def batches():
            for c in chunks(len(self.eval_items), self.micro_batch):
                items = self.eval_items[c]
                prompts = [it.prompt for it in items]
                videos = generate(self.policy, self.s.schedule, prompts, g, self.micro_batch).cpu()
                final_samples.extend(videos[: max(0, self.s.sample_videos - c.start)])
                yield videos, prompts, [it.checks for it in items]

        critic: list[torch.Tensor] = []

        def scored_batches():
            for videos, prompts, checks in batches():
                critic.append(self.critic_rewards(videos, prompts, checks))
                yield videos, prompts, checks

        metrics, raw = self.s.evaluator.evaluate_batches(scored_batches())
        metrics["critic_reward"] = float(torch.cat(critic).mean())
        if final_samples:
            self.hooks.on_samples("final", torch.stack(final_samples), self.eval_items[: len(final_samples)])
        self.last_raw = raw
        return metrics

    def evaluate_subset(self) -> dict[str, float]:
        """The evaluator's metrics and the critic's mean reward (`critic_reward`) on the first eval_subset eval
        prompts, generated with the same fixed noise as the final evaluation (so curves and methods pair up)."""
        items = self.eval_items[: self.s.eval_subset or len(self.eval_items)]
        prompts, checks = [it.prompt for it in items], [it.checks for it in items]
        videos = generate(self.policy, self.s.schedule, prompts, generator(self.s.seed, "eval"), self.micro_batch).cpu()
        metrics = self.s.evaluator.evaluate(videos, prompts, checks)
        return {**metrics, "critic_reward": float(self.critic_rewards(videos, prompts, checks).mean())}

    def critic_rewards(self, videos: torch.Tensor, prompts: list[str], checks: list) -> torch.Tensor:
        """The critic's reward R_i[B] of videos[B, F, 3, H, W] (no gradients)."""
        device = self.processes.device
        return score_videos(self.s.reward, videos.to(device), prompts, [list(c) for c in checks], need_grads=False).rewards().cpu()

    def _request_stop(self, signum: int, frame: Any) -> None:
        if self._stop:
            raise KeyboardInterrupt
        self._stop = True
