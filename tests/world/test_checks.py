from __future__ import annotations

import random

import pytest

from tvrl_bench.world.checks import (
    CheckSpec,
    answer,
    check_specs_for,
    checks_for,
    negative_check_specs,
    negative_checks,
    parse_check,
)
from tvrl_bench.world.difficulty import DEFAULT, HARD, difficulty
from tvrl_bench.world.scene import SceneDescription, SpriteDescription, sample_scenes

TWO = SceneDescription(
    "black", (SpriteDescription("red", "circle", "right"), SpriteDescription("blue", "circle", "static"))
)


def test_checks_of_a_two_sprite_scene():
    assert checks_for(TWO) == (
        "Is there a red circle?",
        "Is there a blue circle?",
        "Is there a red object?",
        "Is there a blue object?",
        "Is there a circle?",
        "Does the red circle move to the right?",
        "Does the blue circle stand still?",
        "Is the background black?",
    )
    assert checks_for(TWO, count=True)[-1] == "Are there exactly two objects?"


def test_parse_check_reads_every_kind():
    assert parse_check("Is there a red circle?") == CheckSpec("object", colour="red", shape="circle")
    assert parse_check("Is there an orange object?") == CheckSpec("colour", colour="orange")
    assert parse_check("Is there a square?") == CheckSpec("shape", shape="square")
    assert parse_check("Does the blue square move up?") == CheckSpec("motion", colour="blue", shape="square", motion="up")
    assert parse_check("Does the blue square stand still?").motion == "static"
    assert parse_check("  is the background  GRAY? ") == CheckSpec("background", background="gray")
    assert parse_check("Is there exactly one object?") == CheckSpec("count", count=1)
    assert parse_check("Are there exactly two objects?").count == 2
    assert parse_check("Is there a red circle?").category == "object"
    assert parse_check("Is there a circle?").category == "attribute"


@pytest.mark.parametrize("bad", ["Is there a red blob?", "Are there exactly seven objects?", "Is it nice?"])
def test_parse_check_rejects_other_text(bad):
    with pytest.raises(ValueError, match="not a toy-world check"):
        parse_check(bad)


def test_text_and_parse_round_trip_and_ground_truth_answers_yes():
    for scene in sample_scenes(100, 2) + sample_scenes(50, 2, HARD):
        for spec in check_specs_for(scene, count=True):
            assert parse_check(spec.text()) == spec
            assert answer(scene, spec)


def test_negative_checks_are_all_answered_no_and_cover_every_kind():
    d = difficulty("default", count_checks=True)
    for scene in sample_scenes(60, 4, d):
        negatives = negative_check_specs(scene, d)
        assert negatives and not any(answer(scene, s) for s in negatives)
        expected = {"object", "colour", "shape", "motion", "background", "count"}
        if {sp.shape for sp in scene.sprites} == set(d.shapes):
            expected.remove("shape")  # no absent shape to ask about
        assert {s.kind for s in negatives} == expected
        assert not set(s.text() for s in negatives) & set(checks_for(scene, count=True))


def test_negative_checks_sample_per_kind_reproducibly():
    drawn = negative_checks(TWO, DEFAULT, rng=random.Random(1), per_kind=1)
    assert drawn == negative_checks(TWO, DEFAULT, rng=random.Random(1), per_kind=1)
    kinds = [parse_check(t).kind for t in drawn]
    assert len(kinds) == len(set(kinds))
    assert "Is there a blue square?" in negative_checks(TWO, DEFAULT)
    assert "Does the red circle move to the left?" in negative_checks(TWO, DEFAULT)


def test_answer_for_hand_made_cases():
    assert not answer(TWO, "Is there a red square?")
    assert not answer(TWO, "Does the red square move to the right?")
    assert answer(TWO, "Are there exactly two objects?") and not answer(TWO, "Is there exactly one object?")
    assert not answer(TWO, "Is there a square?")
