"""Frozen critics (rewards). Importing this package registers every reward."""
from tvrl_bench.rewards import toy_oracle  # noqa: F401
from tvrl_bench.rewards import toy_learned  # noqa: F401
from tvrl_bench.rewards import qwen_vl  # noqa: F401
from tvrl_bench.rewards import videoalign  # noqa: F401
from tvrl_bench.rewards import videoscore2  # noqa: F401
from tvrl_bench.rewards import unifiedreward2  # noqa: F401
