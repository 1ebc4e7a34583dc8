"""Bindings that keep a trainer test's trial to seconds."""

from __future__ import annotations

# A trial that exercises every part of a step in seconds: 2 prompts x 2 rollouts, 4 denoising steps.
FAST = [
    "training.schedule.num_steps = 4",
    "training.trial.prompts_per_step = 2",
    "training.trial.group_size = 2",
    "training.trial.micro_batch = 4",
    "training.trial.eval_prompts = 4",
    "training.trial.sample_videos = 2",
    "training.trial.eval_every = 0",  # evaluation during training has its own tests (test_periodic_eval.py)
    "datasets.toy.n_train = 16",
    "datasets.toy.n_eval = 8",
]
