"""Prompt sets from files: CSV / JSONL / text prompts with checks, VideoAlign's VideoGen-Eval CSV, VBench-2.0's
prompt suite, and pairs of them; plus `decompose` (an LLM writes each prompt's yes/no checks).

Importing this package registers `datasets.file`, `datasets.videogen_eval`, `datasets.vbench2`, `datasets.pair`.
"""

from tvrl_bench.datasets import files, pair, vbench2, videogen_eval  # noqa: F401
