"""Building VBench-2.0's environment: the commands (it cannot run here: it needs the network), the marker, and the
mmcv-bound fix run for real on stand-in mmdet / mmyolo packages."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.evaluators.vbench2.fixtures import make_vbench2_folder, write_standin
from tvrl_bench.evaluators.vbench2.evaluator import VBench2Evaluator
from tvrl_bench.evaluators.vbench2.env import (
    PATCH_MMCV_BOUND,
    SetupError,
    read_marker,
    run_setup,
    setup_steps,
)


def test_steps_for_a_url_clone_into_the_environment(tmp_path):
    env = tmp_path / "vb2"
    steps = setup_steps(env, "https://github.com/Vchitect/VBench.git")
    commands = [s.command for s in steps]
    folder = env / "src" / "VBench" / "VBench-2.0"
    py = str(env / "bin" / "python")
    assert commands[0] == ("git", "clone", "--depth", "1", "https://github.com/Vchitect/VBench.git", str(folder.parent))
    assert commands[1] == ("python3.10", "-m", "venv", str(env))
    assert (py, "-m", "pip", "install", "-r", str(folder / "requirement.txt")) in commands
    torch = next(c for c in commands if "torch==2.5.1" in c)
    assert torch[-2:] == ("--index-url", "https://download.pytorch.org/whl/cu118") and "torchvision==0.20.1" in torch
    assert (py, "-m", "pip", "install", "-e", str(folder / "vbench2" / "third_party" / "Instance_detector")) in commands
    assert any("mmcv==2.2.0" in c and "-f" in c for c in commands)
    assert commands[-1] == (py, "-c", PATCH_MMCV_BOUND)
    # flash-attn is compiled against the torch installed before it
    names = [s.name for s in steps]
    assert names.index("torch for CUDA 11.8") < names.index("flash-attn") < names.index("VBench-2.0 requirements")


def test_steps_for_a_local_checkout_and_the_marker(tmp_path):
    folder = make_vbench2_folder(tmp_path)
    env = tmp_path / "env"
    steps = setup_steps(env, str(folder.parent), base_python="/opt/python3.10")
    assert steps[0].command == ("/opt/python3.10", "-m", "venv", str(env))
    assert not any(s.command[0] == "git" for s in steps)
    ran = []
    marker = run_setup(env, str(folder), runner=lambda c: ran.append(tuple(c)) or 0, log=lambda _: None)
    assert ran == [s.command for s in setup_steps(env, str(folder))]
    assert read_marker(env) == {"python": str(env.resolve() / "bin" / "python"), "repo": str(folder)}
    assert marker == env / "tvrl_vbench2.json"

    # The evaluator takes the environment folder alone (its Python stands in here).
    os.makedirs(env / "bin", exist_ok=True)
    write_standin(env / "bin" / "python")
    evaluator = VBench2Evaluator(env_dir=str(env))
    assert evaluator.python == str(env.resolve() / "bin" / "python") and evaluator.folder == folder


def test_a_failing_step_is_named(tmp_path):
    folder = make_vbench2_folder(tmp_path)
    codes = iter([0, 0, 1])
    with pytest.raises(SetupError, match=r"(?s)step 3/10 \(torch for CUDA 11.8\) failed with exit code 1.*network access"):
        run_setup(tmp_path / "env", str(folder), runner=lambda c: next(codes), log=lambda _: None)
    assert not (tmp_path / "env" / "tvrl_vbench2.json").exists()
    with pytest.raises(SetupError, match="not a VBench-2.0 environment made by `tvrl-bench vbench2 setup`"):
        read_marker(tmp_path / "env")


def test_mmcv_bound_fix_edits_mmdet_and_mmyolo(tmp_path):
    for name in ("mmdet", "mmyolo"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(
            "import mmcv\nmmcv_minimum_version = '2.0.0rc4'\nmmcv_maximum_version = '2.1.0'\nassert False\n"
        )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", PATCH_MMCV_BOUND], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name in ("mmdet", "mmyolo"):
        text = (tmp_path / name / "__init__.py").read_text()
        assert "mmcv_maximum_version = '2.3.0'" in text and "mmcv_minimum_version = '2.0.0rc4'" in text
    (tmp_path / "mmyolo" / "__init__.py").write_text("x = 1\n")
    failed = subprocess.run([sys.executable, "-c", PATCH_MMCV_BOUND], env=env, capture_output=True, text=True)
    assert failed.returncode != 0 and "no mmcv_maximum_version line" in failed.stderr
