"""Test fixtures in VBench-2.0's formats: a small VBench-2.0 folder, results files, and a stand-in interpreter.

The folder mimics a Vchitect/VBench checkout's VBench-2.0 folder: `evaluate.py` (never run: the stand-in
interpreter plays it), `vbench2/VBench2_full_info.json` (entries in VBench-2.0's format, one prompt covering
several dimensions as "A man is playing basketball." does in the real suite), and line-aligned
`prompts/prompt/<Dimension>.txt` / `prompts/prompt_aug/VBench2_aug_prompt/<Dimension>.txt` files.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

# Category lists as VBench-2.0's scripts/constant.py writes them (with spaces), for independent checks.
CONSTANT_LISTS = {
    "creativity": ["Composition", "Diversity"],
    "commonsense": ["Instance Preservation", "Motion Rationality"],
    "controllability": [
        "Camera Motion", "Complex Landscape", "Complex Plot", "Dynamic Attribute", "Dynamic Spatial Relationship",
        "Human Interaction", "Motion Order Understanding",
    ],
    "human_fidelity": ["Human Anatomy", "Human Clothes", "Human Identity"],
    "physics": ["Material", "Mechanics", "Multi-View Consistency", "Thermotics"],
}

BASKETBALL = "A man is playing basketball."
LONG_PLOT = (
    "The race began, and the first runner quickly took off, leading the other teams. Everyone was focused on his "
    "performance. During the baton handoff of the first runner, Team A made a slight mistake, and the baton nearly "
    "fell. Despite this, the runner quickly passed it to the second runner."
)
# prompt -> (dimensions, auxiliary info per dimension or None)
SUITE: dict[str, list[tuple[str, object]]] = {
    BASKETBALL: [("Diversity", None), ("Human_Anatomy", None), ("Human_Clothes", None), ("Human_Identity", None),
                 ("Instance_Preservation", "1.man")],
    "A lion with the wings of an eagle, soaring through the sky.": [
        ("Composition", {"question": ["The wings of an eagle", "A lion"], "judge": [True, False]})],
    "A dog is on the left of a table, then the dog runs to the front of the table.": [
        ("Dynamic_Spatial_Relationship", ["Is the dog on the left of the table? (yes or no)",
                                          "Is the dog on the front of the table? (yes or no)"]),
        ("Motion_Order_Understanding", ["on the left", "runs to the front"])],
    "The leaves gradually change from red to green.": [
        ("Dynamic_Attribute", ["Initially, is the color of leaves mostly red? (yes or no)",
                               "Finally, is the color of leaves mostly green? (yes or no)"]),
        ("Complex_Landscape", ["leaves", "red", "green"])],
    "One person hands a cup of water to another.": [("Human_Interaction", None), ("Motion_Rationality",
                                                     ["Is one person handing a cup to another? (yes or no)"])],
    LONG_PLOT: [("Complex_Plot", ["first runner", "baton handoff"])],
    "Garden, zoom in.": [("Camera_Motion", "zoom_in"), ("Multi-View_Consistency", None)],
    "Ice cubes melt in a glass of water on a table.": [
        ("Thermotics", ["Initially, are there ice cubes? (yes or no)", "Finally, have the ice cubes melted? (yes or no)"]),
        ("Material", ["Are the ice cubes in water? (yes or no)"]),
        ("Mechanics", ["Is the glass on a table? (yes or no)"])],
    # In the suite but never generated in the tests: the evaluator must not ask VBench-2.0 for its videos.
    "A cat sleeps on a sofa.": [("Human_Anatomy", None), ("Camera_Motion", "static")],
}
AUGMENTED = {"Garden, zoom in.": "A lush garden full of flowers; the camera zooms in slowly."}


def make_vbench2_folder(root: Path) -> Path:
    """A VBench-2.0 folder with the SUITE's full info and prompt files; returns the folder."""
    folder = root / "VBench" / "VBench-2.0"
    (folder / "vbench2").mkdir(parents=True)
    (folder / "evaluate.py").write_text("raise SystemExit('the tests run the stand-in interpreter instead')\n")
    entries, by_dimension = [], {}
    for prompt, dims in SUITE.items():
        for dimension, aux in dims:
            entry = {"prompt_en": prompt, "dimension": [dimension]}
            if aux is not None:
                entry["auxiliary_info"] = aux
            entries.append(entry)
            by_dimension.setdefault(dimension, []).append(prompt)
    (folder / "vbench2" / "VBench2_full_info.json").write_text(json.dumps(entries, indent=4))
    for sub in ("prompt", "prompt_aug/VBench2_aug_prompt"):
        (folder / "prompts" / sub).mkdir(parents=True)
    for dimension, prompts in by_dimension.items():
        (folder / "prompts" / "prompt" / f"{dimension}.txt").write_text("\n".join(prompts))
        aug = [AUGMENTED.get(p, p + " Highly detailed.") for p in prompts]
        (folder / "prompts" / "prompt_aug" / "VBench2_aug_prompt" / f"{dimension}.txt").write_text("\n".join(aug))
    return folder


