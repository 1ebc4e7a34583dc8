"""`tvrl-train` end to end: a finished run per docs/report.md, resume after a kill, failure marking, 2 processes."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from mlflow.tracking import MlflowClient

import pytest

from tests.support import console_script
from tests.training.conftest import FAST

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def train(tmp_path: Path, *args: str, db: str = "t.db", out: str = "runs", env: dict | None = None, launcher=None):
    command = (launcher or [console_script("tvrl-train")]) + [*args, "--tracking-uri", f"sqlite:///{tmp_path / db}", "--out", str(tmp_path / out), "--no-progress"]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=900)


def bindings(policy: str, *extra: str) -> list[str]:
    return ["--gin_bindings", *FAST, f"policies.toy.path = '{policy}'", *extra]


def runs(tmp_path: Path, db: str = "t.db", experiment: str = "trials"):
    client = MlflowClient(f"sqlite:///{tmp_path / db}")
    exp = client.get_experiment_by_name(experiment)
    return client, client.search_runs([exp.experiment_id])


def digests(output: str) -> list[str]:
    return re.findall(r"final parameters sha256=(\w+)", output)


def test_toy_profile_trial_logs_the_results_contract(tmp_path, tiny_policy_path):
    result = train(tmp_path, "components/profiles/toy_v1.gin", "--steps", "3",
                   *bindings(tiny_policy_path, "training.trial.wide_eval_prompts = 12"))
    assert result.returncode == 0, result.stderr[-3000:]
    client, found = runs(tmp_path)
    assert len(found) == 1
    run = found[0]
    assert run.info.status == "FINISHED"
    assert run.data.params["policy"] == "toy" and run.data.params["sampler"] == "sage"
    assert run.data.params["reward"] == "toy_oracle" and run.data.params["credit"] == "window3"
    assert run.data.params["method"] == "TVRL" and run.data.params["seed"] == "0"
    assert run.data.params["samplers.sage.eta"] == "0.5" and run.data.params["training.trial.steps"] == "3"
    assert run.data.tags["tvrl.role"] == "trial" and len(run.data.tags["tvrl.trial_key"]) == 16
    assert run.info.run_name == "sage-toy_oracle-window3-s0"
    for name in ["train/reward_mean", "train/reward_std", "train/loss", "train/ratio_mean", "train/clipfrac",
                 "train/approx_kl", "train/grad_norm", "train/credit_entropy", "time/step_s"]:
        assert [m.step for m in client.get_metric_history(run.info.run_id, name)] == [1, 2, 3], name
    evals = client.get_metric_history(run.info.run_id, "eval/overall")
    assert len(evals) == 1 and evals[0].step == 3 and 0 <= evals[0].value <= 1
    for category in ["object", "attribute", "motion", "background"]:
        assert f"eval/{category}" in run.data.metrics
        assert f"wide_eval/{category}" in run.data.metrics
    wide = client.get_metric_history(run.info.run_id, "wide_eval/overall")
    assert len(wide) == 1 and wide[0].step == 3 and "wide_eval/critic_reward" in run.data.metrics
    assert 4 < int(run.data.tags["tvrl.wide_eval_prompts"]) <= 12  # the 16 trained scenes dropped
    artifacts = {a.path for folder in ["config", "samples/start", "samples/final", "credit", "eval"]
                 for a in client.list_artifacts(run.info.run_id, folder)}
    for expected in ["config/config.gin", "config/operative_config.gin", "samples/start/sample_000.mp4",
                     "samples/final/sample_001.mp4", "samples/final/index.json", "credit/step_000001.png",
                     "eval/results.json"]:
        assert expected in artifacts, sorted(artifacts)


def faulty_config(tmp_path: Path) -> str:
    path = tmp_path / "faulty.gin"
    path.write_text(
        "import tests.training.faults\n"
        "include 'components/profiles/toy_v1.gin'\n"
        "REWARD = @rewards.faulty_oracle()\n"
        "training.trial.checkpoint_every = 1\n"
    )
    return str(path)


def test_a_killed_trial_resumes_from_its_checkpoint_and_ends_as_if_uninterrupted(tmp_path, tiny_policy_path):
    config = faulty_config(tmp_path)
    args = [config, "--steps", "4", *bindings(tiny_policy_path)]
    reference = train(tmp_path, *args, db="ref.db", out="ref")
    assert reference.returncode == 0, reference.stderr[-3000:]

    killed = train(tmp_path, *args, env={"TVRL_FAULT": "sigkill", "TVRL_FAULT_AT": "3"})
    assert killed.returncode == -9
    _, found = runs(tmp_path)
    assert [r.info.status for r in found] == ["RUNNING"]  # SIGKILL leaves it to whoever resumes
    checkpoint = next((tmp_path / "runs" / "trials").iterdir())
    assert '"step": 2' in (checkpoint / "trial.json").read_text()

    resumed = train(tmp_path, *args)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming trial" in resumed.stderr and "from step 2 (attempt 2" in resumed.stderr
    client, found = runs(tmp_path)
    by_attempt = {r.data.tags["tvrl.attempt"]: r for r in found}
    assert by_attempt["1"].info.status == "KILLED" and by_attempt["2"].info.status == "FINISHED"
    resumed_run = by_attempt["2"]
    assert resumed_run.data.tags["tvrl.resumed_from"] == by_attempt["1"].info.run_id
    _, ref_runs = runs(tmp_path, db="ref.db")
    assert digests(resumed.stderr) == digests(reference.stderr)
    assert resumed_run.data.metrics["eval/overall"] == ref_runs[0].data.metrics["eval/overall"]
    history = client.get_metric_history(resumed_run.info.run_id, "train/loss")
    reference_history = MlflowClient(f"sqlite:///{tmp_path / 'ref.db'}").get_metric_history(ref_runs[0].info.run_id, "train/loss")
    assert [(m.step, m.value) for m in history] == [(m.step, m.value) for m in reference_history]
    assert [a.path for a in client.list_artifacts(resumed_run.info.run_id, "samples/start")]


def test_sigterm_stops_at_a_step_boundary_and_marks_the_run_killed(tmp_path, tiny_policy_path):
    result = train(tmp_path, faulty_config(tmp_path), "--steps", "5", *bindings(tiny_policy_path),
                   env={"TVRL_FAULT": "sigterm", "TVRL_FAULT_AT": "2"})
    assert result.returncode == 130, result.stderr[-3000:]
    assert "rerun the same command to resume" in result.stderr
    _, found = runs(tmp_path)
    assert found[0].info.status == "KILLED"
    checkpoint = next((tmp_path / "runs" / "trials").iterdir())
    assert (checkpoint / "state.pt").is_file() and '"step": 2' in (checkpoint / "trial.json").read_text()


def test_a_non_finite_reward_marks_the_run_failed_and_keeps_the_checkpoint(tmp_path, tiny_policy_path):
    result = train(tmp_path, faulty_config(tmp_path), "--steps", "4", *bindings(tiny_policy_path),
                   env={"TVRL_FAULT": "nan", "TVRL_FAULT_AT": "2"})
    assert result.returncode == 1
    assert "non-finite reward" in result.stderr and "marked FAILED" in result.stderr
    _, found = runs(tmp_path)
    assert found[0].info.status == "FAILED"
    checkpoint = next((tmp_path / "runs" / "trials").iterdir())
    assert (checkpoint / "state.pt").is_file() and '"step": 1' in (checkpoint / "trial.json").read_text()


def test_two_processes_end_with_identical_parameters(tmp_path, tiny_policy_path):
    launcher = [console_script("accelerate"), "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
                "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "tvrl_bench.cli.train"]
    result = train(tmp_path, "components/profiles/toy_v1.gin", "--cpu", "--steps", "2", *bindings(tiny_policy_path),
                   launcher=launcher)
    assert result.returncode == 0, result.stderr[-3000:]
    found = digests(result.stderr)
    assert len(found) == 2 and found[0] == found[1]
    assert "rank 1/2" in result.stderr and "rank 0/2" in result.stderr
    _, trial_runs = runs(tmp_path)
    assert len(trial_runs) == 1 and trial_runs[0].info.status == "FINISHED"


def test_config_errors_stop_before_training_with_the_binding_named(tmp_path, tiny_policy_path):
    result = train(tmp_path, "components/profiles/toy_v1.gin", "--gin_bindings", "samplers.sage.etta = 0.2")
    assert result.returncode == 2
    assert "'samplers.sage' has no parameter 'etta'; did you mean 'eta'" in result.stderr
