"""training/trial/world_check.py: a trial whose parts serve different worlds is one line at config time, naming
both settings and the fix; the dataset's video knobs are the policy's; a parameter of the other world's checks,
bound by the user, is refused. In-process (load_config + check_values), as tvrl-train runs them."""

from __future__ import annotations

import pytest

from tvrl_bench.config import ConfigError, load_config
from tvrl_bench.training.trial.checks import check_values

SLOTS, SPRITES = "components/profiles/toy.gin", "components/profiles/toy_v3.gin"


def refusal(profile: str, *bindings: str) -> str:
    loaded = load_config([profile], list(bindings))
    with pytest.raises(ConfigError) as caught:
        check_values(loaded)
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("profile", [SLOTS, SPRITES, "components/profiles/toy_v1.gin", "components/profiles/toy_v2.gin"])
def test_the_shipped_profiles_agree_with_their_policies(profile):
    check_values(load_config([profile]))


@pytest.mark.parametrize("profile, binding, needles", [
    (SLOTS, "include 'components/rewards/toy_learned.gin'",
     ["components/rewards/toy_learned.gin:9: rewards.toy_learned answers sprite-world checks",
      "components/profiles/toy.gin is the slot world (policies.toy.base = 'slots')",
      "use rewards.toy_oracle, rewards.toy_verdicts", "or a critic trained on the slot world"]),
    (SLOTS, "policies.toy.base = 'v2'",
     ["--gin_bindings: policies.toy.base = 'v2' is a sprite-world base, but datasets.toy_slots",
      "makes slot-world prompts", "use a slot-world base (policies.toy.base = 'slots_clean' or 'slots')"]),
    (SPRITES, "policies.toy.base = 'slots'",
     ["--gin_bindings: policies.toy.base = 'slots' is a slot-world base, but datasets.toy", "sprite-world prompts",
      "policies.toy.base = 'v1' or 'v2' or 'v2_18k' or 'v2_noisy_captions'"]),
    (SPRITES, "include 'components/datasets/toy_slots.gin'",
     ["policies.toy.base = 'v2_noisy_captions' is a sprite-world base", "datasets.toy_slots",
      "or a sprite-world dataset (datasets.toy)"]),
])
def test_parts_of_another_world_are_refused_naming_both_settings(profile, binding, needles):
    message = refusal(profile, binding)
    for needle in needles:
        assert needle in message, message


@pytest.mark.parametrize("profile, binding, needle", [
    (SLOTS, "datasets.toy_slots.size = 8", "datasets.toy_slots.size = 8 makes frames 8 px high, but the policy "
     "(policies.toy.base = 'slots') draws 8 frames of 16 x 16"),
    (SLOTS, "datasets.toy_slots.frames = 4", "makes videos of 4 frames"),
    (SLOTS, "datasets.toy_slots.min_size = 7", "makes squares at least 7 px wide, but the policy "
     "(policies.toy.base = 'slots') draws squares of 4-5 px"),
    (SLOTS, "datasets.toy_slots.max_size = 3", "squares at most 3 px wide"),
    (SPRITES, "datasets.toy.size = 32", "datasets.toy.size = 32 makes frames 32 px high"),
    (SPRITES, "datasets.toy.difficulty = 'hard'", "datasets.toy.difficulty = 'hard' makes frames 32 px high"),
    (SPRITES, "datasets.toy.speed = 2", "sprites of 5-7 px moving 1 px per frame"),
    (SPRITES, "datasets.toy.min_size = 6", "sprites at least 6 px wide"),
])
def test_a_dataset_knob_of_the_video_must_be_what_the_policy_draws(profile, binding, needle):
    message = refusal(profile, binding)
    assert message.startswith("--gin_bindings: ") and needle in message, message
    assert message.endswith("the videos are the policy's, so this value would change nothing; remove the binding")


def test_a_dataset_knob_equal_to_what_the_policy_draws_is_accepted():
    check_values(load_config([SLOTS], ["datasets.toy_slots.size = 16", "datasets.toy_slots.min_size = 4"]))
    check_values(load_config([SPRITES], ["datasets.toy.frames = 8", "datasets.toy.speed = 1"]))


@pytest.mark.parametrize("binding", ["rewards.toy_oracle.motion_sharpness = 3.0", "evaluators.toy.min_speed = 0.2"])
def test_a_parameter_of_the_other_worlds_checks_bound_by_the_user_is_refused(binding):
    message = refusal(SLOTS, binding)
    assert f"--gin_bindings: {binding} acts on sprite-world checks only" in message
    assert "components/profiles/toy.gin is the slot world" in message and message.endswith("remove the binding")
    check_values(load_config([SPRITES], [binding]))  # where it acts


def test_a_preset_binding_of_the_other_world_is_refused_unless_it_is_the_default():
    # toy_oracle.gin binds rewards.toy_oracle.difficulty = 'default' (a sprite-world parameter, at its default): the
    # slot profile includes it; the component measure's preset sets one to another value, which changes nothing here
    message = refusal(SLOTS, "include 'components/rewards/toy_oracle_component.gin'")
    assert message.startswith("components/rewards/toy_oracle_component.gin:5: rewards.toy_oracle.shape_measure = "
                              "'component' acts on sprite-world checks only") and message.endswith("leave out the "
                                                                                                  "preset that binds it")


def test_a_shipped_preset_named_as_a_file_is_a_preset_too(tmp_path):
    # a sweep names each axis preset on the command line (sweeps/rewards.gin: reward toy_oracle): its default-valued
    # sprite binding is accepted as when the profile includes it; the same binding in the user's own file is not
    check_values(load_config([SLOTS, "components/rewards/toy_oracle.gin"], []))
    own = tmp_path / "mine.gin"
    own.write_text("rewards.toy_oracle.difficulty = 'default'\n")
    message = refusal_of([SLOTS, str(own)])
    assert message.startswith(f"{own}:1: rewards.toy_oracle.difficulty = 'default' acts on sprite-world checks only")


def refusal_of(files: list[str]) -> str:
    loaded = load_config(files, [])
    with pytest.raises(ConfigError) as caught:
        check_values(loaded)
    return str(caught.value)


def test_a_checkpoint_that_does_not_say_its_world_is_not_checked(tmp_path, tiny_policy_path):
    check_values(load_config([SLOTS], [f"policies.toy.path = '{tiny_policy_path}'",
                                       "include 'components/rewards/toy_learned.gin'"]))


def test_a_learned_critic_serves_the_world_its_checkpoint_states(tmp_path):
    """rewards.toy_learned is of the sprite world unless its checkpoint says otherwise (a critic trained on slots)."""
    import json

    from tvrl_bench.rewards.toy_learned import DEFAULT_PATH

    config = json.loads((DEFAULT_PATH / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "world": "slots"}))
    bindings = ["include 'components/rewards/toy_learned.gin'", f"rewards.toy_learned.path = '{tmp_path}'"]
    check_values(load_config([SLOTS], bindings))
    assert "rewards.toy_learned answers slot-world checks" in refusal(SPRITES, *bindings)
