"""The trial: its settings (`training.trial`), denoising schedule and optimizer, the loop (rollouts, critic
scoring and credit, the policy update), checkpoints, and running one trial tracked in MLflow."""
