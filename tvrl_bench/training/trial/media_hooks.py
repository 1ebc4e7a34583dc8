"""The trainer's hooks that log a trial's step metrics, credit heatmaps, sample videos and eval curves to MLflow."""

from __future__ import annotations

import tempfile
from pathlib import Path

from tvrl_bench.prompts import PromptItem
from tvrl_bench.tracking import media
from tvrl_bench.tracking.mlflow_run import TrialTracker
from tvrl_bench.training.reporting import Hooks, StepOutput
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.videoio import write_mp4


def tracking_hooks(tracker: TrialTracker | None, settings: TrialSettings) -> Hooks:
    """Hooks logging to `tracker` (no-op hooks without one: processes other than the main one log nothing)."""
    if tracker is None:
        return Hooks()
    grid = settings.policy.token_grid

    def on_step(step: int, out: StepOutput) -> None:
        tracker.log_metrics(out.metrics, step=step + 1)
        if (step + 1) % settings.log_media_every == 0 or step == 0:
            with tempfile.TemporaryDirectory() as tmp:
                path = media.credit_heatmap(out.video, out.weights, grid, Path(tmp) / f"step_{step + 1:06d}.png", out.prompt)
                tracker.log_artifact(path, "credit")

    def on_samples(tag: str, videos, items: list[PromptItem]) -> None:
        index = []
        with tempfile.TemporaryDirectory() as tmp:
            for i, (video, item) in enumerate(zip(videos, items)):
                name = f"sample_{i:03d}.mp4"
                write_mp4(video, Path(tmp) / name, fps=4, min_side=128)
                index.append({"file": name, "index": i, "prompt": item.prompt, "checks": list(item.checks), "seed": settings.seed})
            tracker.log_artifacts(tmp, f"samples/{tag}")
        tracker.log_json(index, f"samples/{tag}/index.json")

    def on_eval(step: int, metrics: dict[str, float]) -> None:
        tracker.log_metrics({f"eval/{k}": v for k, v in metrics.items()}, step=step)

    return Hooks(on_step=on_step, on_samples=on_samples, on_eval=on_eval)
