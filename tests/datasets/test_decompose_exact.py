"""The official exact-5 JSON decomposition: the checker, repair requests, and `tvrl-bench decompose --check`."""

from __future__ import annotations

import json

from tvrl_bench.cli.main import main
from tvrl_bench.datasets.decompose_exact import check_cache, decompose_exact, parse_answer, problems


def answer(n=5, **changes):
    items = [{"id": f"q{k + 1}", "question": f"Is thing {k + 1} there?", "answer_type": "yes_no", "target": "Yes"}
             for k in range(n)]
    for k, item in changes.items():
        items[int(k[1:]) - 1].update(item)
    return "```json\n" + json.dumps(items) + "\n```"


def test_the_checker_names_every_break_of_the_format():
    assert problems(parse_answer(answer())) == []
    assert problems(parse_answer(answer(4))) == ["it has 4 items instead of exactly 5"]
    found = problems(parse_answer(answer(q2={"id": "q7"}, q3={"target": "No"}, q5={"question": "a statement"})))
    assert found == ["item 2 has id 'q7' instead of 'q2'", "item 3 has target 'No' instead of 'Yes'",
                     "item 5 has no question ending in '?'"]
    assert problems(parse_answer("no json here")) == ["the answer is not a JSON array"]
    assert parse_answer("<think>[1]</think>\n" + answer()) is not None


class ScriptedWriter:
    """Answers from a script per prompt; records the conversations it was sent."""

    def __init__(self, script):
        self.script, self.seen = {p: list(a) for p, a in script.items()}, []

    def generate_chat(self, conversations):
        self.seen += conversations
        prompts = [next(p for p in self.script if p in c[0]["content"]) for c in conversations]
        return [self.script[p].pop(0) for p in prompts]


def test_invalid_answers_are_repaired_then_given_up_and_the_cache_checks(tmp_path, capsys):
    writer = ScriptedWriter({"a cat": [answer(4), answer()], "a dog": ["nonsense"] * 3, "a fox": [answer()]})
    out = tmp_path / "checks.jsonl"
    stats = decompose_exact(["a cat", "a dog", "a fox"], out, writer=lambda: writer, n=5, repairs=2)
    assert (stats.generated, stats.empty) == (3, 1)
    repair = [c for c in writer.seen if len(c) == 3 and "a cat" in c[0]["content"]][0]
    assert "it has 4 items instead of exactly 5" in repair[2]["content"] and repair[1]["content"] == answer(4)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [len(r["checks"]) for r in records] == [5, 0, 5] and all(r["format"] == "json5" for r in records)
    assert set(check_cache(out)) == {"a dog"}
    assert main(["decompose", "--check", str(out)]) == 1
    assert "'a dog'" in capsys.readouterr().out
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(json.dumps(r) for r in records if r["checks"]) + "\n")
    assert main(["decompose", "--check", str(good)]) == 0
    # a rerun asks only for the prompt still without its 5 checks
    again = ScriptedWriter({"a dog": [answer()]})
    assert decompose_exact(["a cat", "a dog", "a fox"], out, writer=lambda: again).generated == 1
