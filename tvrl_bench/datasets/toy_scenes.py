"""Drawing the sprite world's distinct scenes: `unique_descriptions` (n scene descriptions with distinct signatures,
none excluded, in the order drawn) and `available_scenes` (how many a world holds, up to n; cached), which the
dataset (datasets/toy.py) and its config checks (datasets/toy_checks.py) share."""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from tvrl_bench.world.difficulty import DEFAULT, Difficulty
from tvrl_bench.world.scene import Rng, SceneDescription, ScenesExhausted, as_random, sample_scene


def unique_descriptions(n: int, rng: Rng, difficulty: Difficulty = DEFAULT, exclude: Iterable[tuple] = ()) -> list[SceneDescription]:
    """`n` feasible scene descriptions with distinct signatures, none in `exclude`, in the order drawn.
    ScenesExhausted (a ValueError) when the world runs out of scenes: after 200 x (n + 10) draws, or as soon as
    20 x (found + 10) draws in a row found nothing new (so asking a world of ~1,300 scenes for a million fails in
    seconds, not hours)."""
    r = as_random(rng)
    seen = set(exclude)
    found: list[SceneDescription] = []
    draws = stalled = 0
    while len(found) < n:
        draws += 1
        stalled += 1
        if draws > 200 * (n + 10) or stalled > 20 * (len(found) + 10):
            raise ScenesExhausted(
                f"found only {len(found)} of {n} distinct toy scenes at difficulty '{difficulty.name}' "
                f"(excluding {len(set(exclude))}); ask for fewer prompts or a larger world (more colours, shapes, "
                "sprites)", len(found))
        description = sample_scene(r, difficulty).description()
        if description.signature not in seen:
            seen.add(description.signature)
            found.append(description)
            stalled = 0
    return found


@lru_cache(maxsize=16)
def available_scenes(n: int, difficulty: Difficulty = DEFAULT) -> int:
    """How many distinct scenes of `difficulty` a draw of n finds: n when the world holds that many, else all it
    has (1,344 at the default difficulty). Cached: a config check asks it for every trial of a study."""
    try:
        return len(unique_descriptions(n, as_random(0), difficulty))
    except ScenesExhausted as exc:
        return exc.found
