"""Creating VBench-2.0's own Python environment (it pins old torch, transformers, numpy and diffusers).

The steps follow VBench-2.0's README ("Install with pip"), with a plain venv in place of conda:
 1. `git clone --depth 1 <url> <env>/src/VBench` when --repo is a URL (a local checkout is used in place);
 2. `<python3.10> -m venv <env>`;
 3. pip itself, then torch 2.5.1 / torchvision 0.20.1 / torchaudio 2.5.1 built for CUDA 11.8 (PyTorch's index);
 4. ninja and flash-attn 2.7.2.post1 (compiled against that torch: --no-build-isolation);
 5. `pip install -r VBench-2.0/requirement.txt` (it pins transformers 4.51.0, numpy 1.26.3, diffusers 0.32.1 and
    installs LLaVA-NeXT and YOLO-World from git);
 6. `retinaface_pytorch==0.0.8 --no-deps`, the Instance_detector third-party package in editable mode, and
    mmcv 2.2.0 from OpenMMLab's CUDA 11.8 / torch 2.4 wheel index;
 7. raise `mmcv_maximum_version` to '2.3.0' in mmdet's and mmyolo's `__init__.py` (the README's manual fix);
 8. write `<env>/tvrl_vbench2.json` (`{"python": ..., "repo": ...}`) so the evaluator needs only `env_dir`.
Every step needs network access (PyPI, PyTorch's and OpenMMLab's wheel indexes, GitHub) and a CUDA 11.8 toolchain
for flash-attn; VBench-2.0 downloads its model weights itself into ~/.cache/vbench2 on first use.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

DEFAULT_REPO = "https://github.com/Vchitect/VBench.git"
TORCH_INDEX = "https://download.pytorch.org/whl/cu118"
MMCV_INDEX = "https://download.openmmlab.com/mmcv/dist/cu118/torch2.4/index.html"
MARKER = "tvrl_vbench2.json"

# Run with the new environment's Python: raise mmdet's and mmyolo's mmcv upper bound. find_spec locates the
# packages without importing them (importing fails on the very version check being fixed).
PATCH_MMCV_BOUND = """\
import importlib.util, pathlib, re, sys
for name in ("mmdet", "mmyolo"):
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        sys.exit(f"{name} is not installed in this environment; rerun the requirement.txt step")
    path = pathlib.Path(spec.origin)
    text = path.read_text()
    new, n = re.subn(r"mmcv_maximum_version\\s*=\\s*['\\"][^'\\"]*['\\"]", "mmcv_maximum_version = '2.3.0'", text)
    if n == 0:
        sys.exit(f"{path}: no mmcv_maximum_version line to raise")
    path.write_text(new)
    print(f"{path}: mmcv_maximum_version = '2.3.0'")
"""


class SetupError(RuntimeError):
    """A setup step failed; the message names the step and its command."""


@dataclass(frozen=True)
class Step:
    """One setup step: a description and the argv that performs it."""

    name: str
    command: tuple[str, ...]

    def describe(self) -> str:
        return shlex.join(self.command)


def is_url(repo: str) -> bool:
    return "://" in repo or repo.startswith("git@")


def env_python(env_dir: str | Path) -> Path:
    """The Python interpreter of a venv at `env_dir`."""
    return Path(env_dir) / "bin" / "python"


def vbench2_dir_of(repo: str, env_dir: str | Path) -> Path:
    """The VBench-2.0 folder setup uses: the clone's for a URL, else the checkout's (root or VBench-2.0 itself)."""
    if is_url(repo):
        return Path(env_dir).resolve() / "src" / "VBench" / "VBench-2.0"
    root = Path(repo).expanduser().resolve()
    return root if (root / "evaluate.py").is_file() else root / "VBench-2.0"


def setup_steps(env_dir: str | Path, repo: str = DEFAULT_REPO, base_python: str = "python3.10") -> list[Step]:
    """The commands that build VBench-2.0's environment at `env_dir` (see the module docstring)."""
    env_dir = Path(env_dir).resolve()
    py = str(env_python(env_dir))
    folder = vbench2_dir_of(repo, env_dir)
    pip = (py, "-m", "pip", "install")
    steps = []
    if is_url(repo):
        steps.append(Step("clone VBench", ("git", "clone", "--depth", "1", repo, str(folder.parent))))
    steps += [
        Step("create the venv", (base_python, "-m", "venv", str(env_dir))),
        Step("upgrade pip", pip + ("--upgrade", "pip")),
        Step("torch for CUDA 11.8", pip + ("torch==2.5.1", "torchvision==0.20.1", "torchaudio==2.5.1",
                                           "--index-url", TORCH_INDEX)),
        Step("ninja", pip + ("ninja",)),
        Step("flash-attn", pip + ("flash-attn==2.7.2.post1", "--no-build-isolation")),
        Step("VBench-2.0 requirements", pip + ("-r", str(folder / "requirement.txt"))),
        Step("retinaface", pip + ("retinaface_pytorch==0.0.8", "--no-deps")),
        Step("Instance_detector", pip + ("-e", str(folder / "vbench2" / "third_party" / "Instance_detector"))),
        Step("mmcv 2.2.0", pip + ("mmcv==2.2.0", "-f", MMCV_INDEX, "--no-cache-dir")),
        Step("raise mmdet/mmyolo's mmcv bound", (py, "-c", PATCH_MMCV_BOUND)),
    ]
    return steps


def write_marker(env_dir: str | Path, folder: str | Path) -> Path:
    """Record the environment's Python and VBench-2.0 folder in `<env_dir>/tvrl_vbench2.json`."""
    path = Path(env_dir) / MARKER
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"python": str(env_python(Path(env_dir).resolve())), "repo": str(folder)}, indent=2))
    return path


def read_marker(env_dir: str | Path) -> dict[str, str]:
    """{"python", "repo"} of an environment made by `tvrl-bench vbench2 setup`."""
    path = Path(env_dir).expanduser() / MARKER
    if not path.is_file():
        raise SetupError(
            f"{env_dir} is not a VBench-2.0 environment made by `tvrl-bench vbench2 setup` (no {MARKER}); run "
            f"`tvrl-bench vbench2 setup --env {env_dir}`, or give repo and python_executable instead of env_dir"
        )
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not {"python", "repo"} <= set(data):
        raise SetupError(f"{path}: expected {{'python': ..., 'repo': ...}}; rerun `tvrl-bench vbench2 setup`")
    return data


Runner = Callable[[Sequence[str]], int]


def _subprocess_runner(command: Sequence[str]) -> int:
    return subprocess.run(list(command), check=False).returncode


def run_setup(env_dir: str | Path, repo: str = DEFAULT_REPO, base_python: str = "python3.10",
              runner: Runner = _subprocess_runner, log: Callable[[str], None] = print) -> Path:
    """Run every setup step (stopping at the first failure) and write the marker; returns the marker's path."""
    steps = setup_steps(env_dir, repo, base_python)
    for i, step in enumerate(steps, 1):
        log(f"[{i}/{len(steps)}] {step.name}: {step.describe()}")
        code = runner(step.command)
        if code != 0:
            raise SetupError(
                f"setup step {i}/{len(steps)} ({step.name}) failed with exit code {code}:\n    {step.describe()}\n"
                "Every step needs network access (PyPI, PyTorch's and OpenMMLab's indexes, GitHub); flash-attn "
                "also needs CUDA 11.8 and a recent gcc. Fix the cause and rerun setup (finished steps are quick)."
            )
    folder = vbench2_dir_of(repo, env_dir)
    return write_marker(env_dir, folder)
