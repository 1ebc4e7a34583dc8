"""Chat texts and reference answers of the answer-likelihood critic (rewards/qwen/answer_prompts.py) with the
tiny Qwen3.5 processor (real processor and tokenizer classes)."""

from __future__ import annotations

import json

import pytest

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.answer_prompts import AnswerPrompts
from tvrl_bench.rewards.qwen.joint import DEFAULT_JOINT_TEMPLATE

VIDEO = "<|video_pad|>"


@pytest.fixture(scope="module")
def processor():
    return tiny_qwen.build_processor("qwen3_5")


def _prompts(processor, **overrides) -> AnswerPrompts:
    params = {"video_token": VIDEO, "answer": "Yes", "question_template": "{question} ({prompt})",
              "joint_template": DEFAULT_JOINT_TEMPLATE, "system_prompt": "Be brief."}
    return AnswerPrompts(processor, **{**params, **overrides})


def test_pair_text_is_one_user_turn_with_the_video_and_filled_question(processor):
    prompts = _prompts(processor)
    text = prompts.pair_text("a red ball", "Is it red?")
    assert text.count(VIDEO) == 1 and "Be brief." in text
    assert "Is it red? (a red ball)" in text and text.index(VIDEO) < text.index("Is it red?")
    assert prompts.pair_text("a red ball", "Is it red?") is text  # rendered once per pair
    assert processor.tokenizer.decode(prompts.answer_ids) == "Yes"


def test_a_text_without_exactly_one_video_token_names_the_count(processor):
    with pytest.raises(ValueError, match="wrote 0 '<nope>' tokens"):
        _prompts(processor, video_token="<nope>").pair_text("p", "q")


def test_joint_text_reads_each_check_at_its_yes_token(processor):
    text, ids, positions = _prompts(processor).joint_text("a cat", ["Is there a cat?", "Is it walking?"])
    assert text.count(VIDEO) == 1 and "Is there a cat?" in text and "Is it walking?" in text
    answer = json.loads(processor.tokenizer.decode(ids))
    assert [a["answer"] for a in answer] == ["Yes", "Yes"] and len(positions) == 2
    assert [processor.tokenizer.decode([ids[p]]) for p in positions] == ["Yes", "Yes"]
