"""Where the trials of a sweep run: local worker processes (`executors.local`), a Ray cluster (`executors.ray`) or
Slurm jobs (`executors.slurm`).
The contract is in `base.py`."""
