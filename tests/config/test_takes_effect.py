"""A setting its component's (or its trial's) mode leaves unused is refused in one line naming the binding, why it
changes nothing and the fix (config/takes_effect.py); the value its default has is accepted."""

from __future__ import annotations

import pytest

from tvrl_bench.config import ConfigError, load_config
from tvrl_bench.config.rules import Checks, Values
from tvrl_bench.config.takes_effect import takes_effect_when

TOY = "components/profiles/toy.gin"
OFFICIAL = "components/objectives/tvrl_official.gin"
GDPO = "components/rewards/combined_gdpo.gin"


def refused(files: list[str], bindings: list[str]) -> str:
    with pytest.raises(ConfigError) as err:
        load_config(files, bindings)
    message = str(err.value)
    assert len(message.splitlines()) == 1, message
    return message


@pytest.mark.parametrize("files, binding, words", [
    # the default profile's per-check advantages use the objective's own floor and clip
    ([TOY], "training.trial.advantage_clip = 0.5",
     ["training.trial.advantage_clip = 0.5 changes nothing", "objectives.tvrl_official.mode = 'question'",
      "bind objectives.tvrl_official.advantage_clip instead"]),
    ([TOY], "training.trial.advantage_clip = None", ["training.trial.advantage_clip = None changes nothing"]),
    ([TOY], "training.trial.advantage_eps = 0.01", ["bind objectives.tvrl_official.advantage_eps instead"]),
    ([TOY], "training.trial.advantage_std = 'global'", ["set objectives.tvrl_official.mode = 'video_adv'"]),
    ([TOY, "components/objectives/tvrl_question_null.gin"], "training.trial.advantage_clip = 0.5",
     ["objectives.tvrl_official.mode = 'question'"]),  # the control's mode is its objective's (inherited)
    # one advantage per video: the objective's own floor and clip are unused
    ([TOY, OFFICIAL], "objectives.tvrl_official.advantage_clip = 0.5",
     ["objectives.tvrl_official.mode = 'video_adv' takes the trial's advantages",
      "bind training.trial.advantage_clip instead, or set objectives.tvrl_official.mode = 'question'"]),
    ([TOY, OFFICIAL], "objectives.tvrl_official.advantage_eps = 0.1", ["bind training.trial.advantage_eps instead"]),
    # no KL term
    ([TOY], "objectives.tvrl_official.refresh_every = 3",
     ["objectives.tvrl_official.refresh_every = 3 changes nothing: objectives.tvrl_official.kl = 'none' has no KL"]),
    # GDPO normalises each critic's rewards itself
    ([TOY, OFFICIAL, GDPO], "training.trial.advantage_std = 'none'",
     ["rewards.combined.aggregate = 'gdpo'", "set rewards.combined.aggregate = 'sum'"]),
    # an objective that reads only the order of each group's advantages, its null control permuting within groups
    ([TOY, "components/objectives/dpo.gin"], "training.trial.advantage_std = 'global'",
     ["reads only the order of each group's advantages"]),
    ([TOY, "components/objectives/best_of_n_null.gin"], "training.trial.advantage_eps = 0.5",
     ["reads only the order of each group's advantages"]),
    # evaluated only at the end, or on every eval prompt anyway: no subset
    ([TOY], "training.trial.eval_every = 0", None),
    ([TOY], "training.trial.eval_subset = 64",
     ["training.trial.eval_subset = 64 changes nothing: the periodic evaluations already use every one of the "
      "training.trial.eval_prompts = 64", "bind it below 64"]),
])
def test_a_setting_that_cannot_take_effect_is_refused_where_it_was_bound(files, binding, words):
    if words is None:  # eval_every = 0 alone is fine; the subset it leaves unused is not
        load_config(files, [binding])
        words, binding = ["training.trial.eval_subset = 8 changes nothing", "training.trial.eval_every = 0"], \
            [binding, "training.trial.eval_subset = 8"]
    message = refused(files, binding if isinstance(binding, list) else [binding])
    assert message.startswith("--gin_bindings: "), message
    assert all(w in message for w in words), message
    assert "; remove it, or " in message


@pytest.mark.parametrize("files, bindings", [
    ([TOY], ["training.trial.advantage_clip = 5.0", "training.trial.advantage_std = 'group'"]),  # the defaults
    ([TOY, OFFICIAL], ["training.trial.advantage_clip = 0.5"]),  # mode 'video_adv' reads it
    ([TOY, OFFICIAL, GDPO], ["training.trial.advantage_clip = 2.0"]),  # GDPO clips with it
    ([TOY], ["objectives.tvrl_official.advantage_clip = 2.0", "training.trial.eval_subset = 8"]),
    ([TOY, "components/objectives/tvrl_video.gin"], []),
    ([TOY, "components/objectives/dpo.gin"], ["training.trial.advantage_clip = 2.0"]),  # clipping can tie the best
    # permuted across the whole step, the sizes of the advantages decide the order within a group
    ([TOY, "components/objectives/best_of_n_null.gin"], ["objectives.best_of_n_null.within_groups = False",
                                                          "training.trial.advantage_std = 'global'"]),
])
def test_a_setting_that_takes_effect_is_accepted(files, bindings):
    load_config(files, bindings)


def test_a_shipped_presets_value_for_another_mode_is_its_choice_and_a_users_is_refused(tmp_path):
    # tvrl_question.gin's per-check floor (0.1) stays bound when the mode is swapped: the preset's, accepted
    load_config([TOY], ["objectives.tvrl_official.mode = 'video_adv'"])
    load_config([TOY, OFFICIAL])
    mine = tmp_path / "mine.gin"
    mine.write_text(f"include '{TOY}'\ninclude '{OFFICIAL}'\nobjectives.tvrl_official.advantage_clip = 0.5\n")
    with pytest.raises(ConfigError) as err:
        load_config([str(mine)])
    assert str(err.value).startswith(f"{mine}:3: objectives.tvrl_official.advantage_clip = 0.5 changes nothing")


class Scaled:
    """A component whose scale acts only when it is on."""

    CHECKS = Checks([takes_effect_when(("scale",), ("on",),
                                       lambda v: None if v["on"] else (f"{v.binding('on')} is off", "turn it on"))])

    def __init__(self, on: bool = True, scale: float = 1.0):
        self.on, self.scale = on, scale


def test_the_relation_is_judged_when_the_config_is_read_not_at_construction():
    # a trial builds its components from shipped presets whose values for another mode it accepts
    Scaled(on=False, scale=2.0)
    values = Values("x.scaled", {"on": False, "scale": 2.0}, lambda key: None, lambda key: {"scale": 1.0}[key])
    (problem,) = Scaled.CHECKS.problems("x.scaled", values)
    assert problem.message.startswith("x.scaled.scale = 2.0 changes nothing: x.scaled.on = False is off; remove it, "
                                      "or turn it on") and problem.named


def test_a_relation_reading_another_component_runs_only_where_it_is_known():
    relation = takes_effect_when(("training.trial.advantage_clip",), ("mode",), lambda v: ("why", "fix"))
    assert relation.reads_others
    values = Values("objectives.x", {"mode": "question"}, lambda key: 0.5, lambda key: 5.0)
    ((message, params),) = relation.test(values)
    assert message.startswith("training.trial.advantage_clip = 0.5 changes nothing: why; remove it, or fix")
    assert params == ("training.trial.advantage_clip", "mode")
