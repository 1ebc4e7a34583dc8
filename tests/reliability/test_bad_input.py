"""Bad input is never an internal error: config files in other encodings, unset macros, values that do not fit.

Category: each case is something a user wrote (a Latin-1 comment, a `%MACRO` never bound, a checkpoint folder
that is not there, `minibatches` that do not divide the rollouts, `num_steps = 1`, prompts the toy policy cannot
read, evaluation prompts without checks). Each ends with exit code 2 and one line naming the file and line (or the
macro, parameter or word) and the fix; none is "internal error", none leaves a run RUNNING.
"""

from __future__ import annotations

import codecs
import subprocess
from pathlib import Path

import pytest

from tests.reliability.helpers import assert_error, assert_none_running, files_in, run, write_study
from tests.training.conftest import FAST

pytestmark = pytest.mark.integration

TOY = "components/profiles/toy_v1.gin"


def fast_config(folder: Path, policy: str, *lines: str, name: str = "mine.gin") -> Path:
    path = folder / name
    fast = [b for b in FAST if not (b.startswith("datasets.toy.") and any("DATASET" in line for line in lines))]
    path.write_text("\n".join([f"include '{TOY}'", f"policies.toy.path = '{policy}'", *fast, *lines]) + "\n")
    return path


def train(folder: Path, config: Path, *args: str):
    return run(folder, "tvrl-train", str(config), "--steps", "1", "--tracking-uri", f"sqlite:///{folder / 't.db'}",
               "--out", str(folder / "out"), "--no-progress", *args)


def test_config_and_study_files_are_utf8_with_an_optional_bom(tmp_path, tiny_policy_path):
    # A Latin-1 byte in a comment: file, line and column, exit 2, nothing written.
    latin = tmp_path / "latin.gin"
    latin.write_bytes(f"include '{TOY}'\n# caf\xe9 au lait\n".encode("latin-1"))
    before = files_in(tmp_path)
    assert_error(train(tmp_path, latin), "tvrl-train", 2, f"{latin}:2:6:", "byte 0xe9 is not UTF-8", "save it as UTF-8")
    # The same file included from another: the bad byte's place, and where it was included from.
    outer = tmp_path / "outer.gin"
    outer.write_text(f"include '{latin}'\n")
    assert_error(train(tmp_path, outer), "tvrl-train", 2, f"{latin}:2:6:", f"included from {outer}:1")
    # A binary file given as the config.
    binary = tmp_path / "model.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    assert_error(train(tmp_path, binary), "tvrl-train", 2, f"{binary}:1:", "binary file", "pass the config file")
    assert files_in(tmp_path) == before | {Path("outer.gin"), Path("model.bin")}

    # A study file with a Latin-1 byte: tvrl-sweep names it the same way before anything runs.
    study = write_study(tmp_path, tiny_policy_path)
    study.write_bytes(study.read_bytes() + "# r\xe9sum\xe9\n".encode("latin-1"))
    line = len(study.read_bytes().splitlines())
    result = run(tmp_path, "tvrl-sweep", str(study), "--tracking-uri", f"sqlite:///{tmp_path / 'q.db'}",
                 "--out", str(tmp_path / "sweep"), "--no-progress")
    assert_error(result, "tvrl-sweep", 2, f"{study}:{line}:4:", "not UTF-8")
    assert not (tmp_path / "q.db").exists()

    # A byte-order mark (Windows editors) on a study file and on the profile it includes is read as UTF-8.
    profile = fast_config(tmp_path, tiny_policy_path, "# caf\u00e9", name="bom_profile.gin")
    profile.write_bytes(codecs.BOM_UTF8 + profile.read_bytes())
    study.write_bytes(codecs.BOM_UTF8 + write_study(tmp_path, tiny_policy_path).read_text().replace(
        "sweeps.study.name", f"sweeps.study.profile = '{profile}'\nsweeps.study.name", 1).encode())
    result = run(tmp_path, "tvrl-sweep", str(study), "--dry-run", "--tracking-uri", f"sqlite:///{tmp_path / 'q.db'}",
                 "--out", str(tmp_path / "sweep"), "--no-progress")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr


