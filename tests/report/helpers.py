"""Test helpers: log studies with the MLflow client as docs/report.md says, read rendered tables back, expected numbers,
a fixed set of judgments with its truth.

Expected numbers are computed here independently of tvrl_bench.report: `statistics` for means and stds, scipy's
Welch t-test for unpaired delta intervals and its paired t-test (on the seeds both cells have) for paired ones, and the cell texts are formatted from the spec in report/render/formats.py's docstring.
"""

from __future__ import annotations

import json
import re
import statistics
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
from mlflow.entities import Metric, Param
from scipy import stats as sps

from tvrl_bench.report.winrate.judgments import Judgment

PM, MARK, DASH = "±", "†", "—"


class StudyLog:
    """A study logged run by run: a parent run (tag tvrl.role=study) and child trial runs."""

    def __init__(self, client: Any, study: str, artifact_root: Path, tables: str | None = None,
                 parent: bool = True) -> None:
        self.client = client
        self.study = study
        self.experiment_id = client.create_experiment(study, artifact_location=str(artifact_root / study))
        self.parent_id = None
        if parent:
            tags = {"tvrl.study": study, "tvrl.role": "study"}
            if tables:
                tags["tvrl.tables"] = tables
            self.parent_id = client.create_run(self.experiment_id, run_name=study, tags=tags).info.run_id

    def trial(
        self,
        params: dict[str, Any],
        metrics: dict[str, float],
        status: str = "FINISHED",
        history: dict[str, list[float]] | None = None,
        trial_key: str | None = None,
        attempt: int = 0,
        by_hand: bool = False,
        final_step: int = 100,
        curves: dict[str, dict[int, float]] | None = None,
    ) -> str:
        """Log one trial run: string params, eval metrics at `final_step`, per-step train metrics in `history`,
        metrics at chosen steps in `curves` ({metric: {step: value}}, e.g. evaluations every 20 steps).

        by_hand: no tags and no parent, as someone logging a run themselves would.
        """
        tags: dict[str, str] = {}
        if not by_hand:
            key = trial_key or "-".join(f"{k}={v}" for k, v in sorted(params.items()))
            tags = {"tvrl.study": self.study, "tvrl.trial_key": key, "tvrl.attempt": str(attempt),
                    "tvrl.role": "trial"}
            if self.parent_id:
                tags["mlflow.parentRunId"] = self.parent_id
        name = f"{self.study}/" + "-".join(str(params.get(k, "")) for k in ("sampler", "reward", "credit"))
        run = self.client.create_run(self.experiment_id, run_name=name + f"-s{params.get('seed')}", tags=tags)
        run_id = run.info.run_id
        logged = [Metric(k, float(v), 0, final_step) for k, v in metrics.items()]
        for key, values in (history or {}).items():
            logged += [Metric(key, float(v), 0, step) for step, v in enumerate(values)]
        for key, points in (curves or {}).items():
            logged += [Metric(key, float(v), 0, step) for step, v in points.items()]
        self.client.log_batch(run_id, metrics=logged, params=[Param(k, str(v)) for k, v in params.items()])
        if status != "RUNNING":
            self.client.set_terminated(run_id, status)
        return run_id

    def finish(self) -> None:
        if self.parent_id:
            self.client.set_terminated(self.parent_id)

    def log_samples(self, run_id: str, samples: list[dict[str, Any]], files: dict[str, Path], stage: str = "final"):
        """samples/<stage>/index.json (entries with file, index, prompt, checks, seed) and the video files."""
        for path in files.values():
            self.client.log_artifact(run_id, str(path), f"samples/{stage}")
        index = Path(next(iter(files.values()))).parent / "index.json"
        index.write_text(json.dumps(samples))
        self.client.log_artifact(run_id, str(index), f"samples/{stage}")


# ---- expected numbers --------------------------------------------------------------------------------------------


def pct(values: list[float]) -> list[float]:
    return [100.0 * v for v in values]


def mean_std(values: list[float]) -> tuple[float, float]:
    """Mean and sample std (NaN for one value) of already-scaled per-seed values."""
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else float("nan"))


def welch(treated: list[float], baseline: list[float]) -> tuple[float, float, float]:
    """(difference of means, 95% CI low, high) from scipy's Welch t-test."""
    test = sps.ttest_ind(treated, baseline, equal_var=False)
    ci = test.confidence_interval(0.95)
    return statistics.fmean(treated) - statistics.fmean(baseline), float(ci.low), float(ci.high)


