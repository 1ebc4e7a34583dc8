"""Evaluating a trial's policy: deterministic ODE samples of the eval prompts, scored by the evaluator and by the
critic (so reward hacking, critic up and evaluator flat, shows)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch

from tvrl_bench.policies.base import Policy
from tvrl_bench.prompts import PromptItem
from tvrl_bench.training.eval_progress import EvalProgress
from tvrl_bench.training.false_yes import false_yes_counts, pooled_false_yes
from tvrl_bench.training.ode import chunks, generate
from tvrl_bench.training.scoring import Scores, score_videos
from tvrl_bench.training.seeding import generator
from tvrl_bench.training.settings import TrialSettings


# The wide evaluation's metrics are logged as wide_eval/<metric> at the final step, its prompt count as this tag.
WIDE_PREFIX = "wide_eval/"
WIDE_PROMPTS_TAG = "tvrl.wide_eval_prompts"
WIDE_RECORDS = "wide_eval/results.json"  # its per-video records, as eval/results.json holds the final eval's


@dataclass
class Evaluation:
    """What an evaluation returns: the evaluator's metrics plus `critic_reward`, its per-video records, and the
    first sample videos[n, F, 3, H, W] (n <= sample_videos) with their prompts."""

    metrics: dict[str, float]
    records: list[dict[str, Any]] = field(default_factory=list)
    samples: torch.Tensor | None = None
    sample_items: list[PromptItem] = field(default_factory=list)
    wide: WideEvaluation | None = None


@dataclass
class WideEvaluation:
    """The final policy scored on the wide held-out set: the evaluator's metrics plus `critic_reward`, over
    `prompts` prompts (`dropped` more were left out because the trial trained on their scene), and the
    evaluator's per-video records (logged as wide_eval/results.json: one-seed studies pair their prompts)."""

    metrics: dict[str, float]
    prompts: int
    dropped: int
    records: list[dict[str, Any]] = field(default_factory=list)


def wide_eval_items(settings: TrialSettings, prompts: int) -> tuple[list[PromptItem], int]:
    """The wide evaluation's prompts: the dataset's first `prompts` eval prompts drawn as if n_eval were `prompts`
    (starting with the trial's own eval prompts, in order), less the scenes the trial trained on; and how many were
    dropped. ValueError when the dataset cannot draw more prompts (`PromptSet.held_out` is None) or its world has
    fewer distinct scenes than `prompts`."""
    if settings.dataset.held_out is None:
        raise ValueError(f"dataset {settings.dataset.name!r} has a fixed eval split: it cannot draw {prompts} held-out prompts")
    kept, dropped = settings.dataset.held_out(prompts)
    return list(kept), dropped


class TrialEvaluation:
    """Generates and scores the eval prompts of one trial with fixed noise (generation seed = the trial's seed), so
    evaluations at different steps and of different methods pair up prompt by prompt."""

    def __init__(self, settings: TrialSettings, policy: Policy, items: list[PromptItem], micro_batch: int,
                 device: torch.device):
        self.s, self.policy, self.items = settings, policy, items
        self.micro_batch, self.device = micro_batch, device

    def generate(self, count: int) -> torch.Tensor:
        """ODE samples for the first `count` eval prompts: videos[count, F, 3, H, W] in [0, 1] (CPU)."""
        prompts = [it.prompt for it in self.items[:count]]
        return generate(self.policy, self.s.sampler, self.s.schedule, prompts, generator(self.s.seed, "eval"),
                        self.micro_batch).cpu()

    def chunk_videos(self) -> Iterator[tuple[slice, torch.Tensor]]:
        """Every eval prompt's ODE sample, chunk by chunk from one noise stream: (slice of items, videos[b, F, 3, H,
        W] on the CPU). The forwards of `full`; a sharded trial's other processes run them alongside."""
        g = generator(self.s.seed, "eval")
        for c in chunks(len(self.items), self.micro_batch):
            prompts = [it.prompt for it in self.items[c]]
            yield c, generate(self.policy, self.s.sampler, self.s.schedule, prompts, g, self.micro_batch).cpu()

    def subset_size(self) -> int:
        """How many eval prompts (the first ones) `subset` generates."""
        return len(self.items[: self.s.eval_subset or len(self.items)])

    def full(self, progress: Callable[[int], None] = lambda done: None) -> Evaluation:
        """Every eval prompt, generated batch by batch into the evaluator (which may stream them to disk);
        `progress(done)` after each batch, with the prompts generated and scored so far."""
        samples: list[torch.Tensor] = []
        critic: list[Scores] = []

        def batches():
            for c, videos in self.chunk_videos():
                items = self.items[c]
                prompts = [it.prompt for it in items]
                samples.extend(videos[: max(0, self.s.sample_videos - c.start)])
                checks = [it.checks for it in items]
                critic.append(self.critic_scores(videos, prompts, checks))
                yield videos, prompts, checks
                progress(c.stop)

        metrics, records = self.s.evaluator.evaluate_batches(batches())
        metrics.update(self.critic_metrics(critic, records))
        stacked = torch.stack(samples) if samples else None
        return Evaluation(metrics, records, stacked, self.items[: len(samples)])

    def full_shown(self, what: str, bar: bool) -> Evaluation:
        """`full()` showing its progress (`what`: "wide evaluation of 626 held-out prompts"): a bar, or log lines
        without one (training/eval_progress.py)."""
        progress = EvalProgress(what, len(self.items), bar)
        try:
            return self.full(progress)
        finally:
            progress.close()

    def subset(self) -> dict[str, float]:
        """The evaluator's metrics and the critic's mean reward (`critic_reward`) on the first eval_subset eval
        prompts, generated with the same fixed noise as the full evaluation."""
        items = self.items[: self.subset_size()]
        prompts, checks = [it.prompt for it in items], [it.checks for it in items]
        videos = self.generate(len(items))
        metrics, records = self.s.evaluator.evaluate_detailed(videos, prompts, checks)
        return {**metrics, **self.critic_metrics([self.critic_scores(videos, prompts, checks)], records)}

    def critic_metrics(self, scored: list[Scores], records: list[dict[str, Any]]) -> dict[str, float]:
        """`critic_reward` (the critic's mean reward) and, where it can be read, `critic_false_yes`
        (training/false_yes.py) of videos scored batch by batch (`scored`, in order) against the evaluator's
        per-video records."""
        metrics = {"critic_reward": float(torch.cat([batch.rewards() for batch in scored]).mean())}
        if getattr(self.s.reward, "uses_checks", True):
            counts, start = [], 0
            for batch in scored:
                end = start + batch.scores.shape[0]
                counts.append(false_yes_counts(batch.scores, batch.mask, records[start:end]))
                start = end
            rate = pooled_false_yes(counts) if start == len(records) else None
            if rate is not None:
                metrics["critic_false_yes"] = rate
        return metrics

    def critic_scores(self, videos: torch.Tensor, prompts: list[str], checks: list) -> Scores:
        """The critic's check scores of videos[B, F, 3, H, W] (no gradients): scores[B, K], mask[B, K]."""
        return score_videos(self.s.reward, videos.to(self.device), prompts, [list(c) for c in checks],
                            need_grads=False)
