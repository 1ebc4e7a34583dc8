"""The VBench-2.0 evaluator preset and the VideoGen-Eval + VBench-2.0 dataset preset, built through gin."""

from __future__ import annotations

import json


from tests.datasets.test_prompt_suites import VIDEOGEN_EVAL
from tests.evaluators.vbench2.fixtures import SUITE, make_vbench2_folder, write_standin
from tvrl_bench import registry
from tvrl_bench.config import load_config
from tvrl_bench.evaluators.vbench2.evaluator import VBench2Evaluator
from tvrl_bench.evaluators.vbench2.env import write_marker


def test_evaluator_and_dataset_presets(tmp_path):
    folder = make_vbench2_folder(tmp_path)
    env = tmp_path / "env"
    write_marker(env, folder)
    (env / "bin").mkdir()
    write_standin(env / "bin" / "python")
    prompts = tmp_path / "videogen_eval.csv"
    prompts.write_text(VIDEOGEN_EVAL, encoding="utf-8")
    checks = tmp_path / "checks.jsonl"
    checks.write_text(json.dumps({"prompt": "Zooming in hyper-fast to a red rose.", "checks": ["Is there a red rose?"]}) + "\n")
    load_config(
        ["components/evaluators/vbench2.gin", "components/datasets/videogen_eval_vbench2.gin"],
        [
            f"evaluators.vbench2.env_dir = '{env}'",
            f"datasets.videogen_eval.path = '{prompts}'",
            f"datasets.videogen_eval.checks_path = '{checks}'",
            f"datasets.vbench2.path = '{folder}'",
        ],
    )
    evaluator = registry.build("EVALUATOR")
    assert isinstance(evaluator, VBench2Evaluator) and evaluator.folder == folder and evaluator.fps == 24
    dataset = registry.build("DATASET")
    assert dataset.name == "videogen_eval+vbench2"
    assert len(dataset.train) == 3 and dataset.train[2].checks == ("Is there a red rose?",)
    expected = sum(20 if any(d == "Diversity" for d, _ in dims) else 3 for dims in SUITE.values())
    assert len(dataset.eval) == expected