def test_an_unset_macro_is_named_with_its_file_and_line(tmp_path, tiny_policy_path):
    config = fast_config(tmp_path, tiny_policy_path, "training.trial.sampler = %MY_SAMPLER")
    line = len(config.read_text().splitlines())
    result = train(tmp_path, config)
    assert_error(result, "tvrl-train", 2, f"{config}:{line}:", "training.trial.sampler = %MY_SAMPLER",
                 "macro MY_SAMPLER is never bound", "bind it")
    assert not (tmp_path / "t.db").exists()  # refused while parsing, before the store is touched

    # A family's macro names the presets that bind it.
    config = fast_config(tmp_path, tiny_policy_path, "training.trial.sampler = %SAMPLER")
    config.write_text(config.read_text().replace(f"include '{TOY}'", "\n".join(
        f"include 'components/{p}.gin'" for p in ("policies/toy", "rewards/toy_oracle", "credit/window3",
                                                   "objectives/grpo", "evaluators/toy", "datasets/toy"))))
    result = train(tmp_path, config)
    assert_error(result, "tvrl-train", 2, "training.trial.sampler = %SAMPLER", "macro SAMPLER is never bound",
                 "components/samplers/<name>.gin", "SAMPLER = @samplers.<name>()")


# The elephant is in the prompt only: its check is one the toy critic reads (a check it cannot read is refused
# earlier, when the config is read: tests/datasets/test_files.py).
PROMPTS_WITH_UNKNOWN_WORDS = "prompt,checks\na red circle,Is there a red circle?\na purple elephant,Is there a purple circle?\n"
EVAL_PROMPT_WITHOUT_CHECKS = ("prompt,checks,split\na red circle,Is there a red circle?,train\n"
                              "a blue square,Is there a blue square?,train\na green circle,,eval\n"
                              "a red square,Is there a red square?,eval\n")

BUILD_CASES = {
    "missing qwen checkpoint": (["REWARD = @rewards.qwen_vl()", "rewards.qwen_vl.path = '{tmp}/no_such_folder'"],
                                ["mine.gin:{last}:", "rewards.qwen_vl.path=", "is not a folder", "local checkpoint folder"]),
    "minibatches not dividing": (["training.trial.minibatches = 3"],
                                 ["mine.gin:{last}:", "training.trial.minibatches = 3 must divide the 4 rollouts"]),
    "one denoising step": (["training.schedule.num_steps = 1"],
                           ["mine.gin:{last}:", "training.schedule.num_steps = 1 must be an integer >= 2",
                            "e.g. training.schedule.num_steps = 10"]),
    "unknown words": (["DATASET = @datasets.file()", "datasets.file.path = '{tmp}/prompts.csv'",
                       "datasets.file.eval_fraction = 0.5"],
                      ["prompts.csv, line 3:", "does not know the word(s) ['elephant']",
                       "rewrite the prompt"]),
    "eval prompt without checks": (["DATASET = @datasets.file()", "datasets.file.path = '{tmp}/prompts.csv'"],
                                   ["prompts.csv, line 4:", "evaluation prompt 'a green circle' has no checks",
                                    "left out of eval/overall", "add a `checks` column"]),
}


@pytest.mark.parametrize("case", list(BUILD_CASES))
def test_values_that_do_not_fit_are_config_errors_not_bugs(tmp_path, tiny_policy_path, case, capsys, monkeypatch):
    """tvrl-train's own entry point, in this process (these faults need no process of their own, and each of
    the five cases would otherwise pay 10-20 s of imports)."""
    from tvrl_bench.cli.train import main

    lines, needles = BUILD_CASES[case]
    (tmp_path / "prompts.csv").write_text(EVAL_PROMPT_WITHOUT_CHECKS if "eval" in case else PROMPTS_WITH_UNKNOWN_WORDS)
    config = fast_config(tmp_path, tiny_policy_path, *[line.format(tmp=tmp_path) for line in lines])
    last = len(config.read_text().splitlines())
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    code = main([str(config), "--steps", "1", "--tracking-uri", f"sqlite:///{tmp_path / 't.db'}",
                 "--out", str(tmp_path / "out"), "--no-progress"])
    captured = capsys.readouterr()
    result = subprocess.CompletedProcess(["tvrl-train"], code, captured.out, captured.err)
    line = assert_error(result, "tvrl-train", 2, *[n.format(last=last) for n in needles])
    assert "internal error" not in line and "bug" not in line
    assert_none_running(f"sqlite:///{tmp_path / 't.db'}", "trials")
