"""One trial's record: its options, checks, build, MLflow run, failure records, media hooks, key and lock."""
