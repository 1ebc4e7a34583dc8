"""Prompt files (CSV, JSONL, text) with checks and splits, and the `datasets.file` / `datasets.pair` components."""

from __future__ import annotations

import json

import pytest

from tvrl_bench import registry
from tvrl_bench.config import load_config
from tvrl_bench.datasets.files import file_prompt_set
from tvrl_bench.datasets.pair import pair_prompt_set
from tvrl_bench.datasets.rows import PromptFileError, read_rows
from tvrl_bench.prompts import PromptItem, PromptSet

CSV = '''prompt,checks,notes
"A red ball rolls left, fast.","[""Is there a red ball?"", ""Does the ball roll to the left?""]",x
A cat sleeps.,Is there a cat? | Is the cat asleep?,
A dog barks.,,
'''


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_and_jsonl_read_the_same_prompts(tmp_path):
    rows = read_rows(write(tmp_path / "p.csv", CSV))
    assert [(r.prompt, r.checks) for r in rows] == [
        ("A red ball rolls left, fast.", ("Is there a red ball?", "Does the ball roll to the left?")),
        ("A cat sleeps.", ("Is there a cat?", "Is the cat asleep?")),
        ("A dog barks.", ()),
    ]
    lines = [
        {"prompt": "A red ball rolls left, fast.", "checks": ["Is there a red ball?", "Does the ball roll to the left?"]},
        {"prompt": "A cat sleeps.", "checks": "Is there a cat? | Is the cat asleep?"},
        {"prompt": "A dog barks."},
    ]
    jsonl = write(tmp_path / "p.jsonl", "\n".join(json.dumps(x) for x in lines[:2]) + "\n\n" + json.dumps(lines[2]) + "\n")
    assert [(r.prompt, r.checks) for r in read_rows(jsonl)] == [(r.prompt, r.checks) for r in rows]
    assert [r.prompt for r in read_rows(write(tmp_path / "p.txt", "A cat.\n\n  A dog. \n"))] == ["A cat.", "A dog."]


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("a.csv", "text,checks\nA cat.,\n", r"a.csv, line 1: no 'prompt' column in the header \(columns: text, checks\)"),
        ("b.csv", "prompt,checks\nA cat.,\n,Is it?\n", r"b.csv, line 3: 'prompt' is missing or empty"),
        ("c.csv", 'prompt,checks\nA cat.,"[""Is there a cat?"""\n', r"c.csv, line 2: checks start with '\[' but are not a valid JSON list"),
        ("d.csv", "prompt,checks\nA cat.,x,y\n", r"d.csv, line 2: more fields than the header.*quote fields"),
        ("e.jsonl", '{"prompt": "A cat."}\n{"prompt": "A dog.", "checks": [1]}\n', r"e.jsonl, line 2: checks must be a list of strings"),
        ("f.jsonl", '{"prompt": "A cat."}\n{prompt: "A dog."}\n', r"f.jsonl, line 2: not a JSON object"),
        ("g.csv", "prompt,split\nA cat.,test\n", r"g.csv, line 2: split must be 'train' or 'eval'"),
        ("h.tsv", "prompt\n", r"h.tsv: unsupported prompt file type '.tsv'; use one of .csv, .jsonl, .txt"),
    ],
)
def test_malformed_rows_name_file_line_and_fix(tmp_path, name, text, message):
    with pytest.raises(PromptFileError, match=message):
        read_rows(write(tmp_path / name, text))


