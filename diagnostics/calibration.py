"""Calibration of the training critic on the policy's own rollouts, per check kind.

Samples rollouts of the profile's policy exactly as training does (SDE sampler and schedule, `--group` rollouts
per prompt for `--prompts` training prompts), scores every (video, check) pair with the critic and with the exact
evaluator, and prints per kind: pairs, agreement (critic p(Yes) > 0.5 vs the evaluator's verdict), how often each
says yes, and the fraction of scores at the critic's floor. Then the headroom of group-relative RL: the evaluator's
`overall` of the rollout the critic's reward ranks best in each group, against the group mean and the worst.

Last line: min_agreement=<lowest agreement over kinds> <kind>=<agreement> ... best_of_group_gain=<best - mean>

    python diagnostics/calibration.py [--prompts 48] [--group 4] [FILES.gin ...] [--gin_bindings ...]
"""

from __future__ import annotations

import argparse
import math
import sys

import torch

from tvrl_bench.cli.script import UserError, at_least, run_script, script_parser
from tvrl_bench.evaluators.calibration import agreement_by_kind, best_of_group
from tvrl_bench.training.trial.built import build_trial
from tvrl_bench.world.checks import check_kind
from tvrl_bench.world.declaration import DEFAULT_PROFILE


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("files", nargs="*", help="gin files after the profile (e.g. another critic's preset)")
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help=f"the training profile (default: {DEFAULT_PROFILE})")
    parser.add_argument("--prompts", type=int, default=48, action=at_least(1), help="training prompts sampled (default 48)")
    parser.add_argument("--group", type=int, default=4, action=at_least(1), help="rollouts per prompt (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="rollout noise seed (default 0)")
    parser.add_argument("--gin_bindings", nargs="*", default=[], help="extra gin bindings")
    return run_script(parser, calibrate, argv)


def calibrate(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    trial = build_trial([args.profile, *args.files], args.gin_bindings)
    s = trial.settings
    if s.reward.score_space not in ("log_prob", "prob"):
        raise UserError(f"{type(s.reward).__name__} scores are not answer probabilities (score_space "
                        f"{s.reward.score_space!r}): there is no p(Yes) > 0.5 to calibrate; pick a critic that "
                        "answers yes/no, e.g. components/rewards/toy_oracle.gin")
    items = list(s.dataset.train)[: args.prompts]
    if len(items) < args.prompts:
        print(f"--prompts {args.prompts}: the training set holds {len(items)}; sampling all of them")
    prompts = [it.prompt for it in items for _ in range(args.group)]
    checks = [list(it.checks) for it in items for _ in range(args.group)]
    video = trial.sample(prompts, trial.noise("rollout", 0, 0, seed=args.seed), group=args.group).videos
    scored = trial.score(video, prompts, checks)
    rewards, scores = scored.rewards().tolist(), scored.scores
    if s.reward.score_space == "prob":
        scores = scores.clamp_min(1e-30).log()
    _, records = trial.evaluate(video, prompts, checks)
    log_probs, passed, kinds = [], [], []
    for i, record in enumerate(records):
        for k, check in enumerate(record["checks"]):
            log_probs.append(float(scores[i, k]))
            passed.append(check["passed"])
            kinds.append(check_kind(check["check"]) or "other")
    floor = s.reward.floor_score
    if floor is not None and s.reward.score_space == "prob":
        floor = math.log(floor)
    table = agreement_by_kind(log_probs, passed, kinds, floor)
    print(f"{'kind':<11} {'pairs':>5} {'agreement':>9} {'critic yes':>10} {'eval yes':>8} {'at floor':>8}")
    for row in table.values():
        print(f"{row.kind:<11} {row.pairs:>5} {row.agreement:>9.3f} {row.critic_yes:>10.3f} {row.evaluator_yes:>8.3f} {row.at_floor:>8.3f}")
    headroom = best_of_group([float(r["score"]) for r in records], rewards, args.group)
    print(f"evaluator overall over {headroom.groups} groups: critic's best {headroom.best:.3f}, group mean "
          f"{headroom.mean:.3f}, critic's worst {headroom.worst:.3f}")
    worst = min(row.agreement for row in table.values())
    print(f"min_agreement={worst:.3f} " + " ".join(f"{row.kind}={row.agreement:.3f}" for row in table.values())
          + f" best_of_group_gain={headroom.best - headroom.mean:.3f}")


if __name__ == "__main__":
    sys.exit(main())
