"""Re-evaluating a finished study's final policies on more held-out prompts than its trials evaluated.

A toy trial scores its final policy on its `eval_prompts` eval prompts (64 in the toy profiles). With a fixed
prompt set and the generation noise seeded by the trial's seed, much of the seed-to-seed spread of a study is the
noise of generating those few videos, not of training: the untrained base itself scatters across seeds. A wider
evaluation shrinks that part without rerunning any training.

The wider set is the toy dataset's eval split drawn with n_eval = `prompts`, minus every scene the trial trained
on (a trial trains on 512 scenes, so asking for 1,000 keeps about 626 on the slot world of 1,296 scenes, the default
regime's, and 594 on the sprite world of 1,344). Eval prompts are drawn first from the dataset's seed, so the wider
set starts with the trial's own eval prompts in order, and it is generated with the trial's evaluation noise: its
first `eval_prompts` videos are the trial's own final evaluation, bit for bit (`TrialScores.own`).

`log_scores` records the wider scores in each trial's MLflow run as `wide_eval/<metric>` (the evaluator's metrics
and `critic_reward`, at the trial's final step) with the tag `tvrl.wide_eval_prompts`, so that a table definition
reading `wide_eval/` metrics (every study table does, falling back to eval/* without them) regenerates from MLflow
like any other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import torch

from tvrl_bench import config as gin_config
from tvrl_bench.report.stats import paired_delta
from tvrl_bench.sweeps.plan import TrialSpec
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.evaluation import WIDE_PREFIX, WIDE_PROMPTS_TAG, wide_eval_items
from tvrl_bench.training.scoring import Scores
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.trial.built import build_trial


@dataclass
class TrialScores:
    """One finished trial scored twice from the same videos: on its own eval prompts (`own`, as the trial scored
    itself) and on the wider held-out set (`wide`, `prompts` prompts). Metrics are the evaluator's plus
    `critic_reward`."""

    spec: TrialSpec
    own: dict[str, float]
    wide: dict[str, float]
    prompts: int
    dropped: int  # wider-set prompts left out because the trial trained on their scene
    steps: int = 0  # the trial's training steps (its final evaluation's step)

    @property
    def arm(self) -> str:
        """The trial's row: 'base' or its axis presets joined, e.g. 'nft / window3'."""
        return "base" if self.spec.base else " / ".join(self.spec.labels.values())


class TrialNotFinished(FileNotFoundError):
    """A trial of the study has no finished checkpoint under --out; the message says what to do (a user error)."""


def finished_checkpoint(runs: Path, spec: TrialSpec) -> CheckpointDir:
    """The checkpoint folder of a finished trial (runs/<key>); TrialNotFinished naming the trial otherwise (the
    command checks every trial first, with advice on the flags: wide_eval_flags.check_finished)."""
    checkpoints = CheckpointDir(runs / spec.key)
    info = checkpoints.info()
    if info is None or not info.finished:
        raise TrialNotFinished(
            f"{checkpoints.folder}: trial {spec.title} has no finished checkpoint; finish the study first "
            "(rerun tvrl-sweep with the same study file and --out)"
        )
    return checkpoints


def wider_eval_items(settings: TrialSettings, prompts: int, flag: str = "--prompts") -> tuple[list, int]:
    """The first `prompts` eval prompts of the trial's dataset drawn as if n_eval were `prompts`, without the
    scenes the trial trained on; and how many were dropped (training.evaluation.wide_eval_items). A ConfigError
    names `flag`, the argument that asked for `prompts`."""
    if settings.dataset.held_out is None:
        raise gin_config.ConfigError(
            f"{flag}: a wider evaluation redraws the dataset's eval split (as datasets.toy.n_eval does); this "
            f"trial's dataset {settings.dataset.name!r} has a fixed eval split, so a wider evaluation does not apply"
        )
    try:
        return wide_eval_items(settings, prompts)
    except ValueError as exc:  # more prompts than the world has distinct scenes (wide_eval_run checks it first)
        raise gin_config.ConfigError(f"{flag} {prompts}: {str(exc).splitlines()[0]}") from None


def score_trial(spec: TrialSpec, runs: str | Path, prompts: int) -> TrialScores:
    """Load the trial's final parameters and score them on its own and on `prompts` wider eval prompts (CPU)."""
    checkpoints = finished_checkpoint(Path(runs), spec)
    trial = build_trial(list(spec.files), list(spec.bindings))
    settings = trial.settings
    own_count = min(settings.eval_prompts, len(settings.dataset.eval))
    if prompts < own_count:
        raise gin_config.ConfigError(f"--prompts {prompts}: fewer than the trial's own {own_count} eval prompts; "
                                     f"ask for more, e.g. --prompts {max(own_count, 1000)}")
    items, dropped = wider_eval_items(settings, prompts)
    # None for an untrained base row (steps 0 saves no state): the pretrained policy
    if trial.load_weights(checkpoints) is None and settings.steps > 0:
        raise TrialNotFinished(f"{checkpoints.state_path}: trial {spec.title} finished but its final state is missing; "
                               f"remove {checkpoints.folder} and rerun tvrl-sweep with the same flags to train it again")
    evaluation = trial.evaluation(items)
    with torch.no_grad():
        videos = torch.cat([v for _, v in evaluation.chunk_videos()])
    prompts_text, checks = [it.prompt for it in items], [it.checks for it in items]
    critic = evaluation.critic_scores(videos, prompts_text, checks)

    def metrics(n: int) -> dict[str, float]:
        scored, records = settings.evaluator.evaluate_detailed(videos[:n], prompts_text[:n], checks[:n])
        first = Scores(critic.scores[:n], critic.mask[:n], None)
        return {**scored, **evaluation.critic_metrics([first], records)}

    return TrialScores(spec, metrics(own_count), metrics(len(items)), len(items), dropped, settings.steps)




