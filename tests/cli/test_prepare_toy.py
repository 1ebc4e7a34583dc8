"""`tvrl-bench prepare-toy` through the installed console script."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.support import console_script
from tvrl_bench.cli.main import build_parser, main
from tvrl_bench.policies.toy import ToyPolicy

pytestmark = pytest.mark.integration


def test_prepare_toy_policy_writes_a_loadable_checkpoint(tmp_path):
    result = subprocess.run(
        [console_script("tvrl-bench"), "prepare-toy", "--what", "policy", "--recipe", "v1", "--steps", "3",
         "--eval-prompts", "2", "--out", str(tmp_path), "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    folder = tmp_path / "toy_policy"
    policy = ToyPolicy(str(folder))
    assert policy.latent_shape() == (3, 8, 16, 16)
    summary = json.loads((folder / "pretrain.json").read_text())
    assert summary["steps"] == 3 and summary["seed"] == 0 and summary["eval"]["n_prompts"] == 2
    assert summary["torch_threads"] == 1
    last = result.stdout.strip().splitlines()[-1]
    assert last.strip().startswith(f"policy -> {folder} in ")
    assert f"overall {summary['eval']['scores']['overall']:.3f}" in last and "3 steps" in last
    assert "step 3/3: loss" in result.stdout  # the validation log line
    assert not (tmp_path / "toy_learned").exists()


def test_prepare_toy_help_explains_every_flag():
    parser = build_parser()
    sub = next(a for a in parser._subparsers._group_actions).choices["prepare-toy"]
    flags = [a for a in sub._actions if a.option_strings and a.dest != "help"]
    assert {f.dest for f in flags} >= {"what", "seed", "steps", "out", "threads", "eval_prompts", "recipe"}
    assert all(f.help and len(f.help) > 15 for f in flags)
    text = sub.format_help()
    for flag in ("--what", "--seed", "--steps", "--out", "--threads", "--eval-prompts", "--recipe", "--no-progress"):
        assert flag in text


def test_prepare_toy_rejects_bad_flags(tmp_path, capsys):
    """Like every command: one line with the command's prefix, exit 2 (a user's mistake, not a failure)."""
    (tmp_path / "a_file").write_text("")
    for flags, message in (
        (["--threads", "0"], "--threads must be >= 1"),
        (["--steps", "0"], "--steps must be >= 1"),
        (["--eval-prompts", "65"], "--eval-prompts must be in 1..64"),
        (["--recipe", "v9"], "--recipe 'v9' is not a recipe; choose one of v1, v2"),
        (["--out", str(tmp_path / "a_file")], "is a file; name a folder"),
        (["--vivid-bias", "0.5"], "--vivid-bias 0.5 sets the labeler of toy_qwen_slots_vivid only; add --critic"),
    ):
        assert main(["prepare-toy", "--what", "policy", "--out", str(tmp_path), *flags]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.startswith("tvrl-bench prepare-toy: error: --") and message in line, line
    assert [p.name for p in tmp_path.iterdir()] == ["a_file"]


@pytest.mark.parametrize("bias", ["1.5", "-0.1", "nan"])
def test_a_vivid_bias_out_of_range_is_one_line_naming_the_value_and_the_range(tmp_path, capsys, bias):
    assert main(["prepare-toy", "--what", "critic", "--critic", "toy_qwen_slots_vivid", "--vivid-bias", bias,
                 "--out", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"tvrl-bench prepare-toy: error: --vivid-bias {float(bias)}: must be in [0, 1]"), line
    assert list(tmp_path.iterdir()) == []


def test_summary_line_reads_both_recipes_summaries():
    from tvrl_bench.cli.prepare_toy import describe

    policy = {"steps": 4000, "cpu_seconds": 1500.0, "eval": {"scores": {"overall": 0.4, "motion": 0.05}}}
    critic = {"steps": 3000, "cpu_s": 645.1, "validation_accuracy": {"object": 0.99, "mean": 0.977}}
    assert describe(policy) == "overall 0.400, motion 0.050 (4000 steps, 25.0 min CPU)"
    assert describe(critic) == "object 0.990, mean 0.977 (3000 steps, 10.8 min CPU)"
