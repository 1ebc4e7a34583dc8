"""Benchmark: write the study page (reports/<study>/index.html) of a 10-run study (not a test).

Builds (once, then reuses) a SQLite MLflow store with one study of 10 finished trial runs shaped like a toy sweep's:
the base model and four trained methods (uniform and window3 credit under toy_oracle and toy_pattern), 2 seeds
each; eval/overall, eval/critic_reward and the four toy categories at steps 0, 20, 40, 60; 60 steps of
train/reward_mean; and every run's artifacts: eval/results.json (64 records with their checks), samples/final
(index.json and 4 H.264 mp4s at 128 x 128, as trials write them) and credit/step_000001.png (a heatmap-sized PNG).
Like a default trial, every run also ends with a wide evaluation: wide_eval/overall, wide_eval/critic_reward and the
categories, and wide_eval/results.json with one record per held-out prompt (626 by default, as the default
regime's wide evaluation; `--wide-prompts 0` leaves it out), so the page reads the wide scores, one task per prompt.
Then, in a fresh process per repeat (so imports count, as in `tvrl-report`), times `regenerate(...)` of the power
table with the page, and the page alone (`summary["page"]["seconds"]`: runs read, artifacts downloaded, statistics,
bootstrap, HTML and CSV written).

    python benchmarks/study_page.py [--root DIR] [--repeats 3] [--wide-prompts 626]

The last line is `page_s=<median seconds of the page alone> total_s=<median of regenerate with the page>`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tvrl_bench.cli.script import UserError, at_least, run_script, scratch, script_parser

STUDY = "page_bench"
SEEDS = (0, 1)
METHODS = [("base", "window3", "toy_pattern"), ("GRPO", "uniform", "toy_oracle"), ("TVRL", "window3", "toy_oracle"),
           ("GRPO", "uniform", "toy_pattern"), ("TVRL", "window3", "toy_pattern")]
CATEGORIES = ("attribute", "background", "motion", "object")


def blobs(rng) -> "torch.Tensor":
    """A toy-sized video[8, 3, 16, 16]: a coloured square on a flat background moving one pixel per frame."""
    import torch

    video = torch.zeros(8, 3, 16, 16) + torch.tensor(rng.random(3), dtype=torch.float32)[None, :, None, None] * 0.3
    colour = torch.tensor(rng.random(3), dtype=torch.float32)[:, None, None]
    for f in range(8):
        video[f, :, 5:11, 2 + f:8 + f] = colour
    return video


def records(rng, prompts: int) -> list[dict]:
    """Per-prompt evaluator records as a trial logs them: four checks each, half passed at random."""
    out = []
    for p in range(prompts):
        checks = [{"check": f"Is there a thing {c}?", "category": CATEGORIES[c], "answer": "yes",
                   "passed": bool(rng.random() < 0.5)} for c in range(4)]
        out.append({"index": p, "prompt": f"prompt {p}", "score": sum(c["passed"] for c in checks) / 4,
                    "checks": checks})
    return out


def build_store(root: Path, wide_prompts: int) -> str:
    """The tracking URI of the benchmark store (in `root`/wide<N>), creating it when it is not there yet."""
    root = root / f"wide{wide_prompts}"
    import numpy as np
    import torch
    from matplotlib.image import imsave
    from mlflow import MlflowClient
    from mlflow.entities import Metric, Param

    from tvrl_bench.videoio import write_mp4

    uri = f"sqlite:///{root / 'mlflow.db'}"
    if (root / "complete").is_file():
        return uri
    root.mkdir(parents=True, exist_ok=True)
    client = MlflowClient(uri)
    experiment = client.create_experiment(STUDY, artifact_location=str(root / "artifacts"))
    parent = client.create_run(experiment, run_name=STUDY, tags={"tvrl.role": "study", "tvrl.study": STUDY,
                                                                  "tvrl.tables": "power"}).info.run_id
    rng = np.random.default_rng(0)
    files = root / "files"
    for k, (method, credit, reward) in enumerate(METHODS):
        for seed in SEEDS:
            steps = (0,) if method == "base" else (0, 20, 40, 60)
            tags = {"tvrl.role": "trial", "tvrl.study": STUDY, "tvrl.trial_key": f"{k}-{seed}", "tvrl.attempt": "1",
                    "mlflow.parentRunId": parent}
            run_id = client.create_run(experiment, run_name=f"{credit}-{reward}-s{seed}", tags=tags).info.run_id
            metrics = []
            for i, step in enumerate(steps):
                level = 0.4 + 0.02 * i * (k % 3) + 0.01 * seed
                metrics += [Metric("eval/overall", level, 0, step), Metric("eval/critic_reward", 0.3 + 0.03 * i * k, 0, step)]
                metrics += [Metric(f"eval/{c}", level + 0.01 * j, 0, step) for j, c in enumerate(CATEGORIES)]
            if method != "base":
                metrics += [Metric("train/reward_mean", 0.3 + 0.001 * s, 0, s) for s in range(1, 61)]
            params = {"policy": "toy", "sampler": "sage", "reward": reward, "credit": credit, "method": method,
                      "seed": str(seed)}
            if wide_prompts:
                final, level = steps[-1], 0.45 + 0.01 * k + 0.005 * seed
                metrics += [Metric("wide_eval/overall", level, 0, final),
                            Metric("wide_eval/critic_reward", 0.35 + 0.015 * k, 0, final)]
                metrics += [Metric(f"wide_eval/{c}", level + 0.01 * j, 0, final) for j, c in enumerate(CATEGORIES)]
            client.log_batch(run_id, metrics=metrics, params=[Param(a, b) for a, b in params.items()])
            folder = files / run_id
            (folder / "samples").mkdir(parents=True)
            (folder / "results.json").write_text(json.dumps(records(rng, 64)))
            client.log_artifact(run_id, str(folder / "results.json"), "eval")
            if wide_prompts:
                (folder / "wide").mkdir()
                (folder / "wide" / "results.json").write_text(json.dumps(records(rng, wide_prompts)))
                client.log_artifact(run_id, str(folder / "wide" / "results.json"), "wide_eval")
            index = []
            for p in range(4):
                write_mp4(blobs(rng), folder / "samples" / f"sample_{p:03d}.mp4", fps=4, min_side=128)
                index.append({"file": f"sample_{p:03d}.mp4", "index": p, "prompt": f"prompt {p}",
                              "checks": [f"Is there a thing {c}?" for c in range(4)], "seed": seed})
            (folder / "samples" / "index.json").write_text(json.dumps(index))
            client.log_artifacts(run_id, str(folder / "samples"), "samples/final")
            if method != "base":
                imsave(folder / "step_000001.png", np.add.outer(np.sin(np.arange(330) / 40), np.cos(np.arange(1144) / 90)),
                       cmap="inferno")
                client.log_artifact(run_id, str(folder / "step_000001.png"), "credit")
            client.set_terminated(run_id, "FINISHED")
    client.set_terminated(parent, "FINISHED")
    (root / "complete").write_text("10 runs\n")
    return uri


def time_once(uri: str, out: str) -> None:
    """One regenerate with the page, in this (fresh) process; prints `<total> <page>` seconds."""
    start = time.perf_counter()
    from tvrl_bench.report import regenerate

    summary = regenerate(STUDY, tracking_uri=uri, out_dir=out, tables="power", plots=False)
    total = time.perf_counter() - start
    assert summary["page"] and "error" not in summary["page"], summary["page"]
    print(f"{total:.3f} {summary['page']['seconds']:.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--root", default=str(Path(tempfile.gettempdir()) / "tvrl_page_bench"),
                        help="folder of the benchmark store (built once per --wide-prompts under ROOT/wide<N>, then "
                             "reused) and of the page it writes (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, action=at_least(1),
                        help="how many times to time regenerate, each in a fresh process (default: %(default)s)")
    parser.add_argument("--wide-prompts", type=int, default=626, action=at_least(0),
                        help="held-out prompts of each run's wide evaluation (wide_eval/results.json), as a default "
                             "trial logs; 0: no wide evaluation, the page reads eval/* (default: %(default)s)")
    parser.add_argument("--time-once", nargs=2, metavar=("URI", "OUT"), help=argparse.SUPPRESS)
    return run_script(parser, benchmark, argv)


def benchmark(args: argparse.Namespace) -> None:
    if args.time_once:
        time_once(*args.time_once)
        return
    root = Path(args.root)
    if root.exists() and not root.is_dir():
        raise UserError(f"--root {root}: this is a file; name a folder for the benchmark store and its page")
    start = time.perf_counter()
    uri = build_store(root, args.wide_prompts)
    print(f"store: {uri} (10 runs with artifacts, wide evaluation of {args.wide_prompts} prompts; ready in "
          f"{time.perf_counter() - start:.1f} s)")
    totals, pages = [], []
    with scratch(None) as children:
        for i in range(args.repeats):
            done = children.run([sys.executable, __file__, "--time-once", uri, str(root / "reports")],
                                capture_output=True, text=True)
            if done.returncode != 0:
                lines = done.stderr.strip().splitlines()
                raise UserError(f"repeat {i + 1} failed (exit {done.returncode}): {lines[-1] if lines else 'no output'}")
            total, page = (float(x) for x in done.stdout.split()[-2:])
            totals.append(total)
            pages.append(page)
            print(f"repeat {i + 1}: regenerate with the page {total:.2f} s (imports included), the page {page:.2f} s")
    print(f"page: {root / 'reports' / STUDY / 'index.html'} ({(root / 'reports' / STUDY / 'index.html').stat().st_size // 1024} KiB)")
    print(f"page_s={statistics.median(pages):.2f} total_s={statistics.median(totals):.2f}")


if __name__ == "__main__":
    sys.exit(main())
