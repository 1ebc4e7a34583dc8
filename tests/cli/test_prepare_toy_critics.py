"""Which critics `tvrl-bench prepare-toy` builds (cli/prepare_toy_critics.py), and its one-line refusals."""

from __future__ import annotations

import argparse

import pytest

from tvrl_bench.cli.errors import UserError
from tvrl_bench.cli.main import main
from tvrl_bench.cli.prepare_toy import folder_of
from tvrl_bench.cli.prepare_toy_critics import chosen_critics, policy_recipe

SLOT_CRITICS = ["toy_qwen_slots", "toy_qwen_slots_weak", "toy_qwen_slots_shortcut", "toy_qwen_slots_vivid",
                "toy_scorer_slots"]


def _args(what="critic", recipe=None, critic=None):
    return argparse.Namespace(what=what, recipe=recipe, critic=critic)


def test_the_recipes_world_picks_the_critics():
    assert chosen_critics(_args()) == SLOT_CRITICS  # the default regime's: the slot world's
    assert chosen_critics(_args(critic="toy_learned")) == ["toy_learned"]
    assert chosen_critics(_args(recipe="v2")) == ["toy_learned"]
    assert chosen_critics(_args(recipe="slots")) == SLOT_CRITICS
    assert chosen_critics(_args(recipe="slots_clean", critic="toy_qwen_slots_weak")) == ["toy_qwen_slots_weak"]
    assert chosen_critics(_args(what="all", critic="toy_scorer_slots")) == ["toy_scorer_slots"]
    assert chosen_critics(_args(what="policy", recipe="slots")) == []
    assert policy_recipe(_args(what="all", critic="toy_qwen_slots")) == "slots"
    assert policy_recipe(_args(what="all")) == "slots"  # the default regime's base
    assert policy_recipe(_args(what="all", critic="toy_learned")) == "v1"
    assert folder_of("toy_qwen_slots", "slots") == "toy_qwen_slots" and folder_of("policy", "slots") == "toy_policy_slots"


@pytest.mark.parametrize("flags, words", [
    (["--what", "critic", "--critic", "toy_qwen_slots", "--recipe", "v1"], "slot-world critic but --recipe v1 is a sprite-world"),
    (["--what", "critic", "--critic", "toy_learned", "--recipe", "slots"], "sprite-world critic but --recipe slots is a slot-world"),
    (["--what", "policy", "--critic", "toy_qwen_slots"], "--what policy builds none"),
    (["--what", "critic", "--eval-prompts", "8"], "--what critic builds no policy"),
])
def test_a_mismatch_is_one_line_exit_2(tmp_path, capsys, flags, words):
    assert main(["prepare-toy", *flags, "--out", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("tvrl-bench prepare-toy: error:") and words in line, line
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_critic_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as info:
        main(["prepare-toy", "--what", "critic", "--critic", "toy_nothing"])
    assert info.value.code == 2 and "toy_qwen_slots" in capsys.readouterr().err
    with pytest.raises(UserError):
        chosen_critics(_args(what="policy", critic="toy_learned"))
