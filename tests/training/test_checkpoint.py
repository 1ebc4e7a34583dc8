"""Trial checkpoints: state round trip, the info file, atomic writes, the SHA-256 sidecar, and errors that name the
file."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
import torch

from tvrl_bench.training.checkpoint import CheckpointDir, CheckpointError, CheckpointInfo


def trained_optimizer(seed: int = 0) -> tuple[list[torch.nn.Parameter], torch.optim.Optimizer]:
    """Two parameters and an AdamW that has taken two steps (so it has moments to save)."""
    g = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(torch.randn(3, 4, generator=g)), torch.nn.Parameter(torch.randn(5, generator=g))]
    optimizer = torch.optim.AdamW(params, lr=1e-2)
    for _ in range(2):
        loss = sum((p ** 2).sum() for p in params)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return params, optimizer


def state_of(params) -> dict[str, torch.Tensor]:
    return {str(i): p.detach().clone() for i, p in enumerate(params)}


def test_an_empty_folder_has_no_info_and_no_state(tmp_path):
    checkpoints = CheckpointDir(tmp_path / "missing")
    assert checkpoints.info() is None and checkpoints.load() is None
    assert not (tmp_path / "missing").exists()  # looking creates nothing


def test_save_then_load_round_trips_parameters_optimizer_and_extra(tmp_path):
    params, optimizer = trained_optimizer()
    checkpoints = CheckpointDir(tmp_path / "trial")
    checkpoints.save(7, "run-1", state_of(params), optimizer, {"credit": {"calls": 3}, "objective": {}})
    assert checkpoints.state_path == tmp_path / "trial" / "state.pt"
    saved = checkpoints.load()
    assert saved["step"] == 7 and saved["extra"] == {"credit": {"calls": 3}, "objective": {}}
    for i, p in enumerate(params):
        assert torch.equal(saved["parameters"][str(i)], p.detach())

    # the saved optimizer state continues exactly like the original
    fresh = [torch.nn.Parameter(saved["parameters"][str(i)].clone()) for i in range(len(params))]
    restored = torch.optim.AdamW(fresh, lr=1e-2)
    restored.load_state_dict(saved["optimizer"])
    for group_params, opt in ((params, optimizer), (fresh, restored)):
        sum((p ** 2).sum() for p in group_params).backward()
        opt.step()
    for a, b in zip(params, fresh):
        assert torch.equal(a.detach(), b.detach())


def test_save_records_the_run_and_step_and_keeps_the_attempt(tmp_path):
    params, optimizer = trained_optimizer()
    checkpoints = CheckpointDir(tmp_path)
    checkpoints.write_info("run-2", 0, attempt=3)
    checkpoints.save(4, "run-2", state_of(params), optimizer, {})
    assert checkpoints.info() == CheckpointInfo("run-2", 4, finished=False, attempt=3)
    assert json.loads(checkpoints.info_path.read_text()) == {"run_id": "run-2", "step": 4, "finished": False, "attempt": 3}


def test_the_first_save_is_attempt_one(tmp_path):
    params, optimizer = trained_optimizer()
    checkpoints = CheckpointDir(tmp_path)
    checkpoints.save(1, None, state_of(params), optimizer, {})
    assert checkpoints.info() == CheckpointInfo(None, 1, False, 1)


def test_write_info_marks_a_finished_trial(tmp_path):
    checkpoints = CheckpointDir(tmp_path / "new")  # the folder is created
    checkpoints.write_info("run-3", 10, attempt=2, finished=True)
    assert checkpoints.info() == CheckpointInfo("run-3", 10, True, 2)
    checkpoints.write_info("run-4", 10)  # no attempt given: the previous one is kept
    assert checkpoints.info() == CheckpointInfo("run-4", 10, False, 2)


def test_info_fills_fields_an_older_file_lacks(tmp_path):
    (tmp_path / "trial.json").write_text('{"run_id": "r"}')
    assert CheckpointDir(tmp_path).info() == CheckpointInfo("r", 0, False, 1)


def test_a_resave_replaces_the_state_and_leaves_no_temporary_files(tmp_path):
    checkpoints = CheckpointDir(tmp_path)
    params, optimizer = trained_optimizer(0)
    checkpoints.save(1, "r", state_of(params), optimizer, {})
    other, other_optimizer = trained_optimizer(1)
    checkpoints.save(2, "r", state_of(other), other_optimizer, {})
    saved = checkpoints.load()
    assert saved["step"] == 2 and torch.equal(saved["parameters"]["0"], other[0].detach())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.pt", "state.pt.sha256", "trial.json"]


def test_a_failed_state_write_names_the_file_and_keeps_the_previous_checkpoint(tmp_path):
    checkpoints = CheckpointDir(tmp_path)
    params, optimizer = trained_optimizer(0)
    checkpoints.save(3, "r", state_of(params), optimizer, {})
    before = checkpoints.state_path.read_bytes()
    (tmp_path / "state.pt.tmp").mkdir()  # the temporary file cannot be created
    other, other_optimizer = trained_optimizer(1)
    with pytest.raises(CheckpointError) as caught:
        checkpoints.save(4, "r", state_of(other), other_optimizer, {})
    message = str(caught.value)
    assert str(tmp_path / "state.pt.tmp") in message and "a folder of that name is in the way" in message
    assert "rerun the same command" in message
    assert checkpoints.state_path.read_bytes() == before  # the previous checkpoint, whole
    assert checkpoints.info() == CheckpointInfo("r", 3, False, 1)  # still pointing at it


def test_a_failed_info_write_names_the_file_and_keeps_the_previous_info(tmp_path):
    checkpoints = CheckpointDir(tmp_path)
    checkpoints.write_info("r", 2, attempt=1)
    (tmp_path / "trial.tmp").mkdir()  # in the way of the temporary info file
    with pytest.raises(CheckpointError) as caught:
        checkpoints.write_info("r", 3, attempt=1)
    assert str(checkpoints.info_path) in str(caught.value)
    assert checkpoints.info() == CheckpointInfo("r", 2, False, 1)


def test_a_damaged_info_file_is_named_with_the_fix(tmp_path):
    (tmp_path / "trial.json").write_text('{"run_id": "r", "st')  # cut off mid-write
    with pytest.raises(CheckpointError) as caught:
        CheckpointDir(tmp_path).info()
    message = str(caught.value)
    assert str(tmp_path / "trial.json") in message and f"delete the trial folder {tmp_path}" in message


@pytest.mark.parametrize("damage", ["truncated", "overwritten"])
def test_a_damaged_state_file_raises_a_checkpoint_error_naming_it(tmp_path, damage):
    """CheckpointError's contract: a checkpoint that cannot be read raises it, naming the file (not torch's
    "PytorchStreamReader failed reading zip archive" or an UnpicklingError, which name neither file nor fix)."""
    checkpoints = CheckpointDir(tmp_path)
    params, optimizer = trained_optimizer()
    checkpoints.save(5, "r", state_of(params), optimizer, {})
    data = checkpoints.state_path.read_bytes()
    checkpoints.state_path.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"not a checkpoint\n")
    with pytest.raises(CheckpointError) as caught:
        checkpoints.load()
    assert str(checkpoints.state_path) in str(caught.value)


def test_checkpoint_error_is_an_os_error():
    assert issubclass(CheckpointError, OSError)


# -- integrity: the SHA-256 sidecar -----------------------------------------------------------------------------

def saved_checkpoint(folder, step: int = 5, seed: int = 0) -> CheckpointDir:
    checkpoints = CheckpointDir(folder)
    params, optimizer = trained_optimizer(seed)
    checkpoints.save(step, "r", state_of(params), optimizer, {})
    return checkpoints


def sha256_of(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_refused(checkpoints: CheckpointDir) -> None:
    with pytest.raises(CheckpointError) as caught:
        checkpoints.load()
    message = str(caught.value)
    assert "\n" not in message
    assert str(checkpoints.state_path) in message and "does not match the SHA-256" in message
    assert "state.pt.sha256" in message and f"delete the folder {checkpoints.folder}" in message
    assert checkpoints.state_path.is_file()  # never deleted


def test_save_writes_the_sha256_of_the_state_beside_it_and_load_accepts_it(tmp_path):
    checkpoints = saved_checkpoint(tmp_path, step=5)
    assert checkpoints.digest_path == tmp_path / "state.pt.sha256"
    assert checkpoints.digest_path.read_text() == sha256_of(checkpoints.state_path) + "\n"
    assert checkpoints.load()["step"] == 5
    saved_checkpoint(tmp_path, step=6, seed=1)  # a resave lists only the new file's digest
    assert checkpoints.digest_path.read_text() == sha256_of(checkpoints.state_path) + "\n"
    assert checkpoints.load()["step"] == 6


def test_bytes_damaged_in_the_middle_of_the_state_are_refused_before_loading(tmp_path):
    checkpoints = saved_checkpoint(tmp_path)
    size = checkpoints.state_path.stat().st_size
    n = min(4096, size // 4)  # 4 KiB, or a quarter of this small file
    with open(checkpoints.state_path, "r+b") as file:
        file.seek(size // 2 - n // 2)
        file.write(os.urandom(n))
    assert checkpoints.state_path.stat().st_size == size
    assert_refused(checkpoints)


def test_a_state_edited_and_resaved_without_its_digest_is_refused(tmp_path):
    checkpoints = saved_checkpoint(tmp_path)
    state = torch.load(checkpoints.state_path, map_location="cpu", weights_only=False)
    assert state["parameters"]["0"].dtype == torch.float32
    state["parameters"]["0"][0, 0] *= 1.01  # one value, 1% off: still a valid checkpoint, just not the one saved
    torch.save(state, checkpoints.state_path)
    assert_refused(checkpoints)


def test_in_the_crash_window_either_listed_state_is_accepted(tmp_path):
    """Killed between listing [old, new] and the rename (or just after it): the good file is still accepted."""
    checkpoints = saved_checkpoint(tmp_path / "trial", step=1, seed=0)
    newer = saved_checkpoint(tmp_path / "newer", step=2, seed=1)
    old, new = sha256_of(checkpoints.state_path), sha256_of(newer.state_path)
    checkpoints.digest_path.write_text(f"{old}\n{new}\n")
    assert checkpoints.load()["step"] == 1  # state.pt not yet replaced
    checkpoints.state_path.write_bytes(newer.state_path.read_bytes())
    assert checkpoints.load()["step"] == 2  # replaced, the sidecar not yet rewritten


class Killed(BaseException):
    """Stands for SIGKILL: no except clause of the code under test runs."""


@pytest.mark.parametrize("start", ["sidecar", "older version"])
@pytest.mark.parametrize("killed_at", [1, 2, 3, 4])
def test_a_save_killed_before_any_rename_leaves_a_checkpoint_that_loads(tmp_path, monkeypatch, start, killed_at):
    """Every instant of a save lies between two renames (the temporary files are never read), so killing it before
    each rename in turn covers them all: the folder holds the old or the new checkpoint, never one refused."""
    checkpoints = saved_checkpoint(tmp_path, step=1, seed=0)
    if start == "older version":
        checkpoints.digest_path.unlink()
    renames = []
    real_replace = os.replace

    def replace(src, dst):
        renames.append(dst)
        if len(renames) == killed_at:
            raise Killed
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    params, optimizer = trained_optimizer(1)
    try:
        checkpoints.save(2, "r", state_of(params), optimizer, {})
    except Killed:
        pass
    monkeypatch.undo()
    assert checkpoints.load()["step"] in (1, 2)


def test_a_folder_without_the_sidecar_loads_as_before(tmp_path):
    """Checkpoints written before the sidecar existed are loaded unchecked."""
    checkpoints = saved_checkpoint(tmp_path, step=3)
    checkpoints.digest_path.unlink()
    assert checkpoints.load()["step"] == 3
    saved_checkpoint(tmp_path, step=4, seed=1)  # the next save adds the sidecar
    assert checkpoints.digest_path.read_text() == sha256_of(checkpoints.state_path) + "\n"


def test_an_old_checkpoint_without_a_digest_is_resumed_with_a_note(tmp_path, caplog):
    """A checkpoint saved before the sidecar existed still loads (nothing to verify it against), and says so."""
    import logging

    checkpoints = saved_checkpoint(tmp_path, step=3)
    checkpoints.digest_path.unlink()
    with caplog.at_level(logging.WARNING, logger="tvrl_bench.trial"):
        assert checkpoints.load()["step"] == 3
    (note,) = [r.getMessage() for r in caplog.records if "no SHA-256 sidecar" in r.getMessage()]
    assert str(checkpoints.state_path) in note and "unverified" in note
