"""The reward-hacking panel: per method, the critic's gain and the evaluator's gain over the base, paired by seed,
on the raw scale and on a headroom-normalised one, the verdict of the rules in hacking_rules.py, and the critic's
efficiency against the exact oracle.

Per method M and seed s, with c = the final critic reward (`<source>/critic_reward`) and e = the final evaluator
score (`<source>/overall`), and b the baseline of the same seed:
    critic Δ = mean_s 100 (c_M,s - c_b,s),  evaluator Δ = mean_s 100 (e_M,s - e_b,s),
    gap      = mean_s 100 ((c_M,s - e_M,s) - (c_b,s - e_b,s)) = critic Δ - evaluator Δ          (raw, shown)
    critic gain = mean_s g(c_b,s, c_M,s),  evaluator gain = mean_s g(e_b,s, e_M,s),
    gain gap    = mean_s (g(c_b,s, c_M,s) - g(e_b,s, e_M,s))                              (what the rules read)
with g = 100 x the normalised change (hacking_rules.py; raw x 100 for a critic off [0, 1]), each with the paired
t-interval over seeds (report.stats.paired_delta, the tables' interval), and where the runs log it the critic's
false-yes rate Δ (`<source>/critic_false_yes`, x 100). The verdict (`hacking`, `overstated`, `none`) and the
efficiency (M's evaluator gain over that of the method trained on `toy_oracle` with the same other axis values) are
hacking_rules.py's.

The baseline is the study's base model scored by the same critic (base runs whose `reward` param is M's): the
critic Δ only means something when both sides were scored by one critic. Failing that, with `eval/*` metrics, it
is M's own step-0 evaluation (the untrained policy on the same prompts and noise, logged when the trial evaluates
during training on every eval prompt); else the row says what is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from tvrl_bench.report.stats.intervals import DeltaStat, paired_delta
from tvrl_bench.report.study_page.hacking_rules import SCALE, efficiency, gains, mean_stat, verdict
from tvrl_bench.report.study_page.methods import AXES, Method, Source

ORACLE = "toy_oracle"  # the exact critic whose evaluator gain the efficiency divides by
FALSE_YES = "critic_false_yes"  # <source>/critic_false_yes: share of checks the critic says yes to and the evaluator no


@dataclass
class HackingRow:
    method: str
    critic_name: str | None
    baseline: str  # how the baseline was chosen, for the page ("" when none)
    critic: DeltaStat | None
    evaluator: DeltaStat | None
    gap: DeltaStat | None
    missing: str | None = None  # why a delta could not be computed
    critic_gain: DeltaStat | None = None  # normalised (hacking_rules.gains), x 100
    evaluator_gain: DeltaStat | None = None
    gain_gap: DeltaStat | None = None
    false_yes: DeltaStat | None = None  # the critic's false-yes rate Δ x 100, where logged
    scale: str = ""  # 'headroom' or 'raw': the gains' scale
    efficiency: float = math.nan
    evaluator_gains: dict[str, float] = field(default_factory=dict, repr=False)

    @property
    def verdict(self) -> str:
        """`hacking`, `overstated`, `none` (assessed, not flagged) or "" (not assessed: no gain gap, or one seed,
        which gives it no interval): hacking_rules.verdict."""
        return verdict(self.critic_gain, self.evaluator_gain, self.gain_gap, self.false_yes)

    @property
    def flagged(self) -> bool:
        return self.verdict in ("hacking", "overstated")

    def line(self) -> str:
        """One line for the page and the sweep's last lines."""
        c, e, g = self.critic_gain, self.evaluator_gain, self.gain_gap
        assert c is not None and e is not None and g is not None
        scored = f" (scored by {self.critic_name})" if self.critic_name and self.baseline == "the base model" else ""
        lead = "reward hacking?" if self.verdict == "hacking" else "critic overstates the gain:"
        said = "while the evaluator gain is" if self.verdict == "hacking" else "exceeds the evaluator gain"
        fy = self.false_yes
        rising = (f"; its false-yes rate rose {fy.delta:+.2f} [{fy.ci_low:+.2f}, {fy.ci_high:+.2f}]"
                  if self.verdict == "hacking" and fy is not None and fy.ci_low > 0 else "")
        return (f"{lead} {self.method}: critic gain {_stat(c)} {said} {_stat(e)} (gap {_stat(g)}; {self.scale} "
                f"scale, x100) over {self.baseline}{scored} ({g.n_treated} seeds){rising}")


def _stat(d: DeltaStat) -> str:
    return f"{d.delta:+.2f} [{d.ci_low:+.2f}, {d.ci_high:+.2f}]"


StepZero = Callable[[str, str], "float | None"]  # (run id, metric) -> its value at step 0, or None