def test_splits_by_column_file_and_fraction(tmp_path):
    split_csv = write(tmp_path / "s.csv", "prompt,split\nA.,train\nB.,eval\nC.,TRAIN\n")
    by_column = file_prompt_set(str(split_csv))
    assert [i.prompt for i in by_column.train] == ["A.", "C."] and [i.prompt for i in by_column.eval] == ["B."]
    assert by_column.name == "s"
    with pytest.raises(PromptFileError, match=r"s2.csv, line 3: this row has no split while others do"):
        file_prompt_set(str(write(tmp_path / "s2.csv", "prompt,split\nA.,train\nB.,\n")))

    many = write(tmp_path / "many.txt", "\n".join(f"Prompt {i}." for i in range(40)) + "\nPrompt 3.\n")
    first = file_prompt_set(str(many), eval_fraction=0.25, seed=7)
    again = file_prompt_set(str(many), eval_fraction=0.25, seed=7)
    other = file_prompt_set(str(many), eval_fraction=0.25, seed=8)
    assert first == again and first.eval != other.eval
    assert len({i.prompt for i in first.eval}) == 10 and len(first.train) + len(first.eval) == 41
    assert not {i.prompt for i in first.train} & {i.prompt for i in first.eval}  # both copies of "Prompt 3." together
    order = [f"Prompt {i}." for i in range(40)]
    assert [i.prompt for i in first.train] == [p for p in order + ["Prompt 3."] if p not in {e.prompt for e in first.eval}]

    eval_file = write(tmp_path / "eval.jsonl", '{"prompt": "E.", "checks": ["Is it E?"]}\n')
    separate = file_prompt_set(str(split_csv), eval_path=str(eval_file))
    assert len(separate.train) == 3 and separate.eval == (PromptItem("E.", ("Is it E?",)),)


def test_checks_cache_replaces_checks(tmp_path):
    prompts = write(tmp_path / "p.csv", CSV)
    cache = write(tmp_path / "checks.jsonl", json.dumps({"prompt": "A dog barks.", "checks": ["Is there a dog?"], "raw": "1. Is there a dog?"}) + "\n")
    loaded = file_prompt_set(str(prompts), checks_path=str(cache), eval_fraction=0.0)
    assert loaded.train[2] == PromptItem("A dog barks.", ("Is there a dog?",))
    assert loaded.train[1].checks == ("Is there a cat?", "Is the cat asleep?")
    with pytest.raises(PromptFileError, match="a checks file is JSONL"):
        file_prompt_set(str(prompts), checks_path=str(prompts))


def test_file_and_pair_through_gin(tmp_path):
    train = write(tmp_path / "train.csv", CSV)
    evals = write(tmp_path / "eval.txt", "Held out one.\nHeld out two.\n")
    config = write(tmp_path / "data.gin", f"""
train/datasets.file.path = '{train}'
eval/datasets.file.path = '{evals}'
eval/datasets.file.eval_fraction = 0.5
datasets.pair.train = @train/datasets.file()
datasets.pair.eval = @eval/datasets.file()
DATASET = @datasets.pair()
""")
    load_config([str(config)])
    paired = registry.build("DATASET")
    assert isinstance(paired, PromptSet) and paired.name == "train+eval"
    assert [i.prompt for i in paired.train] == ["A red ball rolls left, fast.", "A cat sleeps.", "A dog barks."]
    assert len(paired.eval) == 1 and paired.eval[0].prompt.startswith("Held out")
    with pytest.raises(ValueError, match="has no eval prompts"):
        pair_prompt_set(paired, PromptSet("x", paired.train, ()))


SLOT_PROMPT = "red at the top left, blue at the top right, green at the bottom left and yellow at the bottom right"


def test_a_check_the_toy_critic_cannot_read_is_named_by_file_and_line_at_config_time(tmp_path, monkeypatch):
    """Before anything is built, naming the toy components that read the checks (those that declare their worlds)."""
    from tvrl_bench.training.trial.checks import check_values

    monkeypatch.chdir(tmp_path)
    write(tmp_path / "prompts.csv", f'prompt,checks,split\n"{SLOT_PROMPT}",Is the top left object red?,eval\n'
                                    f'"{SLOT_PROMPT}",Is the top left object red? | Is the centre object blue?,train\n')
    bindings = ["datasets.file.path = 'prompts.csv'", "DATASET = @datasets.file()"]
    loaded = load_config(["components/profiles/toy.gin"], bindings)
    with pytest.raises(PromptFileError, match=r"^prompts.csv, line 3: check 'Is the centre object blue\?' is not a "
                                              r"toy-world check, and rewards.toy_oracle and evaluators.toy read toy "
                                              r"checks only; write it as the toy world asks \('Is the top left"):
        check_values(loaded)
    # a critic that reads no check leaves the evaluator, which would fail at the final evaluation
    loaded = load_config(["components/profiles/toy.gin"], [*bindings, "REWARD = @rewards.toy_pattern()"])
    with pytest.raises(PromptFileError, match="and evaluators.toy reads toy checks only"):
        check_values(loaded)
