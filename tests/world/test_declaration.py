"""world/declaration.py: the world names, a component's declared worlds, and a policy checkpoint's world."""

from __future__ import annotations

import pytest

from tvrl_bench.world.declaration import (CheckpointWorld, VideoSize, checkpoint_world, policy_draws, serves,
                                          served_worlds, world_of_check, world_parameters)
from tvrl_bench.world.checks import parse_check


def test_a_checkpoint_states_its_world_and_video():
    metadata = {"recipe": {"world": "slots"}, "video": {"frames": 4, "height": 32, "width": 24}}
    assert checkpoint_world(metadata) == CheckpointWorld("slots", VideoSize(4, 32, 24))
    assert str(VideoSize(4, 32, 24)) == "4 frames of 32 x 24"


def test_an_older_checkpoint_is_inferred_from_its_recipe_name():
    # no recipe.world: it predates the slot world (sprites), unless a shipped base's name says slots
    assert checkpoint_world({"recipe": {"steps": 1}}) == CheckpointWorld("sprites", VideoSize(8, 16, 16), True)
    assert checkpoint_world({"recipe": {}}, "slots_clean").world == "slots"
    assert checkpoint_world(None, "v2").world == "sprites"
    assert checkpoint_world(None) is None  # a folder without metadata (written by hand or a test): unknown
    with pytest.raises(ValueError, match="recipe.world = 'moon'"):
        checkpoint_world({"recipe": {"world": "moon"}})


def test_what_a_policy_draws_is_its_video_and_its_worlds_objects():
    assert policy_draws(CheckpointWorld("slots", VideoSize(8, 16, 16))) == {
        "frames": 8, "height": 16, "width": 16, "min_size": 4, "max_size": 5}
    assert policy_draws(CheckpointWorld("sprites", VideoSize(8, 16, 16)))["speed"] == 1


def test_components_declare_worlds_and_one_world_parameters():
    @serves("slots")
    def dataset():
        pass

    class Critic:
        worlds = ("slots", "sprites")
        world_parameters = {"sprites": ("motion_sharpness",)}

    assert served_worlds(dataset) == ("slots",) and served_worlds(Critic()) == ("slots", "sprites")
    assert served_worlds(object) is None and world_parameters(object) == {}
    assert world_parameters(Critic) == {"sprites": ("motion_sharpness",)}
    with pytest.raises(ValueError, match="name one or more of"):
        serves("moon")
    Critic.worlds = "slots"  # a string, not a tuple
    with pytest.raises(ValueError, match="in a tuple"):
        served_worlds(Critic)


def test_a_checks_world():
    assert world_of_check(parse_check("Is the top left object red?")) == "slots"
    assert world_of_check(parse_check("Is there a red circle?")) == "sprites"
