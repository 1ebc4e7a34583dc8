"""`tvrl-bench annotate`: binding rules, flag errors, and the CSV export read back by `tvrl-report`."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pytest

from tests.annotate.helpers import listening_addresses, winrate_row
from tests.report.helpers import read_rendered
from tests.support import console_script
from tvrl_bench.annotate import AnnotateError
from tvrl_bench.annotate.server import bind, check_bind_host, is_loopback
from tvrl_bench.cli import report as report_cli
from tvrl_bench.cli.main import main
from tvrl_bench.report.winrate.judgments import CSV_COLUMNS

pytestmark = pytest.mark.integration


def test_refuses_to_bind_beyond_localhost_without_an_explicit_host():
    for host in ("0.0.0.0", "::"):
        with pytest.raises(AnnotateError, match=rf"refusing to serve on {host}: .*--host {host}"):
            bind(host, 0)
        with pytest.raises(AnnotateError, match="refusing"):
            check_bind_host(host, allow_remote=False)
    assert is_loopback("localhost") and is_loopback("127.0.0.1") and not is_loopback("0.0.0.0")
    local = bind("localhost", 0)  # a loopback name needs no permission
    remote = bind("0.0.0.0", 0, allow_remote=True)
    try:
        assert listening_addresses(local.sock.getsockname()[1]) == {"127.0.0.1"}
        assert listening_addresses(remote.port) == {"0.0.0.0"}
    finally:
        local.sock.close()
        remote.sock.close()


def test_an_explicit_host_lets_the_command_bind_it(toy_study, tmp_path, capsys):
    """With --host 0.0.0.0 the command binds (it fails later, on the unknown study, not on the address)."""
    code = main(["annotate", "--study", "no_such_study", "--a", "TVRL", "--b", "GRPO", "--host", "0.0.0.0",
                 "--port", "0", "--tracking-uri", toy_study.uri, "--store", str(tmp_path / "j.sqlite")])
    err = capsys.readouterr().err
    assert code == 2 and "no MLflow experiment named 'no_such_study'" in err and "refusing" not in err


def test_flag_mistakes_are_clear_errors(toy_study, tmp_path, capsys):
    assert main(["annotate", "--study", toy_study.study, "--a", "TVRL", "--port", "0"]) == 2
    assert "serving needs --a and --b" in capsys.readouterr().err
    assert main(["annotate", "--study", toy_study.study, "--export", str(tmp_path / "v.csv"), "--store",
                 str(tmp_path / "missing.sqlite")]) == 2
    assert "no judgments file at" in capsys.readouterr().err
    assert main(["annotate", "--study", toy_study.study, "--a", "TVRL", "--b", "GRPO", "--port", "0",
                 "--tracking-uri", toy_study.uri, "--store", str(tmp_path / "j.sqlite"), "--annotators",
                 "al ice"]) == 2
    assert "annotator name 'al ice' is not valid" in capsys.readouterr().err
    help_text = subprocess.run([console_script("tvrl-bench"), "annotate", "--help"], capture_output=True,
                               text=True).stdout
    for flag in ("--study", "--a", "--b", "--prompts", "--seeds", "--port", "--host", "--tracking-uri", "--store",
                 "--annotators", "--export", "--labels", "--match"):
        assert flag in help_text


def test_export_writes_the_csv_tvrl_report_imports(open_session, toy_study, tmp_path, capsys):
    session = open_session()
    votes = []
    for name, choices in (("alice", ["left", "right", "tie", "left", "left", "right"]),
                          ("bob", ["tie", "left", "left", "right", "right", "left"])):
        for position, choice in enumerate(choices):
            slot = session._slots[name][position]
            session.vote(name, {"position": position, "pair": slot.pair.pair_id, "choice": choice})
            shown_left = "TVRL" if slot.a_left else "GRPO"
            winner = {"left": shown_left, "right": "GRPO" if shown_left == "TVRL" else "TVRL"}.get(choice)
            votes.append((slot.pair.seed, "tie" if winner is None else ("win" if winner == "TVRL" else "loss")))
    exported = tmp_path / "votes.csv"
    assert main(["annotate", "--study", toy_study.study, "--export", str(exported), "--store",
                 str(session.store.path)]) == 0
    assert "exported 12 votes" in capsys.readouterr().out
    with exported.open() as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 12
    assert {r["judge"] for r in rows} == {"human:alice", "human:bob"}
    out = tmp_path / "reports"
    code = report_cli.main(["--study", toy_study.study, "--tracking-uri", toy_study.uri, "--out", str(out),
                            "--judgments", str(tmp_path / "fresh.sqlite"), "--import-judgments", str(exported),
                            "--tables", "winrate", "--format", "md", "--no-plots", "--no-log"])
    assert code == 0
    header, table = read_rendered(Path(out) / toy_study.study, "winrate", "md")
    expected = winrate_row(votes)
    assert table[0][0] == "TVRL vs GRPO" and {k: dict(zip(header, table[0]))[k] for k in expected} == expected
