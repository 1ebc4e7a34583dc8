"""A toy blind study logged for real (MLflow on SQLite, real mp4 samples), servers to drive, and expected numbers.

The study follows docs/report.md: a parent run and one child trial per (method, seed) with params policy, sampler,
reward, credit, method, seed, tags tvrl.*, FINISHED, and `samples/final/` (sample_000.mp4 ... + index.json).
TVRL's samples are the ground-truth renders of their prompts, GRPO's are renders of another prompt, so every video
file is distinct; `videos` maps each file's SHA-256 to (method, prompt, seed), which lets a test tell which method
the browser shows on which side from the bytes alone, without asking the server.
"""

from __future__ import annotations

import hashlib
import random
import re
import socket
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlflow import MlflowClient

from tests.report.helpers import StudyLog
from tests.support import console_script
from tvrl_bench.videoio import write_mp4
from tvrl_bench.datasets.toy import toy_prompt_set
from tvrl_bench.world import ground_truth_videos

METHODS = {"TVRL": "window3", "GRPO": "uniform"}  # method -> credit preset


@dataclass
class ToyStudy:
    root: Path
    uri: str
    study: str
    prompts: list[str]
    seeds: list[str]
    videos: dict[str, tuple[str, str, str]]  # sha256 of the mp4 -> (method, prompt, seed)
    runs: dict[str, dict[str, str]] = field(default_factory=dict)  # run_id -> {"name", "method", "seed", "credit"}

    def forbidden(self) -> list[str]:
        """Strings that would reveal a side: method names, run ids and names, the credit presets."""
        words = set(METHODS) | set(METHODS.values())
        for run_id, info in self.runs.items():
            words |= {run_id, info["name"]}
        return sorted(words)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def log_toy_study(root: Path, study: str = "blind_toy", n_prompts: int = 3, seeds: tuple[int, ...] = (0, 1),
                  samplers: tuple[str, ...] = ("sage",)) -> ToyStudy:
    """Log the study into the SQLite tracking store `root`/mlflow.db (created when missing)."""
    uri = f"sqlite:///{root / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    log = StudyLog(client, study, root / "artifacts")
    items = toy_prompt_set(n_train=0, n_eval=n_prompts).eval
    prompts = [i.prompt for i in items]
    result = ToyStudy(root, uri, study, prompts, [str(s) for s in seeds], {})
    for s_index, sampler in enumerate(samplers):
        for seed in seeds:
            truth = ground_truth_videos(prompts, random.Random(100 * s_index + seed))
            other = ground_truth_videos(prompts[1:] + prompts[:1], random.Random(1000 + 100 * s_index + seed))
            for method, credit in METHODS.items():
                params = {"policy": "toy", "sampler": sampler, "reward": "toy_oracle", "credit": credit,
                          "method": method, "seed": str(seed)}
                run_id = log.trial(params, {"eval/overall": 0.5})
                folder = root / "samples" / study / run_id
                files, index = {}, []
                for i, item in enumerate(items):
                    name = f"sample_{i:03d}.mp4"
                    path = write_mp4((truth if method == "TVRL" else other)[i], folder / name, fps=4, min_side=128)
                    files[name] = path
                    index.append({"file": name, "index": i, "prompt": item.prompt, "checks": list(item.checks),
                                  "seed": seed})
                    digest = sha256(path.read_bytes())
                    assert digest not in result.videos, "toy study videos must be distinct"
                    result.videos[digest] = (method, item.prompt, str(seed))
                log.log_samples(run_id, index, files)
                run = client.get_run(run_id)
                result.runs[run_id] = {"name": run.info.run_name, "method": method, "seed": str(seed),
                                       "credit": credit}
    log.finish()
    return result


# ---- servers -----------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening_addresses(port: int) -> set[str]:
    """Local addresses of the LISTEN sockets on `port`, read from the kernel (/proc/net/tcp, tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                if len(address) == 8:
                    found.add(".".join(str(int(address[i:i + 2], 16)) for i in (6, 4, 2, 0)))
                else:
                    found.add(address)
    return found


class CliServer:
    """`tvrl-bench annotate ...` as a real process; `start` waits for its links, `stop` sends Ctrl-C (SIGINT)."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.args = args
        self.cwd = cwd
        self.proc: subprocess.Popen | None = None
        self.lines: list[str] = []
        self.links: dict[str, str] = {}
        self.base_url = ""

    def start(self, timeout: float = 60.0) -> "CliServer":
        return self.launch().wait(timeout)

    def launch(self) -> "CliServer":
        """Start the process without waiting (`wait` reads its links)."""
        self.lines, self.links = [], {}
        self.proc = subprocess.Popen([console_script("tvrl-bench"), "annotate", *self.args], cwd=self.cwd,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        return self

    def wait(self, timeout: float = 60.0) -> "CliServer":
        """Until the server prints that it is serving; its links are then in `links`."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError("tvrl-bench annotate exited early:\n" + "".join(self.lines))
            self.lines.append(line)
            if m := re.match(r"\s+human:(\S+)\s+(http://\S+)", line):
                self.links[m.group(1)] = m.group(2)
            if m := re.match(r"serving on (http://\S+)", line):
                self.base_url = m.group(1)
                threading.Thread(target=self._drain, daemon=True).start()
                return self
        raise AssertionError("tvrl-bench annotate did not start in time:\n" + "".join(self.lines))

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(2)  # SIGINT, as Ctrl-C
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


class ThreadServer:
    """The app of a session served by uvicorn in a thread of the test process (stopped by `stop`)."""

    def __init__(self, session: Any) -> None:
        import uvicorn

        from tvrl_bench.annotate.server import bind, create_app

        self.bound = bind("127.0.0.1", 0)
        config = uvicorn.Config(create_app(session), log_level="warning", access_log=False, lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.bound.sock]}, daemon=True)

    @property
    def url(self) -> str:
        return self.bound.base_url

    def __enter__(self) -> "ThreadServer":
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise AssertionError("the annotation server thread did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


# ---- expected numbers ----------------------------------------------------------------------------------------------


def winrate_row(votes: list[tuple[str, str]]) -> dict[str, str]:
    """Cells of the "TVRL vs GRPO" row from (seed, verdict for TVRL) votes, computed here from the definitions:
    Win / Loss / Tie as % of n, win rate excluding ties ± the sample std of the per-seed win rates, n."""
    n = len(votes)
    wins = sum(v == "win" for _, v in votes)
    losses = sum(v == "loss" for _, v in votes)
    ties = n - wins - losses
    per_seed = []
    for seed in sorted({s for s, _ in votes}):
        decisive = [v for s, v in votes if s == seed and v != "tie"]
        if decisive:
            per_seed.append(100 * sum(v == "win" for v in decisive) / len(decisive))
    rate = 100 * wins / (wins + losses)
    spread = f" ± {statistics.stdev(per_seed):.2f}" if len(per_seed) > 1 else ""
    return {"Win": f"{100 * wins / n:.2f}", "Loss": f"{100 * losses / n:.2f}", "Tie": f"{100 * ties / n:.2f}",
            "Win rate (excl. ties)": f"{rate:.2f}{spread}", "n": str(n)}
