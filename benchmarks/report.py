"""Benchmark: regenerate all four paper tables of a study with 1,000 runs (not a test).

Builds (once, then reuses) a SQLite MLflow store with one study of 1,000 finished trial runs in the docs/report.md layout
(3 samplers x 4 reward models x 7 credit routers x seeds, plus base-model runs; eval/overall, the five VBench-2.0
categories, 18 eval/dim/* metrics, 50-step training curves) and 2,000 win-rate judgments, then times
`regenerate(...)` in this process: tables only (md, tex, csv, html; logged to the parent run), and tables with plots.

    python benchmarks/report.py [--root DIR] [--repeats 3] [--runs 1000]

Prints the setup, import and per-repeat figures; the last line is `report_s=<median seconds, tables only>`.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tvrl_bench.cli.script import UserError, at_least, must, run_script, script_parser

STUDY = "bench_1000"
RUNS = 1000
BASE_RUNS = 40  # 4 rewards x 10 seeds, before any trained run
SAMPLERS = ["sage", "flow", "dance"]
REWARDS = ["videoalign", "videoscore2", "unifiedreward2", "qwen3_5_9b"]
CREDITS = ["uniform", "frame", "window7", "window3", "window1", "shuffled3", "dinov2"]
CATEGORIES = ["creativity", "commonsense", "controllability", "human_fidelity", "physics"]
DIMENSIONS = [f"dimension_{i:02d}" for i in range(18)]


def trial_params(runs: int = RUNS) -> list[dict[str, str]]:
    """`runs` param sets (more than BASE_RUNS): 40 base runs (4 rewards x 10 seeds), the rest trained (960 of
    1,000)."""
    if runs <= BASE_RUNS:
        raise ValueError(f"{runs} runs: the study needs its {BASE_RUNS} base runs and at least one trained run")
    base = [{"reward": r, "sampler": "sage", "credit": "uniform", "method": "base", "seed": str(s)}
            for r in REWARDS for s in range(10)]
    combos = list(itertools.product(SAMPLERS, REWARDS, CREDITS))
    trained = []
    for seed in itertools.count():
        for sampler, reward, credit in combos:
            if len(base) + len(trained) == runs:
                return base + trained
            method = "GRPO" if credit == "uniform" else "TVRL"
            trained.append({"reward": reward, "sampler": sampler, "credit": credit, "method": method,
                            "seed": str(seed)})
    raise AssertionError("unreachable")


def build_store(root: Path, runs: int = RUNS) -> str:
    """The tracking URI of the benchmark store of `runs` runs, creating it when it is not there yet."""
    from mlflow import MlflowClient
    from mlflow.entities import Metric, Param

    db = root / "mlflow.db"
    uri = f"sqlite:///{db}"
    done = root / "complete"
    if done.is_file() and done.read_text() == f"{runs} runs\n":
        return uri
    root.mkdir(parents=True, exist_ok=True)
    db.unlink(missing_ok=True)
    start = time.perf_counter()
    client = MlflowClient(uri)
    experiment = client.create_experiment(STUDY, artifact_location=str(root / "artifacts"))
    parent = client.create_run(experiment, run_name=STUDY, tags={"tvrl.role": "study", "tvrl.study": STUDY})
    rng = random.Random(0)
    for i, params in enumerate(trial_params(runs)):
        tags = {"mlflow.parentRunId": parent.info.run_id, "tvrl.role": "trial", "tvrl.study": STUDY,
                "tvrl.trial_key": f"k{i}", "tvrl.attempt": "0"}
        run = client.create_run(experiment, tags=tags)
        level = 0.4 if params["method"] == "base" else 0.5 + 0.03 * (params["method"] == "TVRL")
        metrics = [Metric("eval/overall", level + rng.gauss(0, 0.02), 0, 100)]
        metrics += [Metric(f"eval/{c}", level + rng.gauss(0, 0.03), 0, 100) for c in CATEGORIES]
        metrics += [Metric(f"eval/dim/{d}", rng.random(), 0, 100) for d in DIMENSIONS]
        if params["method"] != "base":
            metrics += [Metric("train/reward_mean", level * step / 50 + rng.gauss(0, 0.01), 0, step)
                        for step in range(50)]
            metrics += [Metric("train/credit_entropy", 1 - step / 100, 0, step) for step in range(50)]
        all_params = {**params, "policy": "toy", "lr": "1e-4", "steps": "100", "group_size": "8"}
        client.log_batch(run.info.run_id, metrics=metrics, params=[Param(k, v) for k, v in all_params.items()])
        client.set_terminated(run.info.run_id)
    for status in ("FAILED", "KILLED"):
        run = client.create_run(experiment, tags={"mlflow.parentRunId": parent.info.run_id, "tvrl.role": "trial"})
        client.set_terminated(run.info.run_id, status)
    client.set_terminated(parent.info.run_id)
    build_judgments(root / "judgments.sqlite")
    done.write_text(f"{runs} runs\n")
    print(f"setup_s={time.perf_counter() - start:.1f} (store built once at {root})")
    return uri


def build_judgments(path: Path) -> None:
    from tvrl_bench.report.winrate.judgments import Judgment, JudgmentStore

    rng = random.Random(1)
    judgments = []
    for opponent, p_win in (("GRPO", 0.6), ("base", 0.8)):
        for prompt, seed, judge in itertools.product(range(50), range(10), ("human:alice", "human:bob")):
            u = rng.random()
            verdict = "win" if u < p_win else ("tie" if u < p_win + 0.1 else "loss")
            left = rng.choice(["TVRL", opponent])
            judgments.append(Judgment(STUDY, f"prompt {prompt}", str(seed), "TVRL", opponent, left, judge, verdict))
    with JudgmentStore(path) as store:
        store.add(judgments)


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--root", default=str(Path(tempfile.gettempdir()) / "tvrl-bench-report-benchmark"),
                        help="where the benchmark store is built once and reused")
    parser.add_argument("--repeats", type=int, default=3, action=at_least(1), help="timed regenerations (default 3)")
    parser.add_argument("--runs", type=int, default=RUNS,
                        action=must(lambda v: v > BASE_RUNS, f"{BASE_RUNS + 1} or more ({BASE_RUNS} base runs and a "
                                                              "trained one)"),
                        help=f"finished trial runs in the study (>= {BASE_RUNS + 1}; default {RUNS})")
    return run_script(parser, benchmark, argv)


def benchmark(args: argparse.Namespace) -> None:
    root = Path(args.root)
    if root.exists() and not root.is_dir():
        raise UserError(f"--root {root}: this is a file; name a folder for the benchmark store")

    start = time.perf_counter()
    import mlflow  # noqa: F401

    from tvrl_bench.report.pipeline import regenerate

    print(f"import_s={time.perf_counter() - start:.2f} (mlflow, pandas, tvrl_bench.report; not counted below)")
    uri = build_store(root, args.runs)
    tables = ["rewards", "samplers", "credit", "winrate"]
    judgments = root / "judgments.sqlite"

    def timed(plots: bool) -> float:
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            summary = regenerate(STUDY, tracking_uri=uri, out_dir=out, tables=tables, plots=plots,
                                 judgments=judgments)
            seconds = time.perf_counter() - t0
        assert sorted(summary["tables"]) == sorted(tables), summary["skipped"]
        assert summary["runs"]["finished"] == args.runs and summary["logged"]
        return seconds

    with_plots = [timed(plots=True) for _ in range(args.repeats)]
    tables_only = [timed(plots=False) for _ in range(args.repeats)]
    print(f"runs={args.runs} tables={len(tables)} formats=md,tex,csv,html (logged to the parent run)")
    print("with_plots_s=" + ",".join(f"{s:.2f}" for s in with_plots)
          + f" median={statistics.median(with_plots):.2f} (curves: <= 10 runs per cell; heatmaps)")
    print("tables_only_s=" + ",".join(f"{s:.2f}" for s in tables_only))
    print(f"report_s={statistics.median(tables_only):.2f}")


if __name__ == "__main__":
    sys.exit(main())
