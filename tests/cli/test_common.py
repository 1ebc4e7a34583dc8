"""`--out` named when it is the problem (cli/common.py `check_out_folder`): a file, or a folder this process cannot
write in, is one line naming the flag, before anything is read or built."""

from __future__ import annotations

import os

import pytest

from tvrl_bench.cli.common import check_out_folder
from tvrl_bench.cli.errors import UserError

UNWRITABLE = "/sys/tvrl-bench-out"  # sysfs takes no new file, even from root


def test_a_folder_that_cannot_be_written_names_out(tmp_path):
    check_out_folder(str(tmp_path / "new" / "deeper"), "the checkpoints")  # created later; its parent is writable
    with pytest.raises(UserError, match=r"^--out /sys/tvrl-bench-out: cannot write in /sys \(.+\); pass a folder"):
        check_out_folder(UNWRITABLE, "the checkpoints")
    (tmp_path / "a_file").write_text("")
    with pytest.raises(UserError, match="this is a file; name a folder for the checkpoints"):
        check_out_folder(str(tmp_path / "a_file"), "the checkpoints")


@pytest.mark.skipif(not os.path.isdir("/sys"), reason="needs a read-only folder")
@pytest.mark.parametrize("command", ["tvrl-train", "tvrl-sweep"])
def test_train_and_sweep_name_a_read_only_out(capsys, command):
    if command == "tvrl-train":
        from tvrl_bench.cli.train import main

        argv = ["components/profiles/toy.gin", "--out", UNWRITABLE]
    else:
        from tvrl_bench.cli.sweep import main

        argv = ["sweeps/quickstart.gin", "--out", UNWRITABLE]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"{command}: error: --out {UNWRITABLE}: cannot write in /sys")
    assert "bound in your config" not in line
