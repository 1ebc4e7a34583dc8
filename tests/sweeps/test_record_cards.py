"""A record keeps the study's critic card (sweeps/record_cards.py): saved from one SQLite store and loaded into a
fresh one, the study page's reader gets the same rows and summaries; a malformed card is refused in one line with
nothing written; a card the target store holds is kept; a record without a card loads as before."""

from __future__ import annotations

import json

import pytest
from mlflow.tracking import MlflowClient

from tests.sweeps.test_records import load, store_runs, write_record
from tests.tracking.helpers import fresh_store
from tvrl_bench.cli.critic_card import log_to_study
from tvrl_bench.cli.main import main
from tvrl_bench.report.runs.artifacts import ArtifactReader
from tvrl_bench.report.study_page.critic_cards import CARD_ARTIFACT, critic_cards_section, read_cards, summarize
from tvrl_bench.sweeps.state import StudyTracker

pytestmark = pytest.mark.integration

CARD = ("critic,policy,seed,videos,checks,evaluator_mean,critic_mean,agreement,ranking,ece,locality,"
        "locality_baseline,inversion,inversion_checks,inversion_vivid,seconds_per_video,agreement_slot0,"
        "inversion_blue\n"
        "toy_oracle,base,0,192,384,0.6800,0.6800,1.0000,1.0000,0.0000,0.6150,0.2500,0.0000,0.0000,0.0000,0.0100,"
        "1.0,0.0\n"
        "toy_oracle,base,1,192,384,0.6900,0.6900,1.0000,1.0000,0.0000,0.6010,0.2500,0.0000,0.0000,0.0000,0.0100,"
        "1.0,0.0\n"
        "toy_oracle,trained,0,192,384,0.8000,0.8000,1.0000,1.0000,0.0000,0.6300,0.2500,,,,0.0100,1.0,\n"
        "toy_qwen_slots_vivid,base,0,192,384,0.6800,0.7400,0.8100,0.7000,0.0700,nan,nan,0.1400,0.0500,0.6200,0.0300,"
        "0.8,0.7\n"
        'toy_qwen_slots_vivid,trained,0,192,384,0.7100,0.9000,0.6600,0.5000,0.1500,nan,nan,,,,0.0300,"0,6",\n')
OTHER_CARD = "critic,policy,seed,agreement\ntoy_verdicts,base,0,0.9100\n"


def study_with_card(tmp_path_factory, folder, card: str | None) -> tuple[str, str]:
    """(store URI, record file) of study `rec` loaded into a fresh store at `folder` from a record without a card,
    with `card` (CSV text) logged on its parent run as `tvrl-bench critic-card --study rec` logs it."""
    folder.mkdir()
    uri = fresh_store(tmp_path_factory, folder)
    record = write_record(folder / "rec.jsonl")
    assert main(["record", "load", str(record), "--tracking-uri", uri]) == 0
    if card is not None:
        (folder / "card.csv").write_text(card)
        log_to_study(folder / "card.csv", StudyTracker.find(uri, "rec"))
    return uri, str(record)


def page_rows(uri: str, study: str = "rec") -> list[dict] | None:
    """The card rows the study page reads from the study's parent run."""
    reader = ArtifactReader(MlflowClient(uri))
    try:
        return read_cards(reader.file, StudyTracker.find(uri, study).parent_run_id)
    finally:
        reader.close()


def saved(tmp_path, uri: str, capsys) -> dict:
    """The header line of `record save rec` from the store."""
    out = tmp_path / "saved.jsonl"
    assert main(["record", "save", "rec", "--out", str(out), "--tracking-uri", uri]) == 0
    capsys.readouterr()
    return json.loads(out.read_text().splitlines()[0])


