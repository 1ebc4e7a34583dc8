"""Every script in benchmarks/ and diagnostics/ runs to its last line with its smallest arguments (a tiny random toy
policy, a few rollouts, one step), so a refactor of the package cannot break one unnoticed. Their figures are not
checked here: speed is measured by running them as docs/benchmarks.md says, never asserted in tests.

Every script also refuses a bad argument as the commands do (tvrl_bench/cli/script.py): one line naming it, exit 2,
no traceback; those tests call the script's `main(argv)` in this process (seconds for all of them).

A new script must be added to SMOKE_ARGS (with its smallest arguments) and BAD_ARGS (a bad argument and a word of
its one-line refusal); one that reads a profile (--gin_bindings) to CONFIG_SCRIPTS too. What scripts share is in
the package (tvrl_bench/diagnostics/, tvrl_bench/cli/script.py), never in a sibling file."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.training.conftest import FAST

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.relative_to(ROOT).as_posix() for folder in ("benchmarks", "diagnostics")
                 for p in (ROOT / folder).glob("*.py"))
# FAST without the dataset sizes: a few scripts pick prompts with four or more checks from the training set
SMALL = [b for b in FAST if not b.startswith("datasets.")]
TINY = "policies.toy.path = '{policy}'"
PROFILE = ["--profile", "components/profiles/toy_v1.gin", "--gin_bindings", *SMALL, TINY]

SMOKE_ARGS: dict[str, list[str]] = {
    "benchmarks/cli_start.py": ["--repeats", "1"],
    "benchmarks/critics.py": ["components/rewards/toy_qwen_slots.gin", "--steps", "1"],
    "benchmarks/gpu_smoke.py": ["--steps", "1", "--allow-cpu"],
    "benchmarks/report.py": ["--root", "{tmp}/report", "--repeats", "1", "--runs", "48"],
    "benchmarks/study_page.py": ["--root", "{tmp}/page", "--repeats", "1"],
    "benchmarks/seed_batching.py": ["--seeds", "2", "--repeats", "1", "--policy-path", "{policy}",
                                    "--gin_bindings", *SMALL],
    "benchmarks/step.py": ["--steps", "1", "--credit-repeats", "1", "--policy-path", "{policy}", "--gin_bindings",
                           *SMALL],
    "benchmarks/sweep.py": ["--trials", "2", "--steps", "1", *PROFILE],
    "benchmarks/toy_world.py": ["--n", "4"],
    "diagnostics/ascent.py": ["--batches", "4", "--held_out", "1", "--alphas", "1e-3", *PROFILE],
    "diagnostics/base_competence.py": ["--prompts", "4", *PROFILE],
    "diagnostics/calibration.py": ["--prompts", "2", "--group", "2", *PROFILE],
    "diagnostics/chain_linearity.py": ["--alphas", "1e-5", "--rollouts", "2", *PROFILE],
    "diagnostics/credit_concentration.py": ["components/credit/located.gin", "--steps", "1", *PROFILE],
    "diagnostics/distill_ceiling.py": ["--prompts", "2", "--group", "2", "--steps", "1", "--batch", "2",
                                       "--eval_prompts", "4", *PROFILE],
    "diagnostics/grad_signal.py": ["--batches", "2", *PROFILE],
    "diagnostics/pathwise.py": ["--steps", "1", "--eval_every", "1", *PROFILE],
    "diagnostics/step_landscape.py": ["--alphas", "1e-5", *PROFILE],
    "diagnostics/screen_gradients.py": ["--batches", "2", "--reference_rollouts", "4", *PROFILE],
    "diagnostics/screen_locality.py": ["--steps", "1", *PROFILE],
    "diagnostics/screen_noise.py": ["--seeds", "0", "--steps", "1", "--factor", "2", "--prompts", "6", *PROFILE],
    "diagnostics/staged_simulation.py": ["--studies", "50", "--permutations", "200", "--differences", "0", "8",
                                         "--out", "{tmp}/staged.png"],
}


# A bad argument of each script and a word its one-line refusal must hold.
BAD_ARGS: dict[str, tuple[list[str], str]] = {
    "benchmarks/cli_start.py": (["--repeats", "0"], "--repeats 0: give 1 or more"),
    "benchmarks/critics.py": (["--steps", "0"], "--steps 0: give 1 or more"),
    "benchmarks/gpu_smoke.py": (["--steps", "0"], "--steps 0: give 1 or more"),
    "benchmarks/report.py": (["--runs", "5"], "--runs 5: give 41 or more"),
    "benchmarks/seed_batching.py": (["--seeds", "1"], "--seeds 1: give 2 or more"),
    "benchmarks/study_page.py": (["--wide-prompts", "-1"], "--wide-prompts -1: give 0 or more"),
    "benchmarks/step.py": (["--steps", "0"], "--steps 0: give 1 or more"),
    "benchmarks/sweep.py": (["--trials", "3"], "--trials 3: give an even number"),
    "benchmarks/toy_world.py": (["--n", "0"], "--n 0: give 1 or more"),
    "diagnostics/ascent.py": (["--batches", "3"], "--batches 3: give 4 or more"),
    "diagnostics/base_competence.py": (["--policy", "{tmp}/none"], "--policy {tmp}/none: no such folder"),
    "diagnostics/calibration.py": (["--prompts", "0"], "--prompts 0: give 1 or more"),
    "diagnostics/chain_linearity.py": (["--sigma", "0"], "--sigma 0.0: give a noise level in (0, 1]"),
    "diagnostics/credit_concentration.py": (["--steps", "0"], "--steps 0: give 1 or more"),
    "diagnostics/distill_ceiling.py": (["--rounds", "0"], "--rounds 0: give 1 or more"),
    "diagnostics/grad_signal.py": (["--batches", "1"], "--batches 1: give 2 or more"),
    "diagnostics/pathwise.py": (["--eval_every", "0"], "--eval_every 0: give 1 or more"),
    "diagnostics/step_landscape.py": (["--alphas", "1e-5", "-1"], "--alphas -1.0: give a number above 0"),
    "diagnostics/screen_gradients.py": (["--batches", "1"], "--batches 1: give 2 or more"),
    "diagnostics/screen_locality.py": (["--local", "0"], "--local 0.0: give a fraction in (0, 1]"),
    "diagnostics/screen_noise.py": (["--factor", "1"], "--factor 1: give 2 or more"),
    "diagnostics/staged_simulation.py": (["--studies", "10"], "--studies 10: give 50 or more"),
}
CONFIG_SCRIPTS = ["benchmarks/step.py", "benchmarks/sweep.py", "diagnostics/ascent.py", "diagnostics/base_competence.py",
                  "diagnostics/calibration.py", "diagnostics/chain_linearity.py", "diagnostics/credit_concentration.py",
                  "diagnostics/distill_ceiling.py", "diagnostics/grad_signal.py", "diagnostics/pathwise.py", "diagnostics/step_landscape.py",
                  "diagnostics/screen_gradients.py", "diagnostics/screen_locality.py", "diagnostics/screen_noise.py"]


def test_every_script_has_its_smallest_arguments_and_a_bad_one():
    assert sorted(SMOKE_ARGS) == SCRIPTS
    assert sorted(BAD_ARGS) == sorted(SMOKE_ARGS)


def script_main(script: str):
    """The `main(argv)` of a script, loaded from its file."""
    spec = importlib.util.spec_from_file_location(f"script_{Path(script).stem}", ROOT / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def test_no_script_imports_a_sibling_file():
    """Scripts share code through the package: `import profile_trainer` (a file beside the script) is gone."""
    siblings = {p.stem for folder in ("benchmarks", "diagnostics") for p in (ROOT / folder).glob("*.py")}
    found = [f"{script}: {line.strip()}" for script in SCRIPTS
             for line in (ROOT / script).read_text(encoding="utf-8").splitlines()
             if line.startswith(("import ", "from ")) and line.split()[1].split(".")[0] in siblings]
    assert found == []


def refusal(script: str, argv: list[str], capsys) -> str:
    """The one line `script` refused `argv` with (exit 2, no traceback, nothing else on stderr)."""
    code = script_main(script)(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and "Traceback" not in err and len(lines) == 1, f"exit {code}:\n{err[-3000:]}"
    assert lines[0].startswith(f"{script}: error: "), lines[0]
    return lines[0]


@pytest.mark.parametrize("script", sorted(BAD_ARGS))
def test_a_script_refuses_a_bad_argument_in_one_line(script, capsys, tmp_path):
    argv, needle = BAD_ARGS[script]
    line = refusal(script, [a.format(tmp=tmp_path) for a in argv], capsys)
    assert needle.format(tmp=tmp_path) in line, line


@pytest.mark.parametrize("script", CONFIG_SCRIPTS)
def test_a_script_names_a_config_mistake_as_the_commands_do(script, capsys):
    line = refusal(script, ["--gin_bindings", "samplers.sage.etta = 0.5"], capsys)
    assert "--gin_bindings 'samplers.sage.etta = 0.5': 'samplers.sage' has no parameter 'etta'; did you mean 'eta'?" \
        in line, line


@pytest.mark.integration
@pytest.mark.parametrize("script", sorted(SMOKE_ARGS))
def test_a_script_runs_to_its_last_line(script, tiny_policy_path, tmp_path):
    args = [a.format(policy=tiny_policy_path, tmp=tmp_path) for a in SMOKE_ARGS[script]]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, script, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, f"{script} {' '.join(args)}\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    assert result.stdout.strip(), f"{script} printed nothing"


@pytest.mark.parametrize("profile, recipe, needle", [
    ("components/profiles/toy.gin", "v2", "--recipe v2 is a sprite-world recipe, but the profile's policy is the slot "
     "world's (policies.toy.base = 'slots'); leave --recipe out"),
    ("components/profiles/toy_v3.gin", "slots", "--recipe slots is a slot-world recipe"),
])
def test_the_distillation_ceiling_refuses_a_recipe_of_another_world_than_the_profiles(profile, recipe, needle, capsys):
    """Its recipe (and the world of its --truth videos) is the profile's base's; another world's is one line."""
    line = refusal("diagnostics/distill_ceiling.py", ["--profile", profile, "--recipe", recipe, "--truth"], capsys)
    assert needle in line, line


