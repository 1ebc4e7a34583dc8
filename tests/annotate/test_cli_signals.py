"""`tvrl-bench annotate` stopped by a signal: one line, its temp folder of videos gone, exit 128 + the signal."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from tests.support import console_script

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("stop, code", [(signal.SIGTERM, 143), (signal.SIGINT, 0)])
def test_a_stop_signal_ends_the_server_with_one_line_and_no_temp_folder(toy_study, tmp_path, stop, code):
    """SIGTERM as Ctrl-C: the server stops, the videos' temp folder goes, one line; exit 143 (128 + SIGTERM)."""
    temp, store = tmp_path / "tmp", tmp_path / "j.sqlite"
    temp.mkdir()
    process = subprocess.Popen(
        [console_script("tvrl-bench"), "annotate", "--study", toy_study.study, "--a", "TVRL", "--b", "GRPO",
         "--port", "0", "--tracking-uri", toy_study.uri, "--store", str(store)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(temp)})
    try:
        lines = []
        while not (lines and lines[-1].startswith("serving on")):
            line = process.stdout.readline()
            assert line, "".join(lines) + process.stderr.read()
            lines.append(line)
        assert list(temp.glob("tvrl-annotate-*"))  # the study's videos, served from there
        process.send_signal(stop)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, err
    assert out.strip().splitlines()[-1] == f"stopped; votes are in {store}" and "Traceback" not in err, err
    assert not list(temp.glob("tvrl-annotate-*"))
