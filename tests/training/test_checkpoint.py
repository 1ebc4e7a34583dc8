"""Trial checkpoints: state round trip, the info file, atomic writes, and errors that name the file."""

from __future__ import annotations

import json

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
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.pt", "trial.json"]


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
