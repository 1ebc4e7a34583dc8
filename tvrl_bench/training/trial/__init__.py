"""One trial's record: its options, checks, build, MLflow run, failure records, checkpoints and lock."""
