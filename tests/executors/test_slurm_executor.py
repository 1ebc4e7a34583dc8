"""The Slurm executor against fake Slurm commands (fake_slurm.py): submitting, following a job to its exit code,
what each final state means to the sweep, taking over an earlier sweep's jobs, stopping."""

from __future__ import annotations

import pytest

from tests.executors.fake_slurm import FakeSlurm
from tvrl_bench.executors.base import CANCELLED, LEFT_RUNNING, NOT_STARTED, TrialCommand
from tvrl_bench.executors.slurm_executor import SlurmExecutor


@pytest.fixture
def fake(tmp_path, monkeypatch) -> FakeSlurm:
    return FakeSlurm(tmp_path / "slurm").install(monkeypatch)


def command(tmp_path, key: str = "k1") -> TrialCommand:
    return TrialCommand(("components/profiles/toy_v1.gin", "--attempt", "1"), log_path=str(tmp_path / f"{key}.log"),
                        study="tiny", key=key)


def executor(**settings) -> SlurmExecutor:
    return SlurmExecutor(poll_s=0.02, **settings)


def test_a_trial_is_one_job_named_by_study_and_key_and_its_exit_code_is_the_futures(tmp_path, fake):
    ex = executor(partition="debug", time_limit="30", mem="4G")
    try:
        future = ex.submit(command(tmp_path))
        (script,) = fake.submitted()
        assert "#SBATCH --job-name=tvrl.tiny.k1" in script and "#SBATCH --partition=debug" in script
        assert "#SBATCH --time=30" in script and "#SBATCH --mem=4G" in script and "#SBATCH --requeue" in script
        fake.set("101", "RUNNING")
        fake.set("101", "COMPLETED", 0)
        assert future.result(timeout=10) == 0
        assert "submitted as Slurm job 101" in (tmp_path / "k1.log").read_text()
    finally:
        ex.shutdown()


@pytest.mark.parametrize("state, exit_code, expected, note", [
    ("FAILED", 2, 2, None),  # a usage error: the driver does not retry it
    ("FAILED", 1, 1, None),
    ("TIMEOUT", 0, 1, "hit its time limit (10)"),
    ("NODE_FAIL", 0, 1, "ended NODE_FAIL"),
    ("CANCELLED", 0, CANCELLED, "was cancelled (scancel) while the trial ran"),
])
def test_each_final_state_gives_the_sweep_an_exit_code_and_the_log_its_reason(tmp_path, fake, state, exit_code,
                                                                                 expected, note):
    ex = executor(time_limit="10")
    try:
        future = ex.submit(command(tmp_path))
        fake.set("101", "RUNNING")
        ex.poll()
        fake.set("101", state, exit_code)
        assert future.result(timeout=10) == expected
        last = (tmp_path / "k1.log").read_text().splitlines()[-1]
        assert (note in last and last.startswith("tvrl-sweep: Slurm job 101")) if note else last.startswith("slurm: ")
    finally:
        ex.shutdown()


def test_a_requeued_job_is_waited_for_until_it_ends_for_good(tmp_path, fake):
    ex = executor()
    try:
        future = ex.submit(command(tmp_path))
        for state in ("RUNNING", "REQUEUED", "PENDING", "RUNNING"):
            fake.set("101", state)
            ex.poll()
            assert not future.done()
        fake.set("101", "COMPLETED")
        assert future.result(timeout=10) == 0
    finally:
        ex.shutdown()


def test_a_refused_sbatch_fails_the_attempt_with_slurms_own_line(tmp_path, fake):
    (fake.folder / "refuse").write_text("QOSMaxSubmitJobPerUserLimit")
    ex = executor()
    try:
        assert ex.submit(command(tmp_path)).result(timeout=10) == 1
        assert "sbatch refused the trial's job" in (tmp_path / "k1.log").read_text()
        assert "QOSMaxSubmitJobPerUserLimit" in (tmp_path / "k1.log").read_text()
    finally:
        ex.shutdown()


def test_jobs_of_an_earlier_sweep_are_taken_over_not_submitted_again(tmp_path, fake):
    fake.add_job("77", "tvrl.tiny.k1", "RUNNING")
    fake.add_job("78", "tvrl.tiny.k2", "COMPLETED")  # ended: the driver decides from its run
    fake.add_job("79", "tvrl.other.k3", "RUNNING")
    ex = executor()
    try:
        assert ex.live_trials("tiny") == {"k1"}
        future = ex.submit(command(tmp_path, "k1"))
        assert fake.submitted() == []
        fake.set("77", "COMPLETED")
        assert future.result(timeout=10) == 0
    finally:
        ex.shutdown()


def test_a_stop_leaves_the_jobs_queued_and_says_how_to_cancel_them(tmp_path, fake, caplog):
    ex = executor()
    try:
        futures = [ex.submit(command(tmp_path, k)) for k in ("k1", "k2")]
        fake.set("101", "RUNNING")
        ex.poll()
        ex.interrupt()
        assert [f.result(timeout=10) for f in futures] == [LEFT_RUNNING, LEFT_RUNNING]
        assert fake.calls("scancel") == []
        assert "left 2 Slurm job(s) in the queue (101 102)" in caplog.text and "scancel 101 102" in caplog.text
        assert ex.submit(command(tmp_path, "k3")).result() == NOT_STARTED  # nothing new after a stop
    finally:
        ex.shutdown()


def test_cancel_on_stop_cancels_pending_jobs_and_sends_sigterm_to_running_ones(tmp_path, fake):
    ex = executor(cancel_on_stop=True)
    try:
        running, pending = ex.submit(command(tmp_path, "k1")), ex.submit(command(tmp_path, "k2"))
        fake.set("101", "RUNNING")
        ex.poll()
        ex.interrupt()
        assert fake.calls("scancel") == ["scancel 102", "scancel --signal=TERM --full 101"]
        assert pending.result(timeout=10) == NOT_STARTED
        fake.set("101", "FAILED", 130)  # the trial checkpointed and exited on SIGTERM
        assert running.result(timeout=10) == 130
    finally:
        ex.shutdown()


def test_a_stop_arriving_while_sbatch_runs_also_leaves_the_job_it_submitted(tmp_path, fake, caplog):
    ex = executor()
    submit = ex.client.submit

    def submit_then_stop(script: str) -> str:  # the signal handler runs in the submitting thread
        job_id = submit(script)
        ex.interrupt()
        return job_id

    ex.client.submit = submit_then_stop
    try:
        assert ex.submit(command(tmp_path)).result(timeout=10) == LEFT_RUNNING
        assert "left 1 Slurm job(s) in the queue (101)" in caplog.text
    finally:
        ex.shutdown()
