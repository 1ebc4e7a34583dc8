"""Loaders by path: VideoGen-Eval prompts in VideoAlign's videogen_eval.csv format, VBench-2.0's prompt files."""

from __future__ import annotations

import json

import pytest

from tests.evaluators.vbench2.fixtures import AUGMENTED, BASKETBALL, SUITE, make_vbench2_folder
from tvrl_bench.datasets.rows import PromptFileError
from tvrl_bench.datasets.vbench2 import auxiliary_checks, vbench2_prompt_set
from tvrl_bench.datasets.videogen_eval import videogen_eval_prompt_set
from tvrl_bench.evaluators.vbench2.catalog import load_catalog

# Three rows in the format of KwaiVGI/VideoAlign datasets/video_eval_prompts/videogen_eval.csv (quoted fields with
# commas and doubled quotes, a Chinese column).
VIDEOGEN_EVAL = '''prompt,prompt_shorter,prompt_zh
"A crystal-clear glass ball begins its journey across a polished wooden tabletop, reflecting the ambient light.","Static camera, a glass ball rolls on a smooth tabletop.",静态摄像机，玻璃球在光滑的桌面上滚动。
"A news anchor reads headlines like ""Alien Invasion Imminent?"" in a studio.","Depict a news broadcast, with sensational headlines.",描述一则新闻报道。
Zooming in hyper-fast to a red rose.,Zooming in hyper-fast to a red rose and showcase the details of its petals.,超快速放大一朵红玫瑰。
'''


def test_videogen_eval_columns_and_checks(tmp_path):
    path = tmp_path / "videogen_eval.csv"
    path.write_text(VIDEOGEN_EVAL, encoding="utf-8")
    long = videogen_eval_prompt_set(str(path))
    assert long.name == "videogen_eval" and long.eval == () and len(long.train) == 3
    assert long.train[1].prompt == 'A news anchor reads headlines like "Alien Invasion Imminent?" in a studio.'
    cache = tmp_path / "checks.jsonl"
    cache.write_text(json.dumps({"prompt": "Static camera, a glass ball rolls on a smooth tabletop.",
                                 "checks": ["Is there a glass ball?", "Is the camera static?"]}) + "\n")
    short = videogen_eval_prompt_set(str(path), column="prompt_shorter", checks_path=str(cache), eval_fraction=1 / 3)
    assert len(short.train) == 2 and len(short.eval) == 1
    by_prompt = {i.prompt: i.checks for i in short.train + short.eval}
    assert by_prompt["Static camera, a glass ball rolls on a smooth tabletop."] == ("Is there a glass ball?", "Is the camera static?")
    assert videogen_eval_prompt_set(str(path), column="prompt_zh").train[2].prompt == "超快速放大一朵红玫瑰。"
    with pytest.raises(PromptFileError, match=r"line 1: no 'caption' column .*columns: prompt, prompt_shorter, prompt_zh"):
        videogen_eval_prompt_set(str(path), column="caption")


def test_vbench2_suite_from_the_folder(tmp_path):
    folder = make_vbench2_folder(tmp_path)
    suite = vbench2_prompt_set(str(folder.parent))
    assert suite.train == () and [i.prompt for i in suite.eval] == list(SUITE)
    checks = {i.prompt: i.checks for i in suite.eval}
    assert checks["Ice cubes melt in a glass of water on a table."] == (
        "Initially, are there ice cubes?", "Finally, have the ice cubes melted?", "Are the ice cubes in water?",
        "Is the glass on a table?")
    assert checks["Garden, zoom in."] == () and checks[BASKETBALL] == ()

    camera = vbench2_prompt_set(str(folder), dimensions=("Camera Motion",), repeat=True, checks="none")
    assert [i.prompt for i in camera.eval] == ["Garden, zoom in."] * 3 + ["A cat sleeps on a sofa."] * 3
    diversity = vbench2_prompt_set(str(folder), dimensions=("Diversity",), repeat=True)
    assert [i.prompt for i in diversity.eval] == [BASKETBALL] * 20

    augmented = vbench2_prompt_set(str(folder), dimensions=("Camera_Motion",), variant="aug")
    assert augmented.eval[0].prompt == AUGMENTED["Garden, zoom in."]
    assert load_catalog(folder).resolve(augmented.eval[0].prompt) == "Garden, zoom in."

    one_each = vbench2_prompt_set(str(folder), per_dimension=1, seed=3)
    assert one_each == vbench2_prompt_set(str(folder), per_dimension=1, seed=3)
    covered = {d for i in one_each.eval for d, _ in SUITE[i.prompt]}
    assert len(covered) == 18
    picks = {
        tuple(i.prompt for i in vbench2_prompt_set(str(folder), dimensions=("Camera_Motion",), per_dimension=1, seed=s).eval)
        for s in range(12)
    }
    assert picks == {("Garden, zoom in.",), ("A cat sleeps on a sofa.",)}


def test_vbench2_suite_from_prompt_files(tmp_path):
    folder = make_vbench2_folder(tmp_path)
    txt = vbench2_prompt_set(str(folder / "prompts" / "prompt" / "Diversity.txt"), repeat=True)
    assert [i.prompt for i in txt.eval] == [BASKETBALL] * 20
    meta = tmp_path / "Dynamic_Attribute.json"  # prompts/meta_info format: "dimension" is a string
    meta.write_text(json.dumps([{"prompt_en": "The leaves gradually change from red to green.", "dimension": "Dynamic_Attribute",
                                 "auxiliary_info": ["Does the color of leaves change? (yes or no)"]}]))
    assert vbench2_prompt_set(str(meta)).eval[0].checks == ("Does the color of leaves change?",)
    text_info = tmp_path / "VBench2_full_text_info.json"  # prompts/VBench2_full_text_info.json format
    text_info.write_text(json.dumps({BASKETBALL: {"caption": BASKETBALL, "dimension": ["Diversity", "Human_Clothes"]}}))
    assert len(vbench2_prompt_set(str(text_info), repeat=True).eval) == 20
    with pytest.raises(PromptFileError, match="variant 'aug' needs the VBench-2.0 folder"):
        vbench2_prompt_set(str(meta), variant="aug")
    with pytest.raises(ValueError, match="unknown dimension 'Physics'"):
        vbench2_prompt_set(str(folder), dimensions=("Physics",))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"prompt_en": "x", "dimension": ["Camera Motions"]}]))
    with pytest.raises(ValueError, match=r"bad.json: entry 0: unknown dimension 'Camera Motions'"):
        vbench2_prompt_set(str(bad))


def test_auxiliary_checks_keep_only_questions():
    assert auxiliary_checks(["Is the dog on the left of the table? (yes or no)", "sitting"]) == (
        "Is the dog on the left of the table?",)
    assert auxiliary_checks("zoom_in") == () and auxiliary_checks({"question": ["A lion"]}) == ()
