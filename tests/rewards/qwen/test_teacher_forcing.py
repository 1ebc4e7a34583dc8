"""Teacher-forced digit answers: answer-template slots, digit tokens of a real Qwen tokenizer class, the plan of
each score's sequence and the rounds that resolve its greedy digits."""

from __future__ import annotations

import pytest

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.teacher_forcing import AnswerTemplate, DigitTokens, PairSequence, plan, run_plans

NAMES = ("alignment", "physics")
TEMPLATE = "Alignment: {alignment}\nPhysics: {physics}"


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_qwen.build_tokenizer("qwen2_5_vl")


@pytest.fixture(scope="module")
def tokens(tokenizer) -> DigitTokens:
    return DigitTokens.from_tokenizer(tokenizer, (1, 5), AnswerTemplate.parse(TEMPLATE, NAMES, "t"), "rewards.x")


def _plain(steps):
    return [(s[0], list(s[1])) if s[0] == "append" else s for s in steps]


def test_the_answer_template_splits_at_its_slots_and_names_the_fix():
    template = AnswerTemplate.parse(TEMPLATE, NAMES, "rewards.x.answer_template")
    assert template.segments == ("Alignment: ", "\nPhysics: ", "") and template.slots == NAMES
    with pytest.raises(ValueError, match=r"rewards\.x\.answer_template=.*exactly once"):
        AnswerTemplate.parse("Alignment: {alignment}", NAMES, "rewards.x.answer_template")
    with pytest.raises(ValueError, match="plain field"):
        AnswerTemplate.parse("Alignment: {alignment:d}\nPhysics: {physics}", NAMES, "rewards.x.answer_template")


def test_digit_tokens_are_single_tokens_of_the_tokenizer(tokenizer, tokens):
    assert tokens.int_values == (1, 2, 3, 4, 5) and tokenizer.decode(list(tokens.int_ids)) == "12345"
    assert tokenizer.decode(list(tokens.dec_ids)) == "0123456789" and tokenizer.decode(list(tokens.dot_ids)) == "."
    assert [tokenizer.decode(list(s)) for s in tokens.segment_ids] == ["Alignment: ", "\nPhysics: ", ""]
    assert tokens.ids("int") == list(tokens.int_ids) and tokens.values("dec") == list(range(10))


def test_plans_with_a_fixed_and_a_greedy_context(tokens):
    dot, segment = list(tokens.dot_ids), list(tokens.segment_ids[1])
    three, zero = tokens.int_ids[2], tokens.dec_ids[0]
    assert _plain(plan(tokens, 1, 3, 1)) == [
        ("append", [three, *dot, zero]), ("append", segment), ("read", "int", 1.0),
        ("greedy", "int"), ("append", dot), ("read", "dec", 0.1),
    ]
    assert _plain(plan(tokens, 1, "greedy", 1)) == [
        ("greedy", "int"), ("append", dot), ("greedy", "dec"), ("append", segment), ("read", "int", 1.0),
        ("greedy", "int"), ("append", dot), ("read", "dec", 0.1),
    ]
    assert plan(tokens, 0, "greedy", 0) == [("read", "int", 1.0)]


def test_greedy_rounds_ask_only_the_pairs_still_waiting(tokens):
    pairs = [PairSequence([100], plan(tokens, 1, "greedy", 0), []),
             PairSequence([100, 101], plan(tokens, 0, "greedy", 0), [])]
    rounds = []

    def greedy(waiting, kinds):
        rounds.append((list(waiting), list(kinds)))
        return [tokens.int_ids[4]] * len(waiting)

    first, second = run_plans(pairs, greedy)
    assert rounds == [([0], ["int"])]
    assert first.ids == [100, tokens.int_ids[4], *tokens.segment_ids[1]]
    assert first.reads == [(len(first.ids) - 1, "int", 1.0)] and first.steps == []
    assert second.ids == [100, 101] and second.reads == [(1, "int", 1.0)]
