"""Aggregating VBench-2.0 results files (VBench-2.0's JSON format) into categories and Overall."""

from __future__ import annotations

import json

import pytest

from tests.evaluators.vbench2.fixtures import CONSTANT_LISTS
from tvrl_bench.evaluators.vbench2.results import ResultsError, aggregate, load_results, read_results_file, score_lines

# Chosen scores, keyed as VBench-2.0's results JSON keys them (its dimension names).
SCORES = {
    "Human_Anatomy": 0.8512, "Human_Identity": 0.7433, "Human_Clothes": 0.9821, "Diversity": 0.4412,
    "Composition": 0.3921, "Dynamic_Spatial_Relationship": 0.2105, "Dynamic_Attribute": 0.1887,
    "Motion_Order_Understanding": 0.3012, "Human_Interaction": 0.7123, "Complex_Landscape": 0.1734,
    "Complex_Plot": 0.1205, "Camera_Motion": 0.3366, "Motion_Rationality": 0.4021, "Instance_Preservation": 0.8745,
    "Mechanics": 0.6543, "Thermotics": 0.5521, "Material": 0.6012, "Multi-View_Consistency": 0.3847,
}


def cal_final_score(scores: dict[str, float]) -> dict[str, float]:
    """VBench-2.0's scripts/cal_final_score.py, rewritten: keys read with '_' as ' ', an absent dimension is 0."""
    upload = {key.replace("_", " "): value for key, value in scores.items()}
    totals = {}
    for category, members in CONSTANT_LISTS.items():
        totals[category] = sum(upload.get(m, 0) for m in members) / len(members)
    totals["overall"] = sum(totals[c] for c in CONSTANT_LISTS) / 5
    return totals


def write_results(path, scores: dict[str, float]):
    """A results file as VBench-2.0's evaluate.py writes it: {dimension: [score, per-video records]}."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        d: [s, [{"video_path": f"/videos/{d}/A prompt.-{i}.mp4", "video_results": s} for i in range(3)]]
        for d, s in scores.items()
    }
    path.write_text(json.dumps(data, indent=4))
    return path


def test_eighteen_results_files_aggregate_as_cal_final_score(tmp_path):
    # evaluate.sh's layout: evaluation_results/<Dimension>/<model>/results_<time>_eval_results.json
    for dimension, score in SCORES.items():
        out = tmp_path / "evaluation_results" / dimension / "vbench2_videos"
        write_results(out / "results_2025-01-01-00:00:00_eval_results.json", {dimension: score})
        (out / "results_2025-01-01-00:00:00_full_info.json").write_text("[]")
    results = load_results([tmp_path / "evaluation_results"])
    assert set(results) == set(SCORES) and len(results["Camera_Motion"].records) == 3
    metrics = aggregate({d: r.score for d, r in results.items()})
    expected = cal_final_score(SCORES)
    for name, value in expected.items():
        assert metrics[name] == pytest.approx(value, abs=1e-12)
    assert metrics["dim/multi_view_consistency"] == SCORES["Multi-View_Consistency"]
    assert len([k for k in metrics if k.startswith("dim/")]) == 18
    lines = score_lines(metrics)
    assert lines[-1] == f"overall={expected['overall']!r}"
    assert [line.split("=")[0] for line in lines] == list(CONSTANT_LISTS) + ["overall"]


def test_one_file_with_spaced_keys_and_bare_numbers(tmp_path):
    spaced = {d.replace("_", " "): s for d, s in SCORES.items()}
    path = tmp_path / "all.json"
    path.write_text(json.dumps({**{k: [v, []] for k, v in list(spaced.items())[:9]}, **dict(list(spaced.items())[9:])}))
    result = read_results_file(path)
    assert {d: r.score for d, r in result.items()} == SCORES


def test_missing_dimensions_policies():
    some = {d: s for d, s in SCORES.items() if d not in ("Diversity", "Thermotics", "Material")}
    with pytest.raises(ResultsError, match="lack 3 of 18 dimensions: Diversity, Thermotics, Material"):
        aggregate(some)
    zero = aggregate(some, missing="zero")
    for name, value in cal_final_score(some).items():
        assert zero[name] == pytest.approx(value, abs=1e-12)
    assert "dim/diversity" not in zero
    partial = aggregate(some, missing="partial")
    assert partial["creativity"] == some["Composition"]
    assert partial["physics"] == pytest.approx((some["Mechanics"] + some["Multi-View_Consistency"]) / 2)
    only_human = aggregate({"Human_Anatomy": 0.5, "Human_Clothes": 0.7}, missing="partial")
    assert set(only_human) == {"overall", "human_fidelity", "dim/human_anatomy", "dim/human_clothes"}
    assert only_human["overall"] == only_human["human_fidelity"] == pytest.approx(0.6)


def test_malformed_results_are_named(tmp_path):
    info = tmp_path / "results_x_full_info.json"
    info.write_text(json.dumps([{"prompt_en": "p", "dimension": ["Camera_Motion"]}]))
    with pytest.raises(ResultsError, match=r"results_x_full_info.json: .*found a JSON list.*not the '\*_full_info.json'"):
        read_results_file(info)
    typo = write_results(tmp_path / "typo.json", {"Camera_Motions": 0.3})
    with pytest.raises(ResultsError, match=r"typo.json: unknown VBench-2.0 dimension 'Camera_Motions'"):
        read_results_file(typo)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"Camera_Motion": ["high", []]}))
    with pytest.raises(ResultsError, match=r"bad.json: 'Camera_Motion' must be \[score, records\]"):
        read_results_file(bad)
    a = write_results(tmp_path / "a_eval_results.json", {"Camera_Motion": 0.3})
    b = write_results(tmp_path / "b_eval_results.json", {"Camera_Motion": 0.4})
    with pytest.raises(ResultsError, match=r"Camera_Motion is in both .*a_eval_results.json and .*b_eval_results.json"):
        load_results([a, b])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ResultsError, match=r"empty: no VBench-2.0 results \('\*_eval_results.json'\)"):
        load_results([tmp_path / "empty"])
    with pytest.raises(ResultsError, match=r"results not found: .*nothing_here"):
        load_results([tmp_path / "nothing_here"])
