"""The VBench-2.0 evaluator end to end, with a stand-in interpreter playing VBench-2.0's evaluate.py."""

from __future__ import annotations

import json
import math

import pytest
import torch

from tests.evaluators.vbench2.fixtures import (
    AUGMENTED,
    BASKETBALL,
    CONSTANT_LISTS,
    LONG_PLOT,
    SUITE,
    make_vbench2_folder,
    write_standin,
)
from tvrl_bench.evaluators.vbench2.evaluator import VBench2Evaluator
from tvrl_bench.evaluators.vbench2.layout import LayoutError
from tvrl_bench.evaluators.vbench2.runner import VBench2RunError

GENERATED = [p for p in SUITE if p != "A cat sleeps on a sofa."]
TOLERANCE = 0.006  # brightness of a constant grey video after H.264 (yuv420p) and back


def grey_videos(levels: list[float], frames: int = 3, size: int = 16) -> torch.Tensor:
    """videos[B, F, 3, H, W], video b a constant grey of levels[b]."""
    return torch.tensor(levels).view(-1, 1, 1, 1, 1).expand(-1, frames, 3, size, size).contiguous()


def batch() -> tuple[list[str], list[float], list[tuple[str, int]]]:
    """Interleaved prompts (one given as its augmented variant), grey levels, and (standard prompt, sample)."""
    counts = {BASKETBALL: 20, LONG_PLOT: 4}
    order = []
    for k in range(20):
        for j, prompt in enumerate(GENERATED):
            if k < counts.get(prompt, 3):
                order.append((prompt, k, j))
    prompts = [AUGMENTED.get(p, p) for p, _, _ in order]
    levels = [0.02 if (p == BASKETBALL and k == 1) else 0.15 + 0.05 * j + 0.01 * k for p, k, j in order]
    return prompts, levels, [(p, k) for p, k, _ in order]


def expected_dimensions(levels: list[float], slots: list[tuple[str, int]]) -> dict[str, float]:
    """Each dimension's score computed here the way the stand-in and VBench-2.0 define it (keys as in constant.py)."""
    value = {slot: level for slot, level in zip(slots, levels)}
    scores = {}
    for prompt, dims in SUITE.items():
        if prompt not in GENERATED:
            continue
        for dimension, _ in dims:
            scores.setdefault(dimension, [])
            if dimension == "Diversity":
                group = [value[(prompt, k)] for k in range(20)]
                mean = sum(group) / 20
                scores[dimension].append(math.sqrt(sum((v - mean) ** 2 for v in group) / 20))
            else:
                scores[dimension] += [value[(prompt, k)] for k in range(3) if value[(prompt, k)] >= 0.05]
    return {d.replace("_", " "): sum(v) / len(v) for d, v in scores.items()}


@pytest.fixture()
def vbench(tmp_path):
    return make_vbench2_folder(tmp_path), write_standin(tmp_path / "vbench2-python")


def test_evaluator_runs_every_dimension_and_aggregates_like_vbench2(vbench, tmp_path):
    folder, standin = vbench
    prompts, levels, slots = batch()
    evaluator = VBench2Evaluator(
        repo=str(folder.parent), python_executable=str(standin), work_dir=str(tmp_path / "work"), gpus=("0", "1"), fps=8
    )
    metrics, raw = evaluator.evaluate_detailed(grey_videos(levels), prompts, [()] * len(prompts))

    dims = expected_dimensions(levels, slots)
    assert len(dims) == 18
    categories = {c: sum(dims[d] for d in members) / len(members) for c, members in CONSTANT_LISTS.items()}
    assert set(metrics) == {"overall", *categories, *("dim/" + d.lower().replace(" ", "_").replace("-", "_") for d in dims)}
    for name, value in dims.items():
        assert metrics["dim/" + name.lower().replace(" ", "_").replace("-", "_")] == pytest.approx(value, abs=TOLERANCE)
    for name, value in categories.items():
        assert metrics[name] == pytest.approx(value, abs=TOLERANCE)
    assert metrics["overall"] == pytest.approx(sum(categories.values()) / 5, abs=TOLERANCE)

    assert [r["index"] for r in raw] == list(range(len(prompts)))
    for record, prompt, level, (standard, k) in zip(raw, prompts, levels, slots):
        assert record["prompt"] == prompt and record["vbench_prompt"] == standard and record["sample"] == k
        assert record["file"] == f"{standard[:180]}-{k}.mp4"
        if standard == BASKETBALL and k == 1:  # dark: every per-video dimension said -1, Diversity is shared
            assert set(record["dimensions"].values()) == {None}
            assert record["score"] == pytest.approx(dims["Diversity"], abs=TOLERANCE)
        elif k >= 3:  # read by Diversity only (per prompt), or by nothing (the 4th sample of a 3-sample prompt)
            assert record["dimensions"] == {}
            assert (record["score"] is None) == (standard != BASKETBALL)
        else:
            assert record["score"] == pytest.approx(level, abs=TOLERANCE)
        if standard == BASKETBALL and k < 20:
            assert record["prompt_dimensions"]["Diversity"] == pytest.approx(dims["Diversity"], abs=TOLERANCE)
    json.dumps(raw)

    run = next((tmp_path / "work").iterdir())
    videos = next((run / "videos").iterdir())
    assert len(list((videos / "Diversity").glob("*.mp4"))) == 20
    assert sorted(p.name for p in (videos / "Complex_Plot").iterdir()) == [f"{LONG_PLOT[:180]}-{k}.mp4" for k in range(3)]
    camera_info = json.loads((run / "info" / "Camera_Motion_full_info.json").read_text())
    assert camera_info == [{"prompt_en": "Garden, zoom in.", "dimension": ["Camera_Motion"], "auxiliary_info": "zoom_in"}]
    logs = {p.stem: p.read_text() for p in (run / "logs").glob("*.log")}
    assert len(logs) == 18 and all("CUDA_VISIBLE_DEVICES=0" in t or "CUDA_VISIBLE_DEVICES=1" in t for t in logs.values())


