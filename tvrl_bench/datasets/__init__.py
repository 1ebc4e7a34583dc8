"""Prompt sets: the toy world's (`datasets.toy`), CSV / JSONL / text prompts with checks (`datasets.file`),
VideoAlign's VideoGen-Eval CSV, VBench-2.0's prompt suite, and pairs of them; plus `decompose` (an LLM writes
each prompt's yes/no checks)."""
