"""The trial: its settings (`training.trial`), denoising schedule and optimizer, and the loop that runs its steps.

Inside training/ the parts are layered like the package (tests/test_layers.py), bottom to top; none imports a
part above it:

- top level, below the step: `settings.py` (`training.trial`), `schedule.py` (`training.schedule`),
  `optimizers.py` and `muon.py` (`training.optimizer`), `consistency.py`,
  `seeding.py`, `reporting.py` (the loop's hooks), `eval_progress.py` (what a final evaluation shows while it runs),
  `processes.py` (ranks, gathers, gradient all-reduce), `checkpoint.py` (a trial's checkpoint folder), `scoring.py`
  (the critic's scores and gradient maps of videos), `ode.py` (deterministic sampling, as evaluations generate) and
  `false_yes.py` (the critic's false-yes rate an evaluation logs);
- `step/`: one training step (rollouts, sampled in one place, `step/rollout.py::roll_out`; collecting the batch,
  the policy-gradient update, the anchor, the step's metrics);
- `evaluation.py`: a trial's evaluation on fixed prompts and noise;
- `parallel/`: several processes (FSDP sharding, gathered state, sharded evaluation);
- `loop.py`: the `Trainer`, which runs the steps;
- `trial/`: the built trial (`built.py::build_trial`: a trial's parts, what it samples, scores, evaluates and
  loads, and its Trainer; every tool outside training/ reaches the step through it) and one trial's record
  (`run.py::run_trial`, its options, checks and build, failure records, media hooks, the folder lock, the key).
"""
