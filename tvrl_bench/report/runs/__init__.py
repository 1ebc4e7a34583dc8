"""Reading a study from its MLflow store: its runs as frames (study.py, frames.py), their metric histories
(histories.py), the artifacts of its trials (artifacts.py: per-video records, final samples, credit heatmaps) and
a staged study's decisions recomputed from its runs (decisions.py); a study holding two profiles, or two
configurations of one arm and seed, is refused (one_config.py)."""