def small_evaluator(folder, standin, tmp_path, **kwargs):
    return VBench2Evaluator(repo=str(folder), python_executable=str(standin), work_dir=str(tmp_path / "work"),
                            missing="partial", **kwargs)


def test_failing_dimension_names_dimension_command_and_log(vbench, tmp_path, monkeypatch):
    folder, standin = vbench
    evaluator = small_evaluator(folder, standin, tmp_path, dimensions=("Camera_Motion", "Multi-View_Consistency"))
    videos = grey_videos([0.5, 0.6, 0.7])
    monkeypatch.setenv("STANDIN_FAIL", "Multi-View_Consistency")
    with pytest.raises(VBench2RunError) as failed:
        evaluator.evaluate(videos, ["Garden, zoom in."] * 3, [()] * 3)
    message = str(failed.value)
    assert "Multi-View_Consistency failed with exit code 2" in message
    assert f"{standin} {folder}/evaluate.py" in message and "--dimension Multi-View_Consistency" in message
    log = next((tmp_path / "work").iterdir()) / "logs" / "Multi-View_Consistency.log"
    assert f"log: {log}" in message and "CUDA out of memory" in message and log.is_file()

    monkeypatch.setenv("STANDIN_FAIL", "")
    monkeypatch.setenv("STANDIN_NO_JSON", "Camera_Motion")
    with pytest.raises(VBench2RunError, match=r"(?s)Camera_Motion exited normally but wrote no '\*_eval_results.json'.*log: "):
        evaluator.evaluate(videos, ["Garden, zoom in."] * 3, [()] * 3)


def test_partial_dimensions_and_timeout(vbench, tmp_path):
    folder, standin = vbench
    evaluator = small_evaluator(folder, standin, tmp_path, dimensions=("camera motion",))
    metrics, raw = evaluator.evaluate_detailed(grey_videos([0.3, 0.5, 0.7]), ["Garden, zoom in."] * 3, [()] * 3)
    assert metrics["dim/camera_motion"] == pytest.approx(0.5, abs=TOLERANCE)
    assert metrics["controllability"] == metrics["overall"] == metrics["dim/camera_motion"]
    assert [r["score"] for r in raw] == pytest.approx([0.3, 0.5, 0.7], abs=TOLERANCE)

    slow = tmp_path / "slow-python"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    evaluator = small_evaluator(folder, slow, tmp_path, dimensions=("Camera_Motion",), timeout_s=0.5)
    with pytest.raises(VBench2RunError, match=r"Camera_Motion did not finish within 0.5 s"):
        evaluator.evaluate(grey_videos([0.3, 0.5, 0.7]), ["Garden, zoom in."] * 3, [()] * 3)


def test_bad_batches_are_refused_before_anything_runs(vbench, tmp_path):
    folder, standin = vbench
    strict = VBench2Evaluator(repo=str(folder), python_executable=str(standin), work_dir=str(tmp_path / "work"))
    three = grey_videos([0.5] * 3)
    with pytest.raises(ValueError, match=r"cover 2 of VBench-2.0's 18 dimensions .*missing = 'partial'"):
        strict.evaluate(three, ["Garden, zoom in."] * 3, [()] * 3)
    with pytest.raises(LayoutError, match=r"not in VBench-2.0's prompt suite .*'A red cube spins.'"):
        strict.evaluate(three, ["A red cube spins."] * 3, [()] * 3)
    partial = small_evaluator(folder, standin, tmp_path)
    with pytest.raises(LayoutError, match=r"Diversity needs 20 videos of 'A man is playing basketball.', got 3"):
        partial.evaluate(three, [BASKETBALL] * 3, [()] * 3)
    assert not (tmp_path / "work").exists()
    with pytest.raises(ValueError, match="needs VBench-2.0's environment"):
        VBench2Evaluator(repo=str(folder))
    with pytest.raises(ValueError, match="unknown dimension 'Physics'"):
        VBench2Evaluator(repo=str(folder), python_executable=str(standin), dimensions=("Physics",))