STANDIN = r'''#!{python}
"""Stand-in for VBench-2.0's `python evaluate.py ...`: same arguments, same video lookup, same results format.

Scores: a video's mean brightness in [0, 1] (decoded with PyAV); VBench-2.0's -1 ("not judgeable") for a video
darker than 0.05, left out of the dimension's mean; Diversity: per prompt, the population standard deviation
of its 20 videos' brightness, one record carrying the first video's path.
"""
import argparse, datetime, json, os, sys

import av

script = sys.argv[1]
if os.path.basename(script) != "evaluate.py" or os.path.dirname(os.path.abspath(script)) != os.getcwd():
    sys.exit(f"stand-in: expected to run <VBench-2.0>/evaluate.py from the VBench-2.0 folder, got {{script}} in {{os.getcwd()}}")
parser = argparse.ArgumentParser()
parser.add_argument("--output_path", required=True)
parser.add_argument("--full_json_dir", required=True)
parser.add_argument("--videos_path", required=True)
parser.add_argument("--dimension", nargs="+", required=True)
parser.add_argument("--mode", default="vbench_standard")
parser.add_argument("--load_ckpt_from_local", type=bool)
args = parser.parse_args(sys.argv[2:])
dimension = args.dimension[0]
print(f"args: {{args}}", flush=True)
print("CUDA_VISIBLE_DEVICES=" + os.environ.get("CUDA_VISIBLE_DEVICES", "unset"), flush=True)
if os.environ.get("STANDIN_FAIL") == dimension:
    print("Traceback (most recent call last):\nRuntimeError: CUDA out of memory (stand-in)", flush=True)
    sys.exit(2)
if os.environ.get("STANDIN_NO_JSON") == dimension:
    sys.exit(0)


def brightness(path):
    total = count = 0
    with av.open(path) as container:
        for frame in container.decode(video=0):
            values = frame.to_ndarray(format="rgb24")
            total += float(values.sum())
            count += values.size
    return total / count / 255.0


entries = json.load(open(args.full_json_dir))
names = set(os.listdir(args.videos_path))
records = []
for entry in entries:
    if dimension not in entry["dimension"]:
        continue
    n = 20 if entry["dimension"][0] == "Diversity" else 3
    paths = []
    for i in range(n):
        name = f"{{entry['prompt_en'][:180]}}-{{i}}.mp4"
        if name not in names:
            print(f"WARNING!!! This required video is not found! The missing video is: {{name}}", flush=True)
            raise SystemExit(1)
        paths.append(os.path.join(args.videos_path, name))
    values = [brightness(p) for p in paths]
    if dimension == "Diversity":
        mean = sum(values) / n
        records.append({{"video_path": paths[0], "video_results": (sum((v - mean) ** 2 for v in values) / n) ** 0.5}})
    else:
        records += [{{"video_path": p, "video_results": (v if v >= 0.05 else -1)}} for p, v in zip(paths, values)]
valid = [r["video_results"] for r in records if r["video_results"] != -1]
os.makedirs(args.output_path, exist_ok=True)
name = "results_" + datetime.datetime.now().strftime("%Y-%m-%d-%H:%M:%S")
json.dump(entries, open(os.path.join(args.output_path, name + "_full_info.json"), "w"))
json.dump({{dimension: [sum(valid) / len(valid), records]}}, open(os.path.join(args.output_path, name + "_eval_results.json"), "w"), indent=4)
print("done", flush=True)
'''


def write_standin(path: Path) -> Path:
    """An executable stand-in interpreter (see STANDIN) whose shebang is this test's Python."""
    path.write_text(STANDIN.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path
