"""The trial: its settings (`training.trial`), denoising schedule and optimizer, and the loop that runs its steps.

- top level: `settings.py` (`training.trial`), `schedule.py` (`training.schedule`), `optimizers.py` and `muon.py`
  (`training.optimizer`), `validation.py` (value ranges), `consistency.py`, `seeding.py`, `evaluation.py` and
  `loop.py` (the `Trainer`);
- `step/`: one training step (rollouts, critic scoring, collecting the batch, the policy-gradient update, the
  anchor, the step's metrics);
- `parallel/`: several processes (process groups, FSDP sharding, gathered state, sharded evaluation);
- `trial/`: one trial's record (`run.py::run_trial`, its options, checks and build, failure records, media hooks,
  checkpoints, the folder lock, the trial key).
"""
