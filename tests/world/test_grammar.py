from __future__ import annotations

import pytest

from tvrl_bench.world.difficulty import HARD
from tvrl_bench.world.grammar import parse_prompt, prompt_of
from tvrl_bench.world.scene import SceneDescription, SpriteDescription, sample_scenes


def test_prompt_text():
    description = SceneDescription(
        "black", (SpriteDescription("red", "circle", "right"), SpriteDescription("blue", "square", "static"))
    )
    text = "a red circle moving right and a blue square standing still on a black background"
    assert prompt_of(description) == text
    assert parse_prompt(text) == description
    orange = SceneDescription("white", (SpriteDescription("orange", "triangle", "up"),))
    assert prompt_of(orange) == "an orange triangle moving up on a white background"


def test_round_trip_on_sampled_scenes():
    for scene in sample_scenes(200, 5) + sample_scenes(100, 5, HARD):
        assert parse_prompt(prompt_of(scene)) == scene.description()


@pytest.mark.parametrize(
    "bad, message",
    [
        ("a red circle moving right", "does not end in 'on a <colour> background'"),
        ("a red circle moving right on a pink background", "unknown background 'pink'"),
        ("a red blob moving right on a black background", "cannot read sprite 'a red blob moving right'"),
        ("a red circle moving right and a red square standing still on a black background", "share a colour"),
    ],
)
def test_parse_errors_name_the_problem(bad, message):
    with pytest.raises(ValueError, match=message):
        parse_prompt(bad)
