"""The critic card's inversion rates (`tvrl-bench critic-card`): over pairs of one prompt's rollouts that the exact
evaluator orders, the share one critic orders the other way (evaluators/inversions.py defines the rate).

Columns (docs/toy/critics.md):
- `inversion`: the critic's reward (mean of its check scores) against the evaluator's overall, what GRPO's
  group-relative advantage reads; every critic, scalar scorers included;
- `inversion_checks`: per check, its score against the evaluator's verdict on it, pooled over checks (critics that
  score each check: `uses_checks`);
- `inversion_<colour>` (a slot check's asked colour) or `inversion_<kind>` (other checks): the same, per key;
- `inversion_vivid`: the per-check pairs a vivid bias concerns (world/vivid.py): the check asks a one-channel
  colour and the worse rollout's slot shows one of its lures (asked red: yellow or magenta). NaN off the slot world.
"""

from __future__ import annotations

import math

import torch

from tvrl_bench.evaluators.inversions import inversion_rate, pair_counts, pooled_rate
from tvrl_bench.training.scoring import score_videos
from tvrl_bench.world.checks import parse_check


def check_key(text: str) -> str:
    """The per-key column a check falls in: a slot check's asked colour, else its kind."""
    spec = parse_check(text)
    return spec.colour if spec.kind == "slot" and spec.colour else spec.kind


def lure_shown(rollouts) -> torch.Tensor | None:
    """bool[B, K]: check k asks a one-channel colour and rollout b's slot shows one of its lures; None unless every
    check is a slot check of the default slot world."""
    from tvrl_bench.world.slots import SLOTS
    from tvrl_bench.world.vivid import lures

    specs = [[parse_check(c) for c in row] for row in rollouts.checks]
    if any(s.kind != "slot" or s.slot not in SLOTS.slots or s.colour not in SLOTS.colours for row in specs for s in row):
        return None
    from tvrl_bench.recipes.slot_critic_data import verdict_table

    table = verdict_table(rollouts.videos)  # [B, slots, colours]
    out = torch.zeros(rollouts.mask.shape, dtype=torch.bool)
    for b, row in enumerate(specs):
        for k, spec in enumerate(row):
            seen = table[b, SLOTS.slots.index(spec.slot)]
            out[b, k] = any(bool(seen[SLOTS.colours.index(c)]) for c in lures(spec.colour, SLOTS.colours))
    return out


def inversions(reward, rollouts) -> dict[str, float]:
    """One critic's inversion columns on one rollout set (a `critic_card_measure.RolloutSet`; see the module)."""
    scored = score_videos(reward, rollouts.videos, rollouts.prompts, rollouts.checks, need_grads=False)
    out = {"inversion": inversion_rate(scored.rewards().cpu(), rollouts.overall, rollouts.group),
           "inversion_checks": math.nan, "inversion_vivid": math.nan}
    if not reward.uses_checks:
        return out
    scores, passed, mask, group = scored.scores.cpu(), rollouts.passed, rollouts.mask, rollouts.group
    columns = range(mask.shape[1])
    out["inversion_checks"] = pooled_rate([pair_counts(scores[:, j], passed[:, j], group, mask[:, j]) for j in columns])
    keys = [[check_key(c) for c in row] + [""] * (mask.shape[1] - len(row)) for row in rollouts.checks]
    for key in sorted({k for row in keys for k in row if k}):
        chosen = torch.tensor([[k == key for k in row] for row in keys]) & mask
        out[f"inversion_{key}"] = pooled_rate([pair_counts(scores[:, j], passed[:, j], group, chosen[:, j])
                                               for j in columns])
    shown = lure_shown(rollouts)
    if shown is not None:
        out["inversion_vivid"] = pooled_rate([pair_counts(scores[:, j], passed[:, j], group, mask[:, j], shown[:, j])
                                              for j in columns])
    return out