def hacking_rows(methods: list[Method], source: Source, step_zero: StepZero | None = None) -> list[HackingRow]:
    """One row per method other than the base model, in the methods' order."""
    base = next((m for m in methods if m.base), None)
    trained = [m for m in methods if not m.base]
    rows = [_row(m, base, source, step_zero) for m in trained]
    for method, row in zip(trained, rows):
        oracle = next((r for m, r in zip(trained, rows) if m.param("reward") == ORACLE and _same_but_reward(m, method)),
                      None)
        if oracle is not None and method.param("reward") != ORACLE:
            row.efficiency = efficiency(row.evaluator_gains, oracle.evaluator_gains)
    return rows


def _same_but_reward(a: Method, b: Method) -> bool:
    """a and b differ at most in their critic (`reward` param)."""
    return all(a.param(axis) == b.param(axis) for axis in AXES if axis != "reward")


def _scaled(values: dict[str, float]) -> dict[str, float]:
    return {s: SCALE * v for s, v in values.items()}


def _row(method: Method, base: Method | None, source: Source, step_zero: StepZero | None) -> HackingRow:
    critic_name = method.param("reward")
    evaluator_m = method.per_seed(source.overall)
    critic_m = method.per_seed(source.critic)
    row = HackingRow(method.label, critic_name, "", None, None, None)
    if not evaluator_m:
        row.missing = method.why_absent(source.overall)
        return row
    baseline = _base_runs(base, critic_name)
    if baseline is not None:
        evaluator_b, critic_b = baseline.per_seed(source.overall), baseline.per_seed(source.critic)
        row.baseline = "the base model"
    elif source.prefix == "eval" and step_zero is not None:
        evaluator_b, critic_b = _step_zero(method, source.overall, step_zero), _step_zero(method, source.critic, step_zero)
        row.baseline = "its own step-0 evaluation"
        if not evaluator_b:
            row.baseline = ""
    else:
        evaluator_b, critic_b = {}, {}
    if not row.baseline:
        who = f" scored by critic {critic_name}" if critic_name else ""
        row.missing = f"no base run{who} and no step-0 evaluation to compare with"
        return row
    row.evaluator = paired_delta(_scaled(evaluator_m), _scaled(evaluator_b))
    row.evaluator_gains, _ = gains(evaluator_m, evaluator_b)
    row.evaluator_gain = mean_stat(row.evaluator_gains)
    if not critic_m:
        row.missing = method.why_absent(source.critic, "no {metric} logged: the critic's gain is unknown")
        return row
    if not critic_b:
        row.missing = ("the baseline " + baseline.why_absent(source.critic, "logged no {metric}")
                       if baseline is not None else f"the baseline logged no {source.critic}")
        return row
    row.critic = paired_delta(_scaled(critic_m), _scaled(critic_b))
    seeds = set(evaluator_m) & set(critic_m) & set(evaluator_b) & set(critic_b)
    row.gap = paired_delta({s: SCALE * (critic_m[s] - evaluator_m[s]) for s in seeds},
                           {s: SCALE * (critic_b[s] - evaluator_b[s]) for s in seeds})
    critic_gains, row.scale = gains(critic_m, critic_b)
    row.critic_gain = mean_stat(critic_gains)
    row.gain_gap = paired_delta({s: critic_gains[s] for s in seeds}, {s: row.evaluator_gains[s] for s in seeds})
    row.false_yes = _false_yes(method, baseline, source, step_zero)
    if math.isnan(row.gap.ci_low):
        row.missing = f"{len(seeds)} paired seed{'s' if len(seeds) != 1 else ''}: the gap needs 2 or more for an interval"
    return row


def _false_yes(method: Method, baseline: Method | None, source: Source, step_zero: StepZero | None) -> DeltaStat | None:
    """The critic's false-yes rate Δ x 100 over the same baseline, where both sides logged it; else None."""
    metric = f"{source.prefix}/{FALSE_YES}"
    after = method.per_seed(metric)
    if baseline is not None:
        before = baseline.per_seed(metric)
    else:
        before = _step_zero(method, metric, step_zero) if step_zero is not None else {}
    return paired_delta(_scaled(after), _scaled(before)) if after and before else None


def _base_runs(base: Method | None, critic: str | None) -> Method | None:
    """The base model's runs scored by `critic` (its `reward` param), or None when it has none."""
    if base is None:
        return None
    runs = base.runs
    if "params.reward" in runs.columns:
        same = runs[runs["params.reward"].isna()] if critic is None else runs[runs["params.reward"] == critic]
    else:
        same = runs if critic is None else runs.iloc[:0]
    if same.empty:
        return None
    return Method(base.label, True, base.params, same.reset_index(drop=True))


def _step_zero(method: Method, metric: str, step_zero: StepZero) -> dict[str, float]:
    """{seed: mean over the seed's runs of `metric` at step 0} for runs that evaluated before training."""
    out: dict[str, list[float]] = {}
    for run_id, seed in zip(method.runs["run_id"], method.runs["_seed"]):
        value = step_zero(str(run_id), metric)
        if value is not None and not math.isnan(value):
            out.setdefault(str(seed), []).append(float(value))
    return {s: sum(v) / len(v) for s, v in out.items()}
