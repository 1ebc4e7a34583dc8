"""Where the trials of a sweep run: local worker processes (`executors.local`) or a Ray cluster (`executors.ray`).
The contract is in `base.py`."""
