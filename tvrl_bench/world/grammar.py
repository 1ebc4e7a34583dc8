"""The prompt grammar: scene description <-> prompt text, exactly invertible.

    prompt  := sprite ( " and " sprite )* " on a " BACKGROUND " background"
    sprite  := ("a " | "an ") COLOUR " " SHAPE " " motion       ("an" before a vowel: "an orange square")
    motion  := "standing still" | "moving left" | "moving right" | "moving up" | "moving down"

e.g. "a red circle moving right and a blue square standing still on a black background". `prompt_of` writes
a description (or a Scene) in the order of its sprites; `parse_prompt` reads it back and raises ValueError
naming the part it could not read.
"""

from __future__ import annotations

import re

from tvrl_bench.world.palette import BACKGROUNDS, SPRITE_COLOURS
from tvrl_bench.world.scene import Scene, SceneDescription, SpriteDescription
from tvrl_bench.world.vocabulary import MOTIONS, SHAPES

MOTION_PHRASES: dict[str, str] = {
    "static": "standing still",
    "left": "moving left",
    "right": "moving right",
    "up": "moving up",
    "down": "moving down",
}
_PHRASE_TO_MOTION = {v: k for k, v in MOTION_PHRASES.items()}
assert set(MOTION_PHRASES) == set(MOTIONS)

_SPRITE = re.compile(
    r"an? (?P<colour>{}) (?P<shape>{}) (?P<motion>{})".format(
        "|".join(SPRITE_COLOURS), "|".join(SHAPES), "|".join(MOTION_PHRASES.values())
    )
)
_PROMPT = re.compile(r"(?P<sprites>.+) on a (?P<background>\w+) background")


def article(word: str) -> str:
    """'an' before a vowel, else 'a'."""
    return "an" if word[0] in "aeiou" else "a"


def prompt_of(scene: SceneDescription | Scene) -> str:
    """The prompt text of a scene (description), sprites in their stored order."""
    description = scene.description() if isinstance(scene, Scene) else scene
    if not description.sprites:
        raise ValueError("a toy scene needs at least one sprite to be described")
    sprites = " and ".join(f"{article(s.colour)} {s.colour} {s.shape} {MOTION_PHRASES[s.motion]}" for s in description.sprites)
    return f"{sprites} on a {description.background} background"


def parse_prompt(prompt: str) -> SceneDescription:
    """The scene description a prompt states; ValueError naming the unreadable part otherwise."""
    text = prompt.strip()
    whole = _PROMPT.fullmatch(text)
    if whole is None:
        raise ValueError(f"toy prompt {prompt!r} does not end in 'on a <colour> background'")
    background = whole.group("background")
    if background not in BACKGROUNDS:
        raise ValueError(f"toy prompt {prompt!r}: unknown background '{background}'; backgrounds: {', '.join(BACKGROUNDS)}")
    sprites = []
    for part in whole.group("sprites").split(" and "):
        m = _SPRITE.fullmatch(part)
        if m is None:
            raise ValueError(
                f"toy prompt {prompt!r}: cannot read sprite {part!r}; expected 'a|an <colour> <shape> <motion>' with "
                f"colour in {list(SPRITE_COLOURS)}, shape in {list(SHAPES)}, motion in {list(MOTION_PHRASES.values())}"
            )
        sprites.append(SpriteDescription(m.group("colour"), m.group("shape"), _PHRASE_TO_MOTION[m.group("motion")]))
    colours = [s.colour for s in sprites]
    if len(set(colours)) != len(colours):
        raise ValueError(f"toy prompt {prompt!r}: two sprites share a colour; every sprite needs its own colour")
    return SceneDescription(background, tuple(sprites))