def paired(treated: dict[int, float], baseline: dict[int, float]) -> tuple[float, float, float]:
    """(mean per-seed difference, 95% CI low, high) from scipy's paired t-test over the seeds both have."""
    seeds = sorted(set(treated) & set(baseline))
    a, b = [treated[s] for s in seeds], [baseline[s] for s in seeds]
    ci = sps.ttest_rel(a, b).confidence_interval(0.95)
    return statistics.fmean(a) - statistics.fmean(b), float(ci.low), float(ci.high)


def value_text(values: list[float]) -> str:
    m, s = mean_std(values)
    return f"{m:.2f}" if np.isnan(s) else f"{m:.2f} {PM} {s:.2f}"


def delta_text(treated: list[float] | dict[int, float], baseline: list[float] | dict[int, float]) -> str:
    """A delta cell: Welch's for lists of values, paired by seed for {seed: value} dicts."""
    if isinstance(treated, dict):
        d, lo, hi = paired(treated, baseline)
    else:
        d, lo, hi = welch(treated, baseline)
    mark = "" if (lo > 0 or hi < 0) else MARK
    return f"{d:+.2f} [{lo:+.2f}, {hi:+.2f}]{mark}"


_TEX = {PM: r"$\pm$", MARK: r"$^\dagger$", DASH: "---", "Δ": r"$\Delta$", "×": r"$\times$", "%": r"\%", "_": r"\_",
        "–": "--", "−": "$-$"}


def tex(text: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in text)


# ---- reading rendered tables back ---------------------------------------------------------------------------------


def parse_markdown(text: str) -> tuple[list[str], list[list[str]]]:
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    split = [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in lines]
    return split[0], split[2:]


def parse_latex(text: str) -> tuple[list[str], list[list[str]]]:
    body = text.split("\\toprule", 1)[1].split("\\bottomrule", 1)[0]
    lines = [ln.strip() for ln in body.splitlines() if ln.strip() and ln.strip() != "\\midrule"]
    split = [[c.strip() for c in ln.removesuffix("\\\\").split(" & ")] for ln in lines]
    return split[0], split[1:]


class _TableParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parse_html(text: str) -> tuple[list[str], list[list[str]]]:
    parser = _TableParser()
    parser.feed(text)
    return parser.rows[0], parser.rows[1:]


def read_rendered(folder: Path, table: str, fmt: str) -> tuple[list[str], list[list[str]]]:
    text = (folder / f"{table}.{fmt}").read_text(encoding="utf-8")
    return {"md": parse_markdown, "tex": parse_latex, "html": parse_html}[fmt](text)


def in_format(text: str, fmt: str) -> str:
    """An expected cell text as the given format writes it."""
    return tex(text) if fmt == "tex" else text


# ---- judgments ------------------------------------------------------------------------------------------------

PATTERN = "wwlwtwwlwwtlwwwlwtwwlwww"  # TVRL's verdicts against GRPO, one per (prompt, seed, judge)
PROMPTS = [f"a red circle moving left {i}" for i in range(4)]
JUDGES = ["human:alice", "human:bob"]


def fixture_judgments(study: str) -> tuple[list[Judgment], list[tuple[str, str, str]]]:
    """Stored judgments (half of them with GRPO as method A) and the (prompt, seed, TVRL verdict) truth."""
    stored, truth = [], []
    flip = {"w": "loss", "l": "win", "t": "tie"}
    plain = {"w": "win", "l": "loss", "t": "tie"}
    i = 0
    for p in PROMPTS:
        for seed in range(3):
            for judge in JUDGES:
                v = PATTERN[i]
                truth.append((p, str(seed), v))
                if i % 2:
                    stored.append(Judgment(study, p, str(seed), "GRPO", "TVRL", "TVRL", judge, flip[v]))
                else:
                    stored.append(Judgment(study, p, str(seed), "TVRL", "GRPO", "GRPO", judge, plain[v]))
                i += 1
    for k, p in enumerate(PROMPTS):  # TVRL beats the base model every time
        for seed in range(2):
            if k % 2:
                stored.append(Judgment(study, p, str(seed), "base", "TVRL", "base", "human:alice", "loss"))
            else:
                stored.append(Judgment(study, p, str(seed), "TVRL", "base", "base", "human:alice", "win"))
    stored.append(Judgment(study, PROMPTS[0], "0", "GRPO", "base", "GRPO", "human:alice", "win"))
    stored.append(Judgment("other_study", PROMPTS[0], "0", "TVRL", "GRPO", "GRPO", "human:alice", "loss"))
    return stored, truth
