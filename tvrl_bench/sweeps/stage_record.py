"""What a staged study records on its parent run, and the checks against a study edited between stages.

The parent run of a study holds `tvrl.profile` (the profile its trials ran) and, for a staged study, `tvrl.decide`
(the design's fingerprint, tvrl_bench/decisions/design.py) from its first sweep, and `decisions.csv` (each
comparison's verdict after the last stage run). A sweep whose study no longer matches what its finished runs were
run with is refused before anything runs: its decisions (or its tables) would mix two studies.
"""

from __future__ import annotations

import json

from tvrl_bench.config import ConfigError
from tvrl_bench.decisions.design import StagedDesign, arm_name
from tvrl_bench.decisions.outcome import scaled_metric
from tvrl_bench.decisions.sequential import StageResult
from tvrl_bench.sweeps.same_trials import check_sweep_profile, check_sweep_joins
from tvrl_bench.sweeps.validate import param_line

DECIDE_TAG, PROFILE_TAG = "tvrl.decide", "tvrl.profile"
FIX = "restore it, or run the changed study under a new sweeps.study.name or into another store (--tracking-uri)"


def check_store_matches(found, study, trials: list, fingerprint: str | None, path: str) -> None:
    """ConfigError when the store's study (`found`: a StudyTracker) holds finished runs this sweep must not join:
    of another profile or decision design, or of its arms and seeds under other trial keys (same_trials.py)."""
    runs = found.runs()
    finished = [run for key in runs.by_key if (run := runs.latest_finished(key)) is not None]
    parent_tags = found.client.get_run(found.parent_run_id).data.tags
    check_unchanged(parent_tags, finished, study, fingerprint, path)
    check_sweep_profile(study, runs, path)
    check_sweep_joins(study, trials, runs, path)


def check_unchanged(parent_tags: dict[str, str], finished: list, study, fingerprint: str | None, path: str) -> None:
    """ConfigError when the study's profile or decision design differs from what its `finished` runs recorded
    (a decided metric that none of them logged may change: nothing was decided on it)."""
    if not finished:
        return
    recorded_profile = parent_tags.get(PROFILE_TAG)
    if recorded_profile and recorded_profile != study.profile:
        raise ConfigError(
            f"{path}:{param_line(path, 'profile')}: study {study.name} already holds runs of the profile "
            f"{recorded_profile}, and this sweep runs {study.profile}: a table would average the two as one seed; "
            "run it under another sweeps.study.name (or --study for tvrl-report) or into another store (--tracking-uri)"
        )
    recorded = parent_tags.get(DECIDE_TAG)
    if fingerprint is None or not recorded or recorded == fingerprint:
        return
    before, now = json.loads(recorded), json.loads(fingerprint)
    for key in ("baseline", "alpha", "seeds_per_stage", "max_stages", "margin", "metric", "permutations", "seeds"):
        if key == "metric" and not any(scaled_metric(r.data.metrics, before.get(key, "")) is not None for r in finished):
            continue
        if before.get(key) != now.get(key):
            raise ConfigError(
                f"{path}:{param_line(path, 'seeds' if key == 'seeds' else 'decide')}: sweeps.study.decide['{key}'] "
                f"changed since the study's first stage ({before.get(key)!r} -> {now.get(key)!r}), so the decisions "
                f"made so far would no longer hold: {FIX}"
            )
    if {k: v for k, v in before.items() if k != "metric"} == {k: v for k, v in now.items() if k != "metric"}:
        return
    added = sorted(set(now["arms"]) - set(before["arms"]))
    removed = sorted(set(before["arms"]) - set(now["arms"]))
    raise ConfigError(
        f"{path}:{param_line(path, 'axes')}: sweeps.study.axes changed since the study's first stage (arms added: "
        f"{', '.join(added) or 'none'}; removed: {', '.join(removed) or 'none'}), so the family of comparisons and "
        f"its decisions would no longer hold: {FIX}"
    )


def record(client, parent_run_id: str, study, fingerprint: str | None) -> None:
    client.set_tag(parent_run_id, PROFILE_TAG, study.profile)
    if fingerprint is not None:
        client.set_tag(parent_run_id, DECIDE_TAG, fingerprint)


def decisions_csv(results: list[StageResult]) -> str:
    """Each comparison's verdict after the last stage: arm, baseline, verdict, stage, difference, boundary, n."""
    lines = ["arm,baseline,verdict,stage,difference,boundary,n_arm,n_baseline"]
    for v in results[-1].verdicts if results else []:
        lines.append(f"{v.comparison.arm},{v.comparison.baseline},{v.verdict},{v.stage},{v.difference:.6f},"
                     f"{v.boundary:.6f},{v.n_arm},{v.n_baseline}")
    return "\n".join(lines) + "\n"


def decision_lines(design: StagedDesign, results: list[StageResult], controls: list[str], trials_run: int,
                   most: int) -> list[str]:
    """The sweep's last lines: the setting, each comparison's verdict, the controls, the trials saved."""
    n, k = design.seeds_per_stage, design.max_stages
    within = f", within +-{design.margin:g} points decided the same" if design.margin > 0 else ""
    lines = [f"decisions on {design.metric} x 100 (family-wise error {design.alpha:g}, stages of {n} seeds, at most "
             f"{k}{within}; group-sequential permutation test):"]
    for v in results[-1].verdicts if results else []:
        word = {"within": f"within +-{design.margin:g}"}.get(v.verdict, v.verdict)
        lines.append(f"  {v.comparison.arm} vs {v.comparison.baseline}: {word} at stage {v.stage} "
                     f"({v.difference:+.2f}, boundary {v.boundary:.2f}; {v.n_arm} and {v.n_baseline} seeds)")
    for name in controls:
        lines.append(f"  {name}: a control (no baseline arm in the study), stage 1 only")
    lines.append(f"trials: {trials_run} of at most {most} (a grid of {k} stages): {most - trials_run} saved")
    return lines


def fingerprint_of(plan) -> str:
    return plan.design.fingerprint([plan.arms.arms[name] for name in plan.trials])


__all__ = ["check_store_matches", "check_unchanged", "record", "decisions_csv", "decision_lines", "fingerprint_of", "arm_name"]
