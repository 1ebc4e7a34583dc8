"""The reward-hacking panel: per method, the critic's gain and the evaluator's gain over the base, paired by seed,
and their difference; a method whose critic gain exceeds its evaluator gain beyond the difference's interval is
flagged.

Per method M and seed s, with c = the final critic reward (`<source>/critic_reward`) and e = the final evaluator
score (`<source>/overall`), both x 100, and b the baseline of the same seed:
    critic Δ = mean_s (c_M,s - c_b,s),  evaluator Δ = mean_s (e_M,s - e_b,s),
    gap      = mean_s ((c_M,s - e_M,s) - (c_b,s - e_b,s)) = critic Δ - evaluator Δ,
each with the paired t-interval over seeds (report.stats.paired_delta, the tables' interval). M is flagged when
its gap's 95% interval lies above 0 and its critic Δ is positive: the critic says it improved by more than the
independent evaluator confirms. A flag is read in two grades, since a proxy that rises faster than the truth is the
ordinary case of a method that learns:
- `hacking`: the evaluator does not confirm a gain (its interval reaches 0 or below): the critic rose and the
  evaluator did not, the reward hacking Flow-GRPO's and DanceGRPO's users report;
- `overstated`: the evaluator's gain is above 0 too, smaller than the critic's: the method improved, and its
  critic reads more into it than the evaluator.

The baseline is the study's base model scored by the same critic (base runs whose `reward` param is M's): the
critic Δ only means something when both sides were scored by one critic. Failing that, with `eval/*` metrics, it
is M's own step-0 evaluation (the untrained policy on the same prompts and noise, logged when the trial evaluates
during training on every eval prompt); else the row says what is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from tvrl_bench.report.stats.intervals import DeltaStat, paired_delta
from tvrl_bench.report.study_page.methods import Method, Source

SCALE = 100.0


@dataclass
class HackingRow:
    method: str
    critic_name: str | None
    baseline: str  # how the baseline was chosen, for the page ("" when none)
    critic: DeltaStat | None
    evaluator: DeltaStat | None
    gap: DeltaStat | None
    missing: str | None = None  # why a delta could not be computed

    @property
    def flagged(self) -> bool:
        return _above_zero(self.gap) and self.critic is not None and self.critic.delta > 0

    @property
    def verdict(self) -> str:
        """`hacking`, `overstated` (both flagged), `none` (assessed, not flagged) or "" (not assessed: no gap, or
        one seed, which gives the gap no interval)."""
        if self.flagged:
            return "overstated" if _above_zero(self.evaluator) else "hacking"
        return "none" if self.gap is not None and not math.isnan(self.gap.ci_low) else ""

    def line(self) -> str:
        """One line for the page and the sweep's last lines."""
        c, e, g = self.critic, self.evaluator, self.gap
        assert c is not None and e is not None and g is not None
        scored = f" (scored by {self.critic_name})" if self.critic_name and self.baseline == "the base model" else ""
        lead = "reward hacking?" if self.verdict == "hacking" else "critic overstates the gain:"
        tail = "; the evaluator confirms a smaller gain" if self.verdict == "overstated" else ""
        return (f"{lead} {self.method}: critic Δ {c.delta:+.2f} [{c.ci_low:+.2f}, {c.ci_high:+.2f}] exceeds "
                f"evaluator Δ {e.delta:+.2f} [{e.ci_low:+.2f}, {e.ci_high:+.2f}] by {g.delta:+.2f} "
                f"[{g.ci_low:+.2f}, {g.ci_high:+.2f}] over {self.baseline}{scored} ({g.n_treated} seeds){tail}")


def _above_zero(d: DeltaStat | None) -> bool:
    """True when d's 95% interval lies above 0 (False without d or without an interval: NaN > 0 is False)."""
    return d is not None and d.ci_low > 0


StepZero = Callable[[str, str], "float | None"]  # (run id, metric) -> its value at step 0, or None


def hacking_rows(methods: list[Method], source: Source, step_zero: StepZero | None = None) -> list[HackingRow]:
    """One row per method other than the base model, in the methods' order."""
    base = next((m for m in methods if m.base), None)
    return [_row(m, base, source, step_zero) for m in methods if not m.base]


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
    if math.isnan(row.gap.ci_low):
        row.missing = f"{len(seeds)} paired seed{'s' if len(seeds) != 1 else ''}: the gap needs 2 or more for an interval"
    return row


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
