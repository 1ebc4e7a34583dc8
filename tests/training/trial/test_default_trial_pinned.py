"""The default trial's numbers, pinned: two steps of components/profiles/toy.gin (the shipped slot base, its
sampler, critic, router and objective as they are) and a final evaluation on 8 eval prompts give these figures.

A restructuring of how a trial is built or sampled must leave them as they are, to the digits the tables print
(a table prints x 100 with two decimals, so each value here is held to 5e-5, half its last printed digit); a change
that moves them changes the default trial's results and must say so."""

from __future__ import annotations

import pytest

from tvrl_bench.training.trial.built import build_trainer

SHORT = ["training.trial.steps = 2", "training.trial.eval_prompts = 8", "training.trial.wide_eval_prompts = 0",
         "training.trial.sample_videos = 0", "training.trial.eval_every = 0"]

# Measured on the trial as built before the built trial (training/trial/built.py) existed.
STEPS = [
    {"train/reward_mean": 0.606212, "train/reward_std": 0.242379, "train/grad_norm": 0.017455,
     "train/credit_entropy": 0.957573, "train/advantage_abs": 0.73704, "train/floor_fraction": 0.34375,
     "train/reward/slot:top right": 0.470272},
    {"train/reward_mean": 0.693902, "train/reward_std": 0.203606, "train/grad_norm": 0.015122,
     "train/credit_entropy": 0.967651, "train/advantage_abs": 0.675861, "train/floor_fraction": 0.28125,
     "train/reward/slot:top right": 0.686028},
]
FINAL = {"overall": 0.625, "slot": 0.625, "critic_reward": 0.622217}


def test_two_default_steps_and_their_evaluation_keep_their_numbers(tmp_path):
    trainer = build_trainer(["components/profiles/toy.gin"], SHORT, tmp_path)
    steps = []
    trainer.hooks.on_step = lambda step, out: steps.append(out.metrics)
    final = trainer.run()
    assert len(steps) == len(STEPS)
    for measured, pinned in zip(steps, STEPS):
        assert {k: measured[k] for k in pinned} == pytest.approx(pinned, abs=5e-5)
    assert {k: final.metrics[k] for k in FINAL} == pytest.approx(FINAL, abs=5e-5)
