"""The one front door into training (tvrl_bench/training/trial/built.py): a trainer from config files, bindings
and a folder, no MLflow run; a router passed in routes its batches; the one place a Trainer is constructed."""

from __future__ import annotations

import ast
from pathlib import Path

import gin
import pytest

from tests.training.conftest import FAST
from tvrl_bench import registry
from tvrl_bench.config import ConfigError, load_config
from tvrl_bench.training.trial.built import build_trainer

ROOT = Path(__file__).resolve().parents[3]
PROFILE = "components/profiles/toy_v1.gin"


def test_a_trainer_from_files_bindings_and_a_folder_checkpoints_there(tiny_policy_path, tmp_path):
    trainer = build_trainer([PROFILE], [*FAST, f"policies.toy.path = '{tiny_policy_path}'"], tmp_path)
    assert trainer.run_id is None and trainer.s.prompts_per_step == 2 and trainer.checkpoints.folder == tmp_path
    assert gin.config_str() == ""  # the config is cleared: the next build starts from nothing
    trainer.step(0)


def test_a_router_passed_in_routes_the_batches(tiny_policy_path, tmp_path):
    load_config([PROFILE, "components/credit/located.gin"])
    router = registry.build("CREDIT")
    gin.clear_config()
    trainer = build_trainer([PROFILE], [*FAST, f"policies.toy.path = '{tiny_policy_path}'"], tmp_path, credit=router)
    assert trainer.s.credit is router and registry.get("credit.located").target is type(router)
    assert trainer.collect(0).weights is not None


def test_a_config_mistake_is_one_line_where_it_was_bound(tiny_policy_path, tmp_path):
    with pytest.raises(ConfigError) as refused:
        build_trainer([PROFILE], [*FAST, f"policies.toy.path = '{tiny_policy_path}'",
                                  "training.trial.micro_batch = 3"], tmp_path)
    assert str(refused.value).startswith("--gin_bindings: training.trial.micro_batch = 3"), str(refused.value)


def test_the_trainer_is_constructed_in_one_place():
    """Trials, diagnostics and benchmarks build it through the front door; only built.py calls Trainer(...)."""
    files = [p for folder in ("tvrl_bench", "diagnostics", "benchmarks") for p in (ROOT / folder).rglob("*.py")]
    calls = [path.relative_to(ROOT).as_posix() for path in files
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Trainer"]
    assert calls == ["tvrl_bench/training/trial/built.py"], calls
