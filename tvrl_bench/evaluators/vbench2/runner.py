"""Running VBench-2.0's `evaluate.py`, one dimension per process, in VBench-2.0's own Python environment.

Each dimension runs as
    <python> <VBench-2.0>/evaluate.py --videos_path <videos>/<Dimension> --dimension <Dimension>
        --output_path <results>/<Dimension> --full_json_dir <info>/<Dimension>_full_info.json --mode vbench_standard
with the VBench-2.0 folder as working directory (its Human_Anatomy config paths are relative to it), its output
and errors going to `<logs>/<Dimension>.log`. `--full_json_dir` points at the suite's entries for the prompts
that were generated, so standard mode (which needs every listed prompt's videos) evaluates just those prompts
with their auxiliary info. Given GPUs, dimensions run in parallel, one per GPU (CUDA_VISIBLE_DEVICES), as
VBench-2.0's evaluate.sh does.
"""

from __future__ import annotations

import os
import queue
import shlex
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from tvrl_bench.evaluators.vbench2.results import RESULTS_SUFFIX


class VBench2RunError(RuntimeError):
    """A VBench-2.0 dimension failed; the message names the dimension, the command and the log file."""


@dataclass(frozen=True)
class DimensionRun:
    """Everything needed to evaluate one dimension in VBench-2.0's environment."""

    dimension: str
    command: tuple[str, ...]
    cwd: Path
    output_dir: Path
    log_path: Path

    def describe(self) -> str:
        return f"cd {shlex.quote(str(self.cwd))} && {shlex.join(self.command)}"


def build_command(
    python: str,
    folder: Path,
    dimension: str,
    videos_dir: Path,
    output_dir: Path,
    info_json: Path,
    load_ckpt_from_local: bool = False,
    extra_args: Sequence[str] = (),
) -> tuple[str, ...]:
    """The argv that evaluates `dimension` with VBench-2.0's evaluate.py (see the module docstring)."""
    command = [
        str(python),
        str(folder / "evaluate.py"),
        "--videos_path", str(videos_dir),
        "--dimension", dimension,
        "--output_path", str(output_dir),
        "--full_json_dir", str(info_json),
        "--mode", "vbench_standard",
    ]
    if load_ckpt_from_local:
        # evaluate.py parses this flag with type=bool: any non-empty value means True.
        command += ["--load_ckpt_from_local", "True"]
    return tuple(command + [str(a) for a in extra_args])


def run_dimension(run: DimensionRun, timeout_s: float, gpu: str | None = None) -> Path:
    """Run one dimension and return its results JSON; raise VBench2RunError naming command and log on failure."""
    run.output_dir.mkdir(parents=True, exist_ok=True)
    for stale in run.output_dir.glob(f"*{RESULTS_SUFFIX}"):
        stale.unlink()
    run.log_path.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
    where = f"\n    command: {run.describe()}\n    log: {run.log_path}"
    with open(run.log_path, "w", encoding="utf-8") as log:
        log.write(f"$ {run.describe()}\n")
        log.flush()
        try:
            # A session of its own so a timeout can end evaluate.py together with any process it started.
            process = subprocess.Popen(
                run.command, cwd=run.cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        except OSError as exc:
            raise VBench2RunError(
                f"VBench-2.0 dimension {run.dimension} could not start: {exc}. Check python_executable (or env_dir; "
                f"`tvrl-bench vbench2 setup` creates the environment).{where}"
            ) from None
        try:
            code = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise VBench2RunError(
                f"VBench-2.0 dimension {run.dimension} did not finish within {timeout_s:g} s and was stopped; "
                f"raise timeout_s or evaluate fewer prompts.{where}"
            ) from None
    if code != 0:
        raise VBench2RunError(
            f"VBench-2.0 dimension {run.dimension} failed with exit code {code}; the end of its log says why."
            f"{where}\n{_tail(run.log_path)}"
        )
    found = sorted(run.output_dir.glob(f"*{RESULTS_SUFFIX}"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise VBench2RunError(
            f"VBench-2.0 dimension {run.dimension} exited normally but wrote no '*{RESULTS_SUFFIX}' in "
            f"{run.output_dir}; its log may say why.{where}\n{_tail(run.log_path)}"
        )
    return found[-1]


def run_dimensions(runs: Sequence[DimensionRun], timeout_s: float, gpus: Sequence[str] = ()) -> dict[str, Path]:
    """Run every dimension (in parallel, one per GPU, when `gpus` are given); dimension -> results JSON.

    The first failure is raised after the dimensions already started have finished.
    """
    if not gpus:
        return {run.dimension: run_dimension(run, timeout_s) for run in runs}
    free: queue.Queue[str] = queue.Queue()
    for gpu in gpus:
        free.put(str(gpu))

    def on_free_gpu(run: DimensionRun) -> Path:
        gpu = free.get()  # each dimension holds one GPU for its whole run, so two never share one
        try:
            return run_dimension(run, timeout_s, gpu)
        finally:
            free.put(gpu)

    with ThreadPoolExecutor(max_workers=len(gpus)) as pool:
        futures = [(run.dimension, pool.submit(on_free_gpu, run)) for run in runs]
        return {dimension: future.result() for dimension, future in futures}


def _tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "    | " + "\n    | ".join(text[-lines:])
