"""The critic card's measurements (`tvrl-bench critic-card`): rollouts sampled as training samples them (by the
built trial, training/trial/built.py), and one critic's agreement, calibration, map locality and speed on them.

Definitions (docs/toy/critics.md):
- a critic's 0-1 reading: p(Yes) for an answer critic (exp of a log-probability), the score itself for a scalar
  scorer that declares `score_range = (0, 1)` (evaluators/critic_quality.py `yes_probability`);
- agreement: an answer critic's p(Yes) > 0.5 against the evaluator's verdict, per check (and per slot); a scalar
  scorer's score rounded to the nearest 1/K against the evaluator's overall (the share of the K checks passed);
- ranking: over pairs of rollouts of one prompt that the evaluator's overall tells apart, the share the critic's
  reward (mean of its scores) orders the same way (what group-relative advantages read);
- ECE: expected calibration error (10 bins) of the 0-1 reading against the verdict (answer critics) or the
  overall (scalar scorer);
- locality: an answer critic's share of |d score_k / d pixels| inside check k's slot (mean over checks; the slot is
  1/K of the frame); a scalar scorer's share of |d score / d pixels| inside the slots whose checks fail, over videos
  with some checks failing and some passing (`area` gives those slots' share of the frame, the uniform baseline);
- seconds per video: one forward and input gradient of every check of `timing_videos` videos, divided by them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from tvrl_bench.evaluators.critic_quality import agreement, expected_calibration_error, mass_inside, yes_probability
from tvrl_bench.world.checks import parse_check
from tvrl_bench.world.slots import slot_box


@dataclass
class RolloutSet:
    """Videos[B, F, 3, H, W] of one policy and noise seed, their prompts and checks, and the evaluator's verdicts
    passed[B, K] (bool; False beyond a prompt's checks, where mask is False)."""

    policy: str
    seed: int
    group: int
    videos: torch.Tensor
    prompts: list[str]
    checks: list[list[str]]
    passed: torch.Tensor
    mask: torch.Tensor

    @property
    def overall(self) -> torch.Tensor:
        """[B] share of each prompt's checks passed."""
        return (self.passed & self.mask).sum(1).float() / self.mask.sum(1).clamp_min(1).float()


def sample_set(trial, policy_name: str, seed: int, prompts: int, group: int) -> RolloutSet:
    """`prompts` training prompts x `group` rollouts of the built trial's policy, sampled exactly as its training
    step samples them (`BuiltTrial.sample`: its sampler, schedule and micro-batch; the step-0 rollout noise of
    `seed`), with its evaluator's verdicts."""
    items = list(trial.dataset.train)[:prompts]
    texts = [it.prompt for it in items for _ in range(group)]
    checks = [list(it.checks) for it in items for _ in range(group)]
    videos = trial.sample(texts, trial.noise("rollout", 0, 0, seed=seed), group=group).videos
    _, records = trial.evaluate(videos, texts, checks)
    k = max(len(c) for c in checks)
    passed = torch.zeros(len(texts), k, dtype=torch.bool)
    mask = torch.zeros(len(texts), k, dtype=torch.bool)
    for i, record in enumerate(records):
        for j, check in enumerate(record["checks"]):
            passed[i, j], mask[i, j] = bool(check["passed"]), True
    return RolloutSet(policy_name, seed, group, videos.float(), texts, checks, passed, mask)


def slot_boxes(checks: list[str], height: int, width: int) -> list[tuple[int, int, int, int] | None]:
    """The pixel box of each check's slot (None for a check that names no slot)."""
    out = []
    for text in checks:
        spec = parse_check(text)
        out.append(slot_box(spec.slot, height, width) if spec.slot else None)
    return out


def ranking(rewards: torch.Tensor, overall: torch.Tensor, group: int) -> float:
    """Share of same-prompt rollout pairs with different overall that the critic's rewards order alike."""
    same, total = 0, 0
    for start in range(0, len(rewards), group):
        r, o = rewards[start:start + group], overall[start:start + group]
        for i in range(len(r)):
            for j in range(i + 1, len(r)):
                if o[i] != o[j]:
                    total += 1
                    same += int(bool((r[i] - r[j]) * (o[i] - o[j]) > 0))
    return same / total if total else float("nan")


def measure(critic, rollouts: RolloutSet) -> dict[str, float]:
    """One critic (the built trial whose `reward` it is) on one rollout set: the card's figures (see the module
    docstring), NaN where they do not apply."""
    reward = critic.reward
    grads = "pixels" in reward.grad_spaces
    scored = critic.score(rollouts.videos, rollouts.prompts, rollouts.checks, need_grads=grads)
    p = yes_probability(scored.scores.cpu(), reward.score_space, getattr(reward, "score_range", None))
    h, w = rollouts.videos.shape[-2:]
    out = {"critic_mean": float("nan"), "agreement": float("nan"), "ece": float("nan"), "locality": float("nan"),
           "locality_baseline": float("nan"), "evaluator_mean": float(rollouts.overall.mean()),
           "ranking": ranking(scored.rewards().cpu(), rollouts.overall, rollouts.group)}
    if p is None:
        return out
    if reward.uses_checks:
        m = rollouts.mask
        out.update(critic_mean=float(p[m].mean()), agreement=agreement(p[m], rollouts.passed[m]),
                   ece=expected_calibration_error(p[m], rollouts.passed[m].float()))
        for j, name in enumerate(_slot_names(rollouts)):
            out[f"agreement_{name.replace(' ', '_')}"] = agreement(p[:, j][m[:, j]], rollouts.passed[:, j][m[:, j]])
        if scored.grads is not None:
            boxes = [slot_boxes(c, h, w) for c in rollouts.checks]
            rows = [(i, j) for i in range(len(boxes)) for j in range(len(boxes[i])) if boxes[i][j] is not None]
            if rows:
                maps = torch.stack([scored.grads[i, j] for i, j in rows]).float().cpu()
                out["locality"] = float(mass_inside(maps, [[boxes[i][j]] for i, j in rows]).nanmean())
                out["locality_baseline"] = 1.0 / rollouts.mask.shape[1]
        return out
    score, target = p[:, 0], rollouts.overall
    k = rollouts.mask.sum(1).clamp_min(1).float()
    out.update(critic_mean=float(score.mean()), agreement=float(((score * k).round() == (target * k).round()).float().mean()),
               ece=expected_calibration_error(score, target))
    if scored.grads is not None:
        mixed = [i for i in range(len(target)) if 0 < float(target[i]) < 1]
        boxes = [[b for b, ok, on in zip(slot_boxes(rollouts.checks[i], h, w), rollouts.passed[i], rollouts.mask[i])
                  if on and not ok and b is not None] for i in mixed]
        if mixed:
            out["locality"] = float(mass_inside(scored.grads[mixed, 0].float().cpu(), boxes).nanmean())
            out["locality_baseline"] = float(sum(len(b) for b in boxes) / (len(boxes) * rollouts.mask.shape[1]))
    return out


def _slot_names(rollouts: RolloutSet) -> list[str]:
    """The slot each check index asks about (the slot world's checks come in slot order)."""
    first = rollouts.checks[0]
    return [parse_check(c).slot or f"check{j}" for j, c in enumerate(first)]


def seconds_per_video(critic, rollouts: RolloutSet, videos: int) -> float:
    """Seconds of one forward and input gradient of every check of the first `videos` videos, per video (`critic`:
    the built trial whose `reward` is timed)."""
    n = min(videos, len(rollouts.prompts))
    grads = "pixels" in critic.reward.grad_spaces
    start = time.perf_counter()
    critic.score(rollouts.videos[:n], rollouts.prompts[:n], rollouts.checks[:n], need_grads=grads)
    return (time.perf_counter() - start) / n
