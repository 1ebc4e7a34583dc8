"""`tvrl-bench critic-card`: each critic's quality against the exact evaluator, on a base's and a trained policy's
rollouts: agreement per check, calibration (ECE), map locality and seconds per video (cli/critic_card_measure.py
defines each), and inversion rates (cli/critic_card_inversions.py: the share of evaluator-ordered rollout pairs
the critic orders the other way). Prints a markdown table (one row per critic) and writes a CSV (one row per critic and rollout set,
with the agreement per slot).

    tvrl-bench critic-card [PRESET.gin ...] [--trained RUN_CHECKPOINT] [--seeds 0 1] [--csv critic_card.csv]
                           [--study rewards --tracking-uri URI]   # also shown on the study's page
"""

from __future__ import annotations

import argparse
import csv
import shutil
import tempfile
from pathlib import Path

from tvrl_bench.cli.common import add_tracking_uri
from tvrl_bench.cli.critic_card_checks import check_args, check_prompts, check_study_world, check_trained_fits
from tvrl_bench.cli.errors import UserError

DEFAULT_CRITICS = ("components/rewards/toy_oracle.gin", "components/rewards/toy_verdicts.gin",
                   "components/rewards/toy_qwen_slots.gin", "components/rewards/toy_qwen_slots_weak.gin",
                   "components/rewards/toy_qwen_slots_shortcut.gin", "components/rewards/toy_qwen_slots_vivid.gin",
                   "components/rewards/toy_scorer_slots.gin")
COLUMNS = ("critic", "policy", "seed", "videos", "checks", "evaluator_mean", "critic_mean", "agreement", "ranking",
           "ece", "locality", "locality_baseline", "inversion", "inversion_checks", "inversion_vivid",
           "seconds_per_video")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "critic-card", help="measure critics against the exact evaluator: agreement, calibration, locality, speed",
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("critics", nargs="*", default=list(DEFAULT_CRITICS),
                        help="critic presets (components/rewards/*.gin: each binds REWARD), each named once and "
                        "included after --profile; found as config files are (the current folder, $TVRL_BENCH_PATH, "
                        "the checkout)")
    parser.add_argument("--profile", default=None,
                        help="the trial profile whose policy, sampler, dataset and evaluator the card uses (default: "
                        "the default regime's profile, tvrl_bench.world.declaration.DEFAULT_PROFILE)")
    parser.add_argument("--trained", type=Path, default=None,
                        help="a trial's checkpoint folder (holding state.pt, e.g. OUT/runs/<trial>) of --profile's "
                        "policy: its trained policy's rollouts are measured too")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1],
                        help="rollout noise seeds, each named once; each seed samples --prompts x --group rollouts "
                        "of each policy")
    parser.add_argument("--prompts", type=int, default=48,
                        help="training prompts sampled per seed (at most the profile's training prompts)")
    parser.add_argument("--group", type=int, default=4, help="rollouts per prompt (as a trial's group)")
    parser.add_argument("--timing-videos", type=int, default=32,
                        help="videos timed for seconds per video (one forward and input gradient of all checks)")
    parser.add_argument("--csv", type=Path, default=Path("critic_card.csv"), help="where the CSV goes")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (one line per critic instead)")
    parser.add_argument("--study", default=None,
                        help="also log the CSV on this study's parent run (as critic_card.csv, replacing a card "
                        "logged before), where tvrl-report's study page shows it beside the study's answers (e.g. "
                        "--study rewards); its profile must be of --profile's world")
    add_tracking_uri(parser, "MLflow store of --study (default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db)")
    parser.set_defaults(run=run)


def _trial(profile: str, preset: str | None):
    """The built trial of `profile` (with the critic `preset` included after it), checked as a trial is (a critic of
    another world than the profile's is refused here), but as one that is not trained."""
    from tvrl_bench.training.trial.built import build_trial

    return build_trial([profile] + ([preset] if preset else []), trains=False)


def _check_world(name: str, reward, world: str, profile: str) -> None:
    from tvrl_bench.world.declaration import served_worlds

    worlds = served_worlds(reward)
    if worlds is not None and world not in worlds:
        raise UserError(f"critic {name} ({type(reward).__name__}) was trained on the {' / '.join(worlds)} world, but "
                        f"{profile} is the {world} world; card it with a profile of its world, or drop it")


def rollout_sets(args: argparse.Namespace):
    """The base's rollouts for every seed, then the trained policy's (with --trained)."""
    from tvrl_bench.cli.critic_card_measure import sample_set
    from tvrl_bench.training.checkpoint import CheckpointDir

    trial = _trial(args.profile, None)
    check_prompts(args.prompts, trial.settings, args.profile)
    saved = None
    if args.trained is not None:
        saved = CheckpointDir(args.trained).load()
        if saved is None:
            raise UserError(f"--trained {args.trained}: its checkpoint holds no trained parameters")
        check_trained_fits(args.trained, saved["parameters"], trial.policy, args.profile)
    sets = [sample_set(trial, "base", seed, args.prompts, args.group) for seed in args.seeds]
    if saved is not None:
        trial.load_weights(saved)
        sets += [sample_set(trial, "trained", seed, args.prompts, args.group) for seed in args.seeds]
    return sets


