"""Frozen critics (rewards): the toy critics, the Qwen-family answer-likelihood critic (`qwen/`) and the
reward models built on it (VideoAlign, VideoScore2, UnifiedReward-2). The contract is in `base.py`."""
