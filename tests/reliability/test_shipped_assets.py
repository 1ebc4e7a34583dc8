"""`tvrl-bench prepare-toy` never touches the shipped checkpoints unless asked, and never loses a checkpoint."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.reliability.helpers import assert_error, files_in, run
from tvrl_bench.cli.prepare_toy import ASSETS, build_into

pytestmark = pytest.mark.integration


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_quick_smoke_test_writes_beside_the_user_not_over_the_shipped_critic(tmp_path):
    shipped = digest(ASSETS / "toy_learned")
    result = run(tmp_path, "tvrl-bench", "prepare-toy", "--what", "critic", "--critic", "toy_learned", "--steps", "2", "--no-progress")
    assert result.returncode == 0, result.stderr[-3000:]
    assert digest(ASSETS / "toy_learned") == shipped
    assert (tmp_path / "toy_checkpoints" / "toy_learned" / "model.safetensors").is_file()
    assert "rewards.toy_learned.path = 'toy_checkpoints/toy_learned'" in result.stdout
    first = digest(tmp_path / "toy_checkpoints" / "toy_learned")

    again = run(tmp_path, "tvrl-bench", "prepare-toy", "--what", "critic", "--critic", "toy_learned", "--steps", "2", "--no-progress")
    assert again.returncode == 0, again.stderr[-3000:]
    backups = list((tmp_path / "toy_checkpoints").glob("toy_learned.backup-*"))
    assert len(backups) == 1 and digest(backups[0]) == first  # the earlier build is kept, not overwritten
    assert "the previous one is kept in" in again.stdout
    assert {p.parts[0] for p in files_in(tmp_path)} == {"toy_checkpoints"}

    before = files_in(tmp_path)
    refused = run(tmp_path, "tvrl-bench", "prepare-toy", "--what", "critic", "--critic", "toy_learned", "--steps", "2", "--out", str(ASSETS))
    assert_error(refused, "tvrl-bench prepare-toy", 2, "shipped checkpoints", "--overwrite-assets")
    both = run(tmp_path, "tvrl-bench", "prepare-toy", "--overwrite-assets", "--out", "x")
    assert_error(both, "tvrl-bench prepare-toy", 2, "not both")
    assert files_in(tmp_path) == before and digest(ASSETS / "toy_learned") == shipped


def test_a_rebuild_swaps_in_only_when_complete_and_keeps_what_was_there(tmp_path):
    target = tmp_path / "toy_learned"
    target.mkdir()
    (target / "model.safetensors").write_text("shipped")

    def broken(scratch: Path) -> dict:
        scratch.mkdir()
        (scratch / "model.safetensors").write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_into(target, broken)
    assert [p.name for p in tmp_path.iterdir()] == ["toy_learned"]
    assert (target / "model.safetensors").read_text() == "shipped"

    def good(scratch: Path) -> dict:
        scratch.mkdir()
        (scratch / "model.safetensors").write_text("new")
        return {"steps": 1}

    summary, backup = build_into(target, good)
    assert summary == {"steps": 1} and (target / "model.safetensors").read_text() == "new"
    assert (backup / "model.safetensors").read_text() == "shipped"