@pytest.mark.parametrize("argv, line", [
    (["--seeds", "0", "0"], "--seeds 0 0: give distinct seeds (each trains its arms once, and they are paired by "
                            "seed), e.g. --seeds 0 1"),
    (["--prompts", "4"], "--prompts 4: the profile's final evaluation already scores 64 prompts "
                         "(training.trial.eval_prompts), which the wide one scores among its own; give 64 or more, "
                         "e.g. --prompts 64"),
    (["--prompts", "5000"], "--prompts 5000: more held-out prompts than the slot world has scenes (1,296: 6 colours "
                            "^ 4 slots); give at most 1296, e.g. --prompts 1296"),
])
def test_the_noise_screen_refuses_its_own_arguments_in_its_own_words(argv, line, capsys):
    """Before any arm is trained, and never as a --gin_bindings value the user did not give."""
    assert refusal("diagnostics/screen_noise.py", argv, capsys) == f"diagnostics/screen_noise.py: error: {line}"


def _noise_arms(tmp_path: Path) -> list[int]:
    """The pids of the noise screen's arm processes whose files are under `tmp_path`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "tvrl_bench.diagnostics.noise_arm" in words and any(str(tmp_path) in w for w in words):
            found.append(int(cmdline.parent.name))
    return found


@pytest.mark.integration
@pytest.mark.parametrize("stop, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stopped_noise_screen_stops_its_arms_and_leaves_no_folder(stop, code, tiny_policy_path, tmp_path):
    """SIGTERM (or Ctrl-C) while its arms train: one line, exit 128 + the signal, no traceback, no arm left running,
    no temporary folder left."""
    args = [a.format(policy=tiny_policy_path) for a in SMOKE_ARGS["diagnostics/screen_noise.py"]]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "diagnostics/screen_noise.py", *args, "--workers", "2"], cwd=ROOT,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(_noise_arms(tmp_path)) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    assert len(_noise_arms(tmp_path)) == 2, "the arms did not start"
    time.sleep(1.0)  # the arms importing or training
    process.send_signal(stop)
    out, err = process.communicate(timeout=120)
    assert process.returncode == code and err.strip() == "diagnostics/screen_noise.py: interrupted", err[-3000:]
    assert _noise_arms(tmp_path) == [] and list(tmp_path.iterdir()) == []
