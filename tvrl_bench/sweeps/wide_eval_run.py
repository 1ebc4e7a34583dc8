"""Running `tvrl-bench wide-eval` like the other commands: its request checked before any worker starts, its
workers stopped on a signal with nothing left behind, and one wide-eval of a study logging at a time.

- `check_request`: `--prompts` at least each trial's own eval prompts and at most the distinct scenes its toy world
  holds (the wider set is drawn from them), read from each trial's config, in seconds (a ConfigError naming the
  flag and the fix otherwise, where a worker would have failed or worked for minutes).
- `score_all`: scores the trials in worker processes; SIGTERM, SIGINT or SIGHUP (the sweep's stop signals) raise
  `Stopped` in the main process, which terminates and joins the workers before it ends (and each worker is
  killed by the kernel if the main process dies first), so no process outlives the command.
- `study_lock`: the lock of a study's wide evaluation (`runs/<study>/wide_eval.lock`): a second wide-eval of the
  same study that would log is refused (TrialBusy, exit 2) while the first runs.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Callable

import gin

from tvrl_bench import config as gin_config
from tvrl_bench.sweeps.plan import TrialSpec
from tvrl_bench.sweeps.stop_request import STOP_SIGNALS
from tvrl_bench.training.trial.lock import FolderLock

LOCK = "wide_eval.lock"


class Stopped(Exception):
    """A stop signal arrived while the trials were being scored; the workers are gone."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _bound(name: str, default: object) -> object:
    try:
        return gin.query_parameter(name)
    except ValueError:
        return default


def check_request(specs: list[TrialSpec], prompts: int) -> None:
    """ConfigError unless `prompts` covers every trial's own eval prompts and the trial's own world (its dataset,
    the slot world of 1,296 scenes or the sprite world of 1,344) holds that many distinct scenes (each distinct
    trial config is read once; only its prompt set is built)."""
    from tvrl_bench import registry
    from tvrl_bench.world.scene import ScenesExhausted

    seen = set()
    for spec in specs:
        configs = (spec.files, tuple(b for b in spec.bindings if not b.startswith("training.trial.seed")))
        if configs in seen:
            continue
        seen.add(configs)
        try:
            gin_config.load_config(list(spec.files), list(spec.bindings))
            dataset = registry.build("DATASET")
            own = min(int(_bound("training.trial.eval_prompts", 32)), len(dataset.eval))
            if prompts < own:
                raise gin_config.ConfigError(
                    f"--prompts {prompts} is fewer than trial {spec.title}'s own {own} eval prompts (the wide set "
                    f"starts with them); ask for more, e.g. --prompts {max(own, 1000)}")
            try:
                if dataset.held_out is not None:
                    dataset.held_out(prompts)
            except ScenesExhausted as exc:
                raise gin_config.ConfigError(
                    f"--prompts {prompts}: trial {spec.title} is on {_world_of_dataset(dataset.name)}, which has "
                    f"{exc.found:,} distinct scenes, fewer than asked (the wider set is drawn from them); ask for at "
                    f"most {exc.found}, e.g. --prompts {min(1000, exc.found)}") from None
        finally:
            gin.clear_config()


def _world_of_dataset(name: str) -> str:
    """'the slot world' for the parsed config's trial when its dataset serves one world, else 'dataset NAME'."""
    from tvrl_bench.config.trial_components import trial_components
    from tvrl_bench.world.declaration import WORLD_WORDS, served_worlds

    worlds = [served_worlds(p.target) for p in trial_components() if p.axis == "dataset"][:1]
    return WORLD_WORDS[worlds[0][0]] if worlds and worlds[0] and len(worlds[0]) == 1 else f"dataset {name}"


def _worker_start(parent: int) -> None:
    """In each worker: one torch thread, and SIGKILL when the wide-eval process dies (Linux)."""
    import torch

    torch.set_num_threads(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process stops the workers itself
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    processes = list((pool._processes or {}).values())  # noqa: SLF001 - the executor has no public handle
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(5)
        if process.is_alive():
            process.kill()
            process.join(5)


def score_all(score: Callable, specs: list[TrialSpec], runs: str, prompts: int, workers: int,
              progress: Callable = lambda futures, total: futures) -> list:
    """`score(spec, runs, prompts)` of every trial in `workers` processes, in completion order; Stopped on a stop
    signal (the workers terminated first), the first trial's error as it is."""
    def stop(signum: int, frame) -> None:
        raise Stopped(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_start, initargs=(os.getpid(),))
    try:
        futures = [pool.submit(score, spec, runs, prompts) for spec in specs]
        scores = [future.result() for future in progress(as_completed(futures), len(futures))]
    except BaseException:
        _stop_workers(pool)
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    pool.shutdown()
    return scores


def study_lock(runs: str | Path, study: str) -> FolderLock:
    """The lock one logging wide-eval of `study` holds (acquire raises TrialBusy naming the holder's pid)."""
    return FolderLock(Path(runs), LOCK, what=f"wide-eval of study {study}")
