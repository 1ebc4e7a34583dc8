"""Reading a study from its MLflow store: its runs as frames (study.py, frames.py), their metric histories
(histories.py) and the artifacts of its trials (artifacts.py: per-video records, final samples, credit heatmaps)."""
