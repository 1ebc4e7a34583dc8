"""Prompt decomposition: parsing answers, and `tvrl-bench decompose` with a tiny random Qwen3.5 checkpoint.

The checkpoint is the real Qwen3.5 vision-language class from a tiny config with a tiny byte-level tokenizer and
a chat template written for the tests (tests/rewards/tiny_qwen.py), saved with save_pretrained, and loaded back
by the command through AutoModelForCausalLM / AutoTokenizer as a real Qwen3.5-9B folder would be. Its answers
are noise, so these tests prove the plumbing (request, generation, cache, resume), not the checks' quality.
"""

from __future__ import annotations

import json

import pytest
import torch

from tests.rewards.tiny_qwen import build_model, build_tokenizer
from tvrl_bench.cli.main import main
from tvrl_bench.datasets.decompose import CheckWriter, instruction, parse_checks


def test_parse_checks_of_hand_written_answers():
    answer = """Here are the questions:
1. Is there a red ball?
2) Does the ball roll to the left?
- **Is the table wooden?**
* Q4: Is the camera static?
(5) Is there a red ball?
6. The ball is red.
Question 7 - Does the ball stop at the end?
"""
    assert parse_checks(answer) == (
        "Is there a red ball?", "Does the ball roll to the left?", "Is the table wooden?", "Is the camera static?",
        "Does the ball stop at the end?",
    )
    assert parse_checks(answer, max_checks=2) == ("Is there a red ball?", "Does the ball roll to the left?")
    thinking = "<think>\nIs this a question?\n</think>\n\n1. Is there a cat?\n2. Is it 3 p.m.?"
    assert parse_checks(thinking) == ("Is there a cat?", "Is it 3 p.m.?")
    assert parse_checks("a. Are two dogs playing?\nb) ?\n") == ("Are two dogs playing?",)
    assert parse_checks("no questions here") == ()


@pytest.fixture(scope="module")
def tiny_qwen35(tmp_path_factory):
    """A tiny Qwen3.5 checkpoint laid out as the real ones are (the vision-language model and its tokenizer)."""
    folder = tmp_path_factory.mktemp("qwen3_5")
    tokenizer = build_tokenizer("qwen3_5")
    model = build_model("qwen3_5", tokenizer)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder, model


def test_writer_loads_the_text_model_and_asks_with_thinking_off(tiny_qwen35):
    folder, saved = tiny_qwen35
    writer = CheckWriter(str(folder), device="cpu", max_new_tokens=6)
    assert type(writer.model).__name__ == "Qwen3_5ForCausalLM"
    assert torch.equal(writer.model.model.embed_tokens.weight, saved.model.language_model.embed_tokens.weight)
    text = writer.chat_text("A dog runs.", 5)
    assert text == "<|im_start|>user\n" + instruction("A dog runs.", 5) + "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert "at most 5 questions" in text
    assert writer.stop_ids == sorted({writer.tokenizer.eos_token_id, writer.tokenizer.convert_tokens_to_ids("<|im_end|>")})
    one, two = writer.generate(["A dog runs.", "Two cats sleep on a warm sofa."], 5)
    assert isinstance(one, str) and isinstance(two, str)
    assert writer.generate(["Two cats sleep on a warm sofa."], 5) == [two]  # left padding does not change answers


def test_writer_loads_a_text_only_checkpoint(tiny_qwen35, tmp_path):
    from transformers import Qwen3_5ForCausalLM

    _, saved = tiny_qwen35
    tokenizer = build_tokenizer("qwen3_5")
    torch.manual_seed(1)
    text_model = Qwen3_5ForCausalLM(saved.config.text_config).eval()
    text_model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    writer = CheckWriter(str(tmp_path), device="cpu", max_new_tokens=4)
    assert torch.equal(writer.model.lm_head.weight, text_model.lm_head.weight)
    assert len(writer.generate(["A dog runs."], 3)) == 1


def read_cache(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_decompose_caches_resumes_and_skips(tiny_qwen35, tmp_path, capsys):
    folder, _ = tiny_qwen35
    prompts = tmp_path / "prompts.csv"
    prompts.write_text("prompt\nA dog runs.\nA cat sleeps.\nA red ball rolls left.\nA dog runs.\n")
    out = tmp_path / "checks.jsonl"
    args = ["decompose", str(prompts), "--model", str(folder), "--out", str(out), "--max-new-tokens", "8",
            "--batch-size", "2", "--max-checks", "4", "--no-progress"]
    assert main(args) == 0
    assert "generated 3, cached 0" in capsys.readouterr().out
    first = read_cache(out)
    assert [r["prompt"] for r in first] == ["A dog runs.", "A cat sleeps.", "A red ball rolls left."]
    for record in first:
        assert isinstance(record["raw"], str) and record["model"] == str(folder)
        assert record["checks"] == list(parse_checks(record["raw"], 4))

    prompts.write_text("prompt\nA dog runs.\nA cat sleeps.\nA red ball rolls left.\nA green tree sways.\n")
    assert main(args) == 0
    assert "generated 1, cached 3" in capsys.readouterr().out
    second = read_cache(out)
    assert second[:3] == first and second[3]["prompt"] == "A green tree sways."

    # Everything cached: the model is never loaded (a missing folder would fail if it were).
    skipped = list(args)
    skipped[skipped.index("--model") + 1] = str(tmp_path / "no-such-model")
    assert main(skipped) == 0
    assert "generated 0, cached 4" in capsys.readouterr().out
    empty = sum(not r["checks"] for r in second)
    assert main(args + ["--retry-empty"]) == 0
    assert f"generated {empty}, cached {4 - empty}" in capsys.readouterr().out
    assert len(read_cache(out)) == 4 + empty
