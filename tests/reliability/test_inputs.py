"""Bad inputs end before anything runs, in one line naming the file or parameter, the value and the fix.

Category: every study file, config value, prompt file and flag is checked before a trial starts (types, ranges,
emptiness, duplicates, names safe as path components). Each case asserts the exit code, the line, that no
tracking database or run was created and that nothing was written at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.helpers import assert_error, assert_none_running, files_in, run, write_study

pytestmark = pytest.mark.integration

TOY = "components/profiles/toy_v1.gin"


def train_case(tmp_path: Path, *args: str) -> tuple:
    before = files_in(tmp_path)
    result = run(tmp_path, "tvrl-train", TOY, "--tracking-uri", f"sqlite:///{tmp_path / 't.db'}",
                 "--out", str(tmp_path / "out"), "--no-progress", *args)
    return result, before


@pytest.mark.parametrize("binding, needles", [
    ("training.optimizer.learning_rate = '1e-4'", ["--gin_bindings", "training.optimizer.learning_rate = '1e-4'",
                                                  "must be a number",
                                                  "without quotes: training.optimizer.learning_rate = 1e-4"]),
    ("training.optimizer.learning_rate = 0.0", ["--gin_bindings", "training.optimizer.learning_rate = 0.0",
                                               "must be a number > 0", "e.g. training.optimizer.learning_rate = 1e-4"]),
    ("training.trial.learning_rate = 1e-4", ["--gin_bindings", "'training.trial.learning_rate' has moved to "
                                            "'training.optimizer.learning_rate'", "training.optimizer.learning_rate = ..."]),
    ("training.trial.steps = '2'", ["training.trial.steps = '2'", "an integer", "without quotes"]),
    ("samplers.sage.eta = 'high'", ["samplers.sage.eta = 'high'", "must be a number"]),
    ("training.trial.eval_prompts = 0", ["training.trial.eval_prompts = 0", "must be an integer >= 1",
                                        "e.g. training.trial.eval_prompts = 32"]),
    # a newer component's value (its CHECKS): refused as the user's mistake, not built and called a bug
    ("OBJECTIVE = @objectives.nft()\nobjectives.nft.timestep_range = (0.9, 0.1)",
     ["--gin_bindings", "objectives.nft.timestep_range = (0.9, 0.1) must be a pair (start, end) with 0 <= start < end",
      "e.g. objectives.nft.timestep_range = (0.0, 0.9)"]),
    ("OBJECTIVE = @objectives.best_of_n()\ntraining.trial.group_size = 4\nobjectives.best_of_n.top_k = 4",
     ["--gin_bindings", "objectives.best_of_n.top_k = 4 keeps every rollout of a group of training.trial.group_size = 4",
      "e.g. objectives.best_of_n.top_k = 1"]),
])
def test_a_wrong_value_is_one_line_before_anything_is_built(tmp_path, binding, needles):
    result, before = train_case(tmp_path, "--gin_bindings", binding)
    assert_error(result, "tvrl-train", 2, *needles)
    assert files_in(tmp_path) == before  # no database, no checkpoint folder


def test_prompt_files_undecodable_or_without_checks_are_named_by_line(tmp_path, tiny_policy_path):
    bad = tmp_path / "prompts.csv"
    bad.write_bytes(b"prompt,checks\na red circle,Is there a red circle?\na na\xefve blue square,Is there a square?\n")
    config = tmp_path / "file_prompts.gin"
    config.write_text(f"include '{TOY}'\nDATASET = @datasets.file()\ndatasets.file.path = '{bad}'\n"
                      "datasets.file.eval_fraction = 0.5\n")
    result = run(tmp_path, "tvrl-train", str(config), "--tracking-uri", f"sqlite:///{tmp_path / 't.db'}",
                 "--out", str(tmp_path / "out"), "--gin_bindings", f"policies.toy.path = '{tiny_policy_path}'")
    assert_error(result, "tvrl-train", 2, f"{bad}, line 3", "0xef", "not UTF-8", "save the file as UTF-8")
    assert not (tmp_path / "t.db").exists()

    # No checks: the critic would score nothing, every group's advantage would be 0. The trial stops before
    # training, and its FAILED run says why (no run is left RUNNING).
    bad.write_text("prompt\na red circle moving right\na blue square standing still\na green triangle\n"
                   "a red square\n")
    result = run(tmp_path, "tvrl-train", str(config), "--tracking-uri", f"sqlite:///{tmp_path / 't.db'}",
                 "--out", str(tmp_path / "out"), "--no-progress",
                 "--gin_bindings", f"policies.toy.path = '{tiny_policy_path}'")
    line = assert_error(result, "tvrl-train", 2, f"{bad}, line ", "has no checks", "tvrl-bench decompose")
    assert "advantage 0" in line
    assert_none_running(f"sqlite:///{tmp_path / 't.db'}", "trials")


STUDY_CASES = {
    "unsafe name": ({"name": "../escape"}, ["sweeps.study.name", "'../escape'", "cannot name a folder"]),
    "duplicate axis value": ({"axes": "{'sampler': ['sage', 'sage']}"},
                             ["tiny.gin:2:", "lists 'sage' twice", "remove the duplicate"]),
    "duplicate seed": ({"seeds": "[0, 0]"}, ["tiny.gin:3:", "seed 0 twice", "remove the duplicate"]),
    "empty axis": ({"axes": "{'credit': []}"}, ["tiny.gin:2:", "axis 'credit' is empty", "list at least one preset"]),
    "no seeds": ({"seeds": "[]"}, ["tiny.gin:3:", "sweeps.study.seeds is empty", "list at least one seed"]),
    "a string seed": ({"seeds": "['0']"}, ["tiny.gin:3:", "not an integer"]),
    "unknown table": ({"tables": "['samplrs']"}, ["tiny.gin:4:", "no table definition named 'samplrs'",
                                                  "did you mean 'samplers'"]),
    "bad trial value": ({"extra": ("training.trial.group_size = 1",)}, ["training.trial.group_size = 1", ">= 2"]),
}


@pytest.mark.parametrize("case", list(STUDY_CASES))
def test_a_bad_study_is_one_line_before_any_trial_or_run(tmp_path, case):
    changes, needles = STUDY_CASES[case]
    study = write_study(tmp_path, "/nowhere", extra=changes.get("extra", ()))
    text = study.read_text()
    for field in ("name", "axes", "seeds", "tables"):
        if field in changes:
            prefix = f"sweeps.study.{field} = "
            old = next(line for line in text.splitlines() if line.startswith(prefix))
            text = text.replace(old, prefix + (repr(changes[field]) if field == "name" else changes[field]))
    study.write_text(text)
    before = files_in(tmp_path)
    result = run(tmp_path, "tvrl-sweep", str(study), "--tracking-uri", f"sqlite:///{tmp_path / 'q.db'}",
                 "--out", str(tmp_path / "out"), "--no-progress")
    assert_error(result, "tvrl-sweep", 2, *needles)
    assert files_in(tmp_path) == before  # nothing under --out, no database, nothing outside either


@pytest.mark.parametrize("flags, needles", [
    (["--workers", "0"], ["--workers 0", "at least 1"]),
    (["--out", "a_file"], ["--out a_file", "is a file", "name a folder"]),
    (["--max-attempts", "0"], ["--max-attempts 0", "at least 1 attempt"]),
])
def test_bad_sweep_flags_leave_no_parent_run(tmp_path, flags, needles):
    (tmp_path / "a_file").write_text("not a folder\n")
    study = write_study(tmp_path, "/nowhere")
    before = files_in(tmp_path)
    result = run(tmp_path, "tvrl-sweep", str(study), "--tracking-uri", f"sqlite:///{tmp_path / 'q.db'}",
                 "--no-progress", *(["--out", str(tmp_path / "out")] if "--out" not in flags else []), *flags)
    assert_error(result, "tvrl-sweep", 2, *needles)
    assert files_in(tmp_path) == before and not (tmp_path / "q.db").exists()
