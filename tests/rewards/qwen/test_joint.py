"""The joint prompt of the official TVRL critic: all checks in one question, the all-"Yes" JSON reference answer
and the token that starts each check's value, with the real Qwen3.5 tokenizer class."""

from __future__ import annotations

import json

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.joint import answer_token_positions, joint_answer, joint_question

CHECKS = [["Is there a red ball?", "Does it roll left?", "Is it night?", "Blue?", "Is the table wooden?"],
          ["Is there a cat?", "Is it walking?"]]


def test_reference_answer_is_all_yes_json_and_value_tokens_are_the_yes_tokens():
    tokenizer = tiny_qwen.build_tokenizer("qwen3_5")  # the real Qwen3.5 tokenizer class, built here
    text, starts = joint_answer(5)
    assert [a["answer"] for a in json.loads(text)] == ["Yes"] * 5
    assert [a["id"] for a in json.loads(text)] == ["q1", "q2", "q3", "q4", "q5"]
    ids, positions = answer_token_positions(tokenizer, text, starts)
    yes = tokenizer.convert_tokens_to_ids("Yes")
    assert positions == [j for j, t in enumerate(ids) if t == yes]  # found independently: where "Yes" sits
    question = json.loads(joint_question(CHECKS[0]).split("\n")[2])
    assert [q["id"] for q in question] == ["q1", "q2", "q3", "q4", "q5"]
    assert all(q["answer_type"] == "yes_no" for q in question)
