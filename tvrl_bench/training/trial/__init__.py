"""One trial: its built parts (built.py) and its record: options, checks, build, MLflow run, failure records, media
hooks, key and lock."""
