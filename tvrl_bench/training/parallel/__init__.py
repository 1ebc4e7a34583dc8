"""Training over several processes: FSDP sharding, and sharded state and evaluation (ranks, gathers and the
gradient all-reduce are training/processes.py, below the step)."""
