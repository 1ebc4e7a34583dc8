"""The trial loop: rollouts -> decode -> critic scores (+ gradients) -> advantages and credit -> policy update.

One step (docs/architecture.md): the step's prompts (the same on every process, each process taking its share) are
encoded and sampled group_size times with the SDE sampler, keeping per-token old log-probs; videos are decoded and
scored by the critic in one batched forward (and one backward to the pixels when the router needs it); rewards are
gathered across processes for group advantages; the router turns gradients into token weights; the objective is
backpropagated through every trained transition; gradients are averaged across processes, clipped, and the optimizer
steps. The trainer only talks to components through their contracts.

With `training.sharding` (training/parallel/sharding.py) the policy's transformer is sharded over the processes
before the optimizer is built: checkpoints hold the gathered full state (training/parallel/sharded_state.py), and
every process takes part in the forwards of an evaluation the main process scores and logs
(training/parallel/sharded_eval.py).
"""

from __future__ import annotations

import logging
import math
import signal
import time
from typing import Any

import torch
from tqdm import tqdm

from tvrl_bench.credit.stats import credit_entropy
from tvrl_bench.prompts import PromptItem
from tvrl_bench.training.consistency import check_schedule_shift
from tvrl_bench.training.evaluation import Evaluation, TrialEvaluation, WideEvaluation, wide_eval_items
from tvrl_bench.training.parallel import sharded_eval
from tvrl_bench.training.processes import Processes
from tvrl_bench.training.parallel.sharded_state import (clip_grad_norm, gather_tree, load_parameters,
                                                        parameter_digest, shard_optimizer_state, shard_tree)
from tvrl_bench.training.parallel.sharding import ShardingSettings, shard_policy
from tvrl_bench.training.reporting import Hooks, StepOutput
from tvrl_bench.training.seeding import generator
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.step.anchor import accumulate_anchor_gradient
from tvrl_bench.training.step.batch_split import BatchSplit
from tvrl_bench.training.step.collect import StepBatch, TrialFailed, collect_batch, keeps_rollout_graph
from tvrl_bench.training.step.metrics import step_metrics
from tvrl_bench.training.step.objective_pass import accumulate_objective_gradient
from tvrl_bench.training.checkpoint import CheckpointDir

__all__ = ["Hooks", "StepBatch", "StepOutput", "StopRequested", "Trainer", "TrialFailed"]

log = logging.getLogger("tvrl_bench.trial")


class StopRequested(KeyboardInterrupt):
    """SIGTERM/SIGINT arrived; the loop stopped at a step boundary after saving a checkpoint."""