def with_card(path, card):
    """The record at `path` with its header's critic_card set to `card`."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0]["critic_card"] = card
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_saved_card_loaded_into_a_fresh_store_gives_the_page_the_same_cards(tmp_path_factory, tmp_path, capsys):
    uri_a, _ = study_with_card(tmp_path_factory, tmp_path / "a", CARD)
    header = saved(tmp_path, uri_a, capsys)
    assert header["format"] == 1
    assert header["critic_card"]["columns"] == CARD.splitlines()[0].split(",")  # the CSV's column order
    assert header["critic_card"]["rows"][-1][-2:] == ["0,6", ""]  # the CSV's strings, quoted comma and blank kept

    (tmp_path / "b").mkdir()
    uri_b = fresh_store(tmp_path_factory, tmp_path / "b")
    assert load(tmp_path / "saved.jsonl", uri_b, capsys)[0] == 0
    original, loaded = page_rows(uri_a), page_rows(uri_b)
    assert loaded == original and [list(r) for r in loaded] == [list(r) for r in original] and len(loaded) == 5
    assert repr(summarize(loaded)) == repr(summarize(original))  # NaNs compare by their text
    assert critic_cards_section(summarize(loaded), ["toy_oracle"]) == \
        critic_cards_section(summarize(original), ["toy_oracle"])


@pytest.mark.parametrize("card, needle", [
    ("critic,policy\ntoy,base\n", """critic_card = 'critic,policy\\ntoy,base\\n' must be {"columns": [name, ...]"""),
    ({"columns": ["critic", "seed"], "rows": []}, "critic_card columns = ['critic', 'seed'] lack policy"),
    ({"columns": ["critic", "policy", "critic"], "rows": []}, "columns = ['critic', 'policy', 'critic'] must be "
                                                            "distinct column names"),
    ({"columns": ["critic", "policy", "ece"], "rows": [["toy", "base", "0.1"], ["toy", "base", 0.2]]},
     "critic_card rows[1] = ['toy', 'base', 0.2] must be 3 strings, one a column"),
    ({"columns": ["critic", "policy", "ece"], "rows": [["toy", "base"]]}, "rows[0] = ['toy', 'base'] must be 3"),
    ({"columns": ["critic", "policy"], "rows": "toy,base"}, "rows = 'toy,base' must be a list of rows"),
])
def test_a_malformed_card_is_refused_in_one_line_with_nothing_written(tmp_path_factory, tmp_path, capsys, card,
                                                                      needle):
    uri = fresh_store(tmp_path_factory, tmp_path)
    bad = with_card(write_record(tmp_path / "bad.jsonl"), card)
    before = store_runs(uri)
    code, err = load(bad, uri, capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{bad}:1: the header's critic_card" in err and needle in err, err
    assert err.endswith("write the file with `tvrl-bench record save STUDY`, or drop the key (the record loads "
                        "without the card)")
    assert store_runs(uri) == before == {}  # no study, no run, so no card


def test_a_card_the_store_holds_is_kept_and_a_reload_changes_nothing(tmp_path_factory, tmp_path, capsys):
    uri_a, _ = study_with_card(tmp_path_factory, tmp_path / "a", CARD)
    saved(tmp_path, uri_a, capsys)
    uri_b, _ = study_with_card(tmp_path_factory, tmp_path / "b", OTHER_CARD)  # measured in the target store
    kept = page_rows(uri_b)
    for _ in range(2):
        assert load(tmp_path / "saved.jsonl", uri_b, capsys)[0] == 0
        assert page_rows(uri_b) == kept == [{"critic": "toy_verdicts", "policy": "base", "seed": "0",
                                             "agreement": "0.9100"}]

    (tmp_path / "c").mkdir()
    uri_c = fresh_store(tmp_path_factory, tmp_path / "c")
    for _ in range(2):  # the first load logs the card, the second finds it there
        assert load(tmp_path / "saved.jsonl", uri_c, capsys)[0] == 0
        assert page_rows(uri_c) == page_rows(uri_a)
    parent = StudyTracker.find(uri_c, "rec").parent_run_id
    assert [a.path for a in MlflowClient(uri_c).list_artifacts(parent)] == [CARD_ARTIFACT]


def test_a_record_without_a_card_loads_and_a_study_without_one_saves_none(tmp_path_factory, tmp_path, capsys):
    uri, record = study_with_card(tmp_path_factory, tmp_path / "a", None)
    assert store_runs(uri) == {"rec": "FINISHED", "uniform-s0": "FINISHED", "window3-s0": "FINISHED"}
    assert page_rows(uri) is None
    assert "critic_card" not in saved(tmp_path, uri, capsys)


def test_a_card_csv_with_a_short_row_is_refused_by_save_in_one_line(tmp_path_factory, tmp_path, capsys):
    uri, _ = study_with_card(tmp_path_factory, tmp_path / "a", "critic,policy,ece\ntoy_oracle,base\n")
    out = tmp_path / "saved.jsonl"
    assert main(["record", "save", "rec", "--out", str(out), "--tracking-uri", uri]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"study rec's {CARD_ARTIFACT} (parent run " in line
    assert "its rows[0] = ['toy_oracle', 'base'] must be 3 strings, one a column; log the card again with " \
        "`tvrl-bench critic-card --study rec`, then save the record" in line
    assert not out.exists()
