"""A component's declared checks refuse its bad values when the config is read, before anything is built: one line
per value naming the file and line (or --gin_bindings) that bound it, the value, and a valid binding."""

from __future__ import annotations

import logging

import pytest

from tvrl_bench.config import ConfigError, load_config
from tvrl_bench.config import component_checks

TOY = "components/profiles/toy.gin"
NFT = "components/objectives/nft.gin"


# the trial the relations read (10 denoising steps, groups of 4), bound here, not taken from the profile
TRIAL = ["training.schedule.num_steps = 10", "training.trial.group_size = 4", "training.trial.steps = 60"]


def refused(tmp_path, presets: list[str], lines: list[str]) -> str:
    """The ConfigError of `lines` written after `presets` and TRIAL in mine.gin (the last line is the bad one)."""
    mine = tmp_path / "mine.gin"
    text = "".join(f"include '{p}'\n" for p in [TOY, *presets]) + "\n".join(TRIAL + lines) + "\n"
    mine.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config([str(mine)])
    message = str(err.value)
    assert len(message.splitlines()) == 1, message
    assert message.startswith(f"{mine}:{len(text.splitlines())}: "), message
    return message


CASES = {
    # objectives.nft (the issue's 18 cases are the newer components' values)
    "nft beta": ([NFT], ["objectives.nft.beta = 0.0"], ["objectives.nft.beta = 0.0 must be a number > 0",
                                                        "e.g. objectives.nft.beta = 1.0"]),
    "nft range outside": ([NFT], ["objectives.nft.timestep_range = (-0.1, 0.5)"],
                          ["0 <= start < end <= 1", "e.g. objectives.nft.timestep_range = (0.0, 0.9)"]),
    "nft range past 1": ([NFT], ["objectives.nft.timestep_range = (0.2, 1.5)"], ["0 <= start < end <= 1"]),
    "nft range reversed": ([NFT], ["objectives.nft.timestep_range = (0.9, 0.1)"], ["0 <= start < end <= 1"]),
    "nft old_decay": ([NFT], ["objectives.nft.old_decay = 1.0"], ["old_decay = 1.0 must be a number in [0, 1)"]),
    "nft kl_beta": ([NFT], ["objectives.nft.kl_beta = -0.1"], ["kl_beta = -0.1 must be a number >= 0"]),
    "nft timesteps": ([NFT], ["objectives.nft.timesteps = 0"], ["timesteps = 0 must be an integer >= 1"]),
    "awm weighting": (["components/objectives/awm.gin"], ["objectives.awm.weighting = 'sigma'"],
                      ["objectives.awm.weighting = 'sigma' must be one of 'uniform', 't', 't**2'"]),
    "awm clip_range": (["components/objectives/awm.gin"], ["objectives.awm.clip_range = 0.0"],
                       ["objectives.awm.clip_range = 0.0 must be a number > 0"]),
    "grpo_guard clip_range": (["components/objectives/grpo_guard.gin"], ["objectives.grpo_guard.clip_range = -1.0"],
                              ["objectives.grpo_guard.clip_range = -1.0 must be a number > 0"]),
    "dpo beta": (["components/objectives/dpo.gin"], ["objectives.dpo.beta = 0.0"],
                 ["objectives.dpo.beta = 0.0 must be a number > 0"]),
    "best_of_n top_k": (["components/objectives/best_of_n.gin"], ["objectives.best_of_n.top_k = 0"],
                        ["objectives.best_of_n.top_k = 0 must be an integer >= 1"]),
    "best_of_n weighting": (["components/objectives/best_of_n.gin"], ["objectives.best_of_n.weighting = 'x'"],
                            ["must be one of 'uniform', 't', 't**2'"]),
    "combined weights": (["components/rewards/combined_sum.gin"], ["rewards.combined.weights = {'toy_oracle': 1.0}"],
                         ["rewards.combined.weights must give every critic", "no weight for ['toy_verdicts']",
                          "e.g. rewards.combined.weights = {'toy_oracle': 1.0, 'toy_verdicts': 1.0}"]),
    "combined all zero": (["components/rewards/combined_sum.gin"],
                          ["rewards.combined.weights = {'toy_oracle': 0.0, 'toy_verdicts': 0.0}"],
                          ["one non-zero at least"]),
    "combined credit_from": (["components/rewards/combined_sum.gin"], ["rewards.combined.credit_from = 'oracle'"],
                             ["rewards.combined.credit_from = 'oracle' is not one of the critics",
                              "e.g. rewards.combined.credit_from = 'toy_oracle'"]),
    "combined aggregate": (["components/rewards/combined_sum.gin"], ["rewards.combined.aggregate = 'mean'"],
                           ["rewards.combined.aggregate = 'mean' must be one of 'sum', 'gdpo'"]),
    # values that would do nothing, or fail only after the first rollout
    "nft range without a step": ([NFT], ["objectives.nft.timestep_range = (0.95, 0.99)"],
                                 ["holds none of the schedule's 10 steps", "e.g. objectives.nft.timestep_range"]),
    "best_of_n top_k of the group": (["components/objectives/best_of_n.gin"], ["objectives.best_of_n.top_k = 4"],
                                     ["keeps every rollout of a group of training.trial.group_size = 4",
                                      "e.g. objectives.best_of_n.top_k = 1"]),
    "mixgrpo stride past the range": (["components/schedules/mixgrpo.gin"], ["training.schedule.window_stride = 9"],
                                      ["window_stride = 9 is larger than the 7 step(s)", "never moves",
                                       "e.g. training.schedule.window_stride = 1"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_value_is_refused_at_its_line_with_the_fix(tmp_path, case):
    presets, lines, needles = CASES[case]
    message = refused(tmp_path, presets, lines)
    for needle in needles:
        assert needle in message, message


def test_a_command_line_binding_is_named_as_such():
    with pytest.raises(ConfigError) as err:
        load_config([TOY, NFT], ["objectives.nft.beta = -1.0"])
    assert str(err.value).startswith("--gin_bindings: objectives.nft.beta = -1.0 must be a number > 0")


def test_a_relation_is_named_where_either_value_is_bound(tmp_path):
    """top_k is the preset's default; the group size that makes it select nothing is bound on the command line."""
    with pytest.raises(ConfigError, match=r"^--gin_bindings: objectives.best_of_n.top_k = 2 keeps every rollout"):
        load_config([TOY, "components/objectives/best_of_n.gin"],
                    ["objectives.best_of_n.top_k = 2", "training.trial.group_size = 2"])


def test_the_shipped_presets_pass_their_checks():
    for preset in [NFT, "components/objectives/best_of_n.gin", "components/rewards/combined_gdpo.gin",
                   "components/schedules/mixgrpo.gin", "components/objectives/tvrl_official.gin"]:
        load_config([TOY, preset])


def test_a_swapped_out_preset_is_checked_by_its_bound_values_only(tmp_path):
    """best_of_n's top_k against the group size is not asked when best_of_n is not the objective (a later preset
    swapped it out), though its bound values are still checked by their rules."""
    load_config([TOY, "components/objectives/best_of_n.gin", "components/objectives/grpo.gin"],
                ["training.trial.group_size = 2", "objectives.best_of_n.top_k = 2"])


def test_a_warning_is_logged_once(caplog):
    """A stride that jumps the window straight to its end (no restart) may be meant: warned, once per process."""
    component_checks._WARNED.clear()
    bindings = ["training.schedule.window_restart = False", "training.schedule.window_stride = 9"]
    bindings = TRIAL + bindings
    with caplog.at_level(logging.WARNING, logger="tvrl_bench.config"):
        load_config([TOY, "components/schedules/mixgrpo.gin"], bindings)
        load_config([TOY, "components/schedules/mixgrpo.gin"], bindings)
    warned = [r.getMessage() for r in caplog.records if "window_stride = 9" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith("--gin_bindings: ") and "straight to its last" in warned[0]