class Trainer:
    """Runs the steps of one trial on this process."""

    def __init__(self, settings: TrialSettings, processes: Processes, checkpoints: CheckpointDir, run_id: str | None,
                 hooks: Hooks | None = None, progress: bool = True, sharding: ShardingSettings | None = None):
        self.s = settings
        self.processes = processes
        self.checkpoints = checkpoints
        self.run_id = run_id
        self.hooks = hooks or Hooks()
        self.progress = progress and processes.is_main
        self.policy = settings.policy.to(processes.device)
        settings.reward.to(processes.device)
        self.sharded = shard_policy(self.policy, sharding, processes)  # before the optimizer sees the parameters
        self.parameters = self.policy.trainable_parameters()
        self.optimizer = settings.optimizer.build(self.parameters)
        reference = settings.objective.reference  # the KL term's reference policy; None without one
        for copy in (reference, settings.objective.old):  # a matching objective's old policy is bound alike
            if copy is not None:
                copy.bind(self.parameters)
        if (reference is not None and reference.keeps_policy_copy) or settings.anchor_weight > 0:
            self.policy.keep_reference()  # now, before any checkpoint is loaded: a resumed trial keeps it
        split = BatchSplit.of(settings.prompts_per_step, settings.group_size, settings.minibatches,
                              settings.micro_batch, processes.world)
        self.local_prompts, self.micro_batch = split.prompts, split.micro_batch
        check_schedule_shift(settings.schedule, self.policy)
        self.balance = settings.schedule.balance_factors(settings.sampler)
        self.train_items = list(settings.dataset.train)
        self.eval_items = list(settings.dataset.eval)[: settings.eval_prompts]
        if not self.train_items or not self.eval_items:
            raise ValueError(f"dataset {settings.dataset.name!r} has no train or no eval prompts")
        self.evaluation = TrialEvaluation(settings, self.policy, self.eval_items, self.micro_batch, processes.device)
        # The wide held-out set of the final evaluation (none when wide_eval_prompts is 0); drawn now, while the
        # trial's config is loaded.
        wide_items, self.wide_dropped = wide_eval_items(settings, settings.wide_eval_prompts) if settings.wide_eval_prompts else ([], 0)
        self.wide_evaluation = TrialEvaluation(settings, self.policy, wide_items, self.micro_batch, processes.device)
        self._stop = False

    # -- state ------------------------------------------------------------------------------------------------
    def state(self) -> dict[str, torch.Tensor]:
        """The full trainable parameters {str(i): tensor} on the CPU (gathered when sharded: collective, and only
        the main process gets them)."""
        return gather_tree({str(i): p for i, p in enumerate(self.parameters)}, keep=self.processes.is_main)

    def load_state(self, saved: dict[str, Any]) -> int:
        load_parameters(self.parameters, saved["parameters"])
        optimizer = saved["optimizer"]
        objective = saved["extra"].get("objective", {})
        if self.sharded:  # full tensors sliced into this process's shards
            optimizer = shard_optimizer_state(self.optimizer, optimizer)
            objective = shard_tree(objective, self.s.objective.state_dict())
        self.optimizer.load_state_dict(optimizer)
        self.s.credit.load_state_dict(saved["extra"].get("credit", {}))
        self.s.objective.load_state_dict(objective)
        return int(saved["step"])

    def save(self, step: int) -> None:
        main = self.processes.is_main
        if self.sharded or main:  # gathering sharded state is collective
            extra = {"credit": self.s.credit.state_dict(), "objective": self.s.objective.state_dict()}
            optimizer = gather_tree(self.optimizer.state_dict(), main) if self.sharded else self.optimizer
            parameters, extra = self.state(), gather_tree(extra, main) if self.sharded else extra
            if main:
                self.checkpoints.save(step, self.run_id, parameters, optimizer, extra)
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

    def collect(self, step: int, keep_graph: bool | None = None) -> StepBatch:
        """Roll out, decode and score the step's prompts; advantages and credit maps (no gradient to the policy).
        keep_graph: whether the rollout keeps its trained steps' graphs (default: as the trial keeps them)."""
        items, group_ids = self.step_items(step)
        keep = keeps_rollout_graph(self.s, self.sharded) if keep_graph is None else keep_graph
        return collect_batch(self.s, self.policy, self.processes, items, group_ids, self.micro_batch, step, keep)

    def policy_gradient(self, batch: StepBatch, minibatch: int) -> dict[str, float]:
        """Accumulate the objective's gradient over one minibatch of the batch's rollouts (no optimizer step)."""
        s, device = self.s, self.processes.device
        rows_per = len(batch.prompts) // s.minibatches
        rows = torch.arange(minibatch * rows_per, (minibatch + 1) * rows_per, device=device)
        stats = accumulate_objective_gradient(s, self.policy, self.processes, batch, rows, minibatch,
                                              self.micro_batch, self.balance)
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
            if self.processes.any(not math.isfinite(stats["loss"])):  # every process stops, and saves, together
                raise TrialFailed(f"step {step}: non-finite loss {stats['loss']} (on this process or another)")
            self.processes.average_gradients(self.parameters)
            norm = clip_grad_norm(self.parameters, s.max_grad_norm)
            if not torch.isfinite(norm):
                raise TrialFailed(f"step {step}: non-finite gradient norm")
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            s.objective.after_update(stats)  # e.g. an adaptive KL coefficient, a moving reference's refresh
            grad_norms.append(float(norm))
            for k, v in stats.items():
                totals[k] = totals.get(k, 0.0) + v / s.minibatches
        entropy = self.processes.gather(credit_entropy(batch.weights.merged).to(device))
        metrics = step_metrics(s, batch, totals, grad_norms, entropy, time.perf_counter() - started)
        return StepOutput(metrics, batch.video[0].cpu(), batch.weights.merged[0].cpu(), batch.prompts[0])

    # -- the loop ---------------------------------------------------------------------------------------------
    def run(self, start_step: int = 0) -> Evaluation | None:
        """Train from `start_step` to `steps`, then evaluate; returns the final evaluation (main process; None
        on the others)."""
        s, main = self.s, self.processes.is_main
        previous = {sig: signal.signal(sig, self._request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            if start_step == 0 and s.sample_videos:
                if main:
                    self.hooks.on_samples("start", self.evaluation.generate(s.sample_videos), self.eval_items[: s.sample_videos])
                elif self.sharded:
                    sharded_eval.samples_alongside(self.evaluation, s.sample_videos)
            # before training (a base run, with no steps, has only its final evaluation)
            if start_step == 0 and s.eval_every and s.steps:
                self.evaluate_subset(0)
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
                if s.eval_every and done % s.eval_every == 0 and done < s.steps:
                    self.evaluate_subset(done)
                stop = self.processes.any(self._stop)  # a signal may have reached some processes only
                if done % s.checkpoint_every == 0 or done == s.steps or stop:
                    self.save(done)
                if stop:
                    raise StopRequested(f"stopped by a signal after step {done}; checkpoint saved")
            self.log_parameter_digest()
            wide = bool(self.wide_evaluation.items)
            if not main:
                if self.sharded:
                    sharded_eval.full_alongside(self.evaluation)
                    if wide:
                        sharded_eval.full_alongside(self.wide_evaluation)
                return None
            result = self.evaluation.full_shown(f"final evaluation of {len(self.eval_items)} eval prompts", self.progress)
            if wide:
                count = len(self.wide_evaluation.items)
                scored = self.wide_evaluation.full_shown(f"wide evaluation of {count} held-out prompts "
                                                         f"({self.wide_dropped} trained scenes left out)", self.progress)
                result.wide = WideEvaluation(scored.metrics, count, self.wide_dropped, scored.records)
            if result.samples is not None:
                self.hooks.on_samples("final", result.samples, result.sample_items)
            return result
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def evaluate_subset(self, step: int) -> None:
        """The evaluation during training at `step`: logged by the main process (every process generates when
        the policy is sharded)."""
        if self.processes.is_main:
            self.hooks.on_eval(step, self.evaluation.subset())
        elif self.sharded:
            sharded_eval.subset_alongside(self.evaluation)

    def log_parameter_digest(self) -> None:
        """Log a hash of the trained parameters per process (all processes must end with the same weights; sharded
        ones are gathered first)."""
        log.info("rank %d/%d final parameters sha256=%s", self.processes.rank, self.processes.world,
                 parameter_digest(self.parameters))

    def _request_stop(self, signum: int, frame: Any) -> None:
        if self._stop:
            raise KeyboardInterrupt
        self._stop = True