def trial_runs(tracking_uri: str, study: str, specs: list[TrialSpec]) -> dict[str, str]:
    """{trial key: run id of its latest finished attempt} for every trial of `study` in the store at
    `tracking_uri`; a ConfigError naming the URI when the store lacks the study or a trial's finished run. Called
    before any scoring, so a wrong store costs seconds."""
    from tvrl_bench.sweeps.state import StudyTracker

    tracker = StudyTracker.find(tracking_uri, study)
    if tracker is None:
        raise gin_config.ConfigError(
            f"--tracking-uri {tracking_uri}: this store has no study {study!r}; pass the --tracking-uri the sweep "
            "wrote to, or --no-log to print the tables only"
        )
    runs = tracker.runs()
    found = {}
    for spec in specs:
        run = runs.latest_finished(spec.key)
        if run is None:
            raise gin_config.ConfigError(
                f"--tracking-uri {tracking_uri}: trial {spec.title} of study {study!r} has no finished run in "
                "this store; pass the --tracking-uri the sweep wrote to, or --no-log"
            )
        found[spec.key] = run.info.run_id
    return found


def log_scores(tracking_uri: str, run_ids: dict[str, str], scores: list[TrialScores]) -> int:
    """Log each trial's wider scores to its run (`run_ids` from `trial_runs`) as `wide_eval/<metric>` at the
    trial's final step, tagged `tvrl.wide_eval_prompts`; a run that already holds these very scores on as many
    prompts (a second wide-eval, or the trial's own) is left as it is, so its history holds no duplicate. Returns
    how many runs were logged."""
    import time

    from mlflow.entities import Metric, RunTag

    from tvrl_bench.tracking.store import client_for

    client = client_for(tracking_uri)
    now = int(time.time() * 1000)
    logged = 0
    for s in scores:
        held = client.get_run(run_ids[s.spec.key]).data
        if held.tags.get(WIDE_PROMPTS_TAG) == str(s.prompts) and all(
                abs(held.metrics.get(WIDE_PREFIX + name, math.nan) - float(value)) <= 1e-12
                for name, value in s.wide.items()):
            continue
        metrics = [Metric(WIDE_PREFIX + name, float(value), now, s.steps) for name, value in sorted(s.wide.items())]
        client.log_batch(run_ids[s.spec.key], metrics=metrics, tags=[RunTag(WIDE_PROMPTS_TAG, str(s.prompts))])
        logged += 1
    return logged


@dataclass
class ArmDelta:
    """One arm's paired difference from the base over the seeds both finished, on one prompt set (x 100)."""

    arm: str
    mean: float
    delta: float
    low: float
    high: float
    seeds: int
    per_seed: dict[int, float] = field(default_factory=dict)


def paired_rows(scores: list[TrialScores], which: str = "wide", metric: str = "overall") -> list[ArmDelta]:
    """Per arm (base first), the mean `metric` x 100 and its paired difference from the base of each seed with a
    95% t-interval, on the `own` or `wide` prompt set."""
    values: dict[str, dict[int, float]] = {}
    for s in scores:
        values.setdefault(s.arm, {})[s.spec.seed] = 100 * getattr(s, which)[metric]
    base = values.get("base", {})
    rows = []
    for arm in [*(["base"] if base else []), *(a for a in values if a != "base")]:
        by_seed = values[arm]
        mean = sum(by_seed.values()) / len(by_seed)
        if arm == "base" or not base:
            rows.append(ArmDelta(arm, mean, math.nan, math.nan, math.nan, len(by_seed)))
            continue
        stat = paired_delta(by_seed, base)
        per_seed = {seed: by_seed[seed] - base[seed] for seed in sorted(set(by_seed) & set(base))}
        rows.append(ArmDelta(arm, mean, stat.delta, stat.ci_low, stat.ci_high, stat.n_treated, per_seed))
    return rows


def format_rows(rows: list[ArmDelta], title: str) -> str:
    """A plain-text table of `paired_rows`."""
    lines = [title, f"{'arm':<28} {'mean':>7} {'delta vs base [95% CI]':>28} {'seeds':>5}"]
    for r in rows:
        delta = "" if math.isnan(r.delta) else f"{r.delta:+.2f} [{r.low:+.2f}, {r.high:+.2f}]"
        lines.append(f"{r.arm:<28} {r.mean:>7.2f} {delta:>28} {r.seeds:>5}")
    return "\n".join(lines)