def run(args: argparse.Namespace) -> int:
    from tvrl_bench.world.declaration import DEFAULT_PROFILE  # here, not at the top: --help loads no torch

    args.profile = args.profile or DEFAULT_PROFILE
    check_args(args)
    from tvrl_bench.cli.common import set_torch_threads
    from tvrl_bench.cli.critic_card_inversions import inversions
    from tvrl_bench.cli.critic_card_measure import measure, seconds_per_video
    from tvrl_bench.world.checks import parse_check
    from tvrl_bench.world.declaration import world_of_check

    set_torch_threads(1)
    tracker = study_tracker(args.study, args.tracking_uri) if args.study else None
    if tracker is not None:
        check_study_world(args.study, tracker, args.profile)
    sets = rollout_sets(args)
    world = world_of_check(parse_check(sets[0].checks[0][0]))
    rows = []
    bar = None if args.no_progress else _bar(len(args.critics))
    for preset in args.critics:
        name = Path(preset).stem
        critic = _trial(args.profile, preset)
        _check_world(name, critic.reward, world, args.profile)
        speed = seconds_per_video(critic, sets[0], args.timing_videos)
        for s in sets:
            rows.append({"critic": name, "policy": s.policy, "seed": s.seed, "videos": len(s.prompts),
                         "checks": int(s.mask.sum()), "seconds_per_video": speed, **measure(critic, s),
                         **inversions(critic.reward, s)})
        if bar is not None:
            bar.update(1)
        else:
            print(f"critic-card: {name} measured", flush=True)
    if bar is not None:
        bar.close()
    write_csv(args.csv, rows)
    print(markdown(rows))
    print(f"critic-card: {len(rows)} rows written to {args.csv}")
    if tracker is not None:
        replaced = log_to_study(args.csv, tracker)
        print(f"critic-card: logged on study {args.study}'s parent run (critic_card.csv"
              f"{', replacing the card it held' if replaced else ''}); tvrl-report shows it")
    return 0


def _bar(total: int):
    from tqdm import tqdm

    return tqdm(total=total, desc="critics", unit="critic")


def write_csv(path: Path, rows: list[dict]) -> None:
    """Every row, the card's columns first, then the per-slot agreements."""
    extra = sorted({k for r in rows for k in r} - set(COLUMNS))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*COLUMNS, *extra])
        writer.writeheader()
        for r in rows:
            writer.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()})


def markdown(rows: list[dict]) -> str:
    """One line per critic: agreement per base seed and on the trained policy, ECE and locality on the base, the
    critic's 0-1 mean against the evaluator's on the base and trained policy, the inversion rates on the base,
    seconds per video."""
    from tvrl_bench.report.study_page.critic_cards import INVERSION_HEADER, fmt, inversion_text, locality_text, summarize

    lines = ["| critic | agreement, base (per seed) | agreement, trained | ECE, base | locality, base (uniform) | "
             f"critic / evaluator mean, base | critic / evaluator mean, trained | {INVERSION_HEADER} | s / video |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in summarize(rows):
        lines.append(f"| {c.critic} | {fmt(c.agreement_base)} | {fmt(c.agreement_trained)} | {fmt(c.ece)} | {locality_text(c)} | "
                     f"{fmt(list(c.means_base))} | {fmt(list(c.means_trained))} | {inversion_text(c)} | "
                     f"{c.seconds_per_video:.4f} |")
    return "\n".join(lines)


def study_tracker(study: str, tracking_uri: str | None):
    """The study's tracker (its parent run), checked before any measuring."""
    from tvrl_bench.sweeps.state import StudyTracker
    from tvrl_bench.tracking.store import resolve_uri

    uri = resolve_uri(tracking_uri)
    tracker = StudyTracker.find(uri, study)
    if tracker is None:
        raise UserError(f"--study {study}: no study of that name in {uri}; run `tvrl-sweep sweeps/{study}.gin` first, "
                        "or pass the --tracking-uri of the store it ran in")
    return tracker


def log_to_study(csv_path: Path, tracker) -> bool:
    """The card on the study's parent run (artifact critic_card.csv), where its study page shows it; True when it
    replaced a card logged there before."""
    from tvrl_bench.report.study_page.critic_cards import CARD_ARTIFACT, holds_card

    held = holds_card(tracker.client, tracker.parent_run_id)
    with tempfile.TemporaryDirectory(prefix="tvrl-card-") as folder:
        named = Path(folder) / CARD_ARTIFACT  # the name the page reads, whatever --csv was
        shutil.copyfile(csv_path, named)
        tracker.client.log_artifact(tracker.parent_run_id, str(named))
    return held
