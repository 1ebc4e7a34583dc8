"""Yes/no checks of a toy prompt: generating them from a scene, parsing their text, answering from a scene.

Check kinds, their evaluator category and their text:

| kind       | category   | text                                                                     |
|------------|------------|--------------------------------------------------------------------------|
| object     | object     | "Is there a red circle?"            (colour and shape on one sprite)     |
| colour     | attribute  | "Is there a red object?"                                                 |
| shape      | attribute  | "Is there a circle?"                                                     |
| motion     | motion     | "Does the red circle move to the right?" / "... move up?" / "... stand still?" |
| background | background | "Is the background black?"                                               |
| count      | count      | "Is there exactly one object?" / "Are there exactly two objects?"        |
| slot       | slot       | "Is the top left object red?"       (the slot world, world/slots.py)     |

`checks_for(scene)` gives a prompt's checks (all answered Yes by its ground truth): per sprite an object, a colour
and a motion check, one shape check per distinct shape, the background, and the count when asked for.
`negative_checks(scene, difficulty)` gives checks answered No (for training a learned critic; never rewards).
Critics and evaluators see only check text, like a real VLM: they read it with `parse_check` into a `CheckSpec`.
`answer(description, spec)` is the true answer for a scene description. `check_kind(text)` and `check_row(text)`
name the kind (and, for a slot check, the slot) a report groups a check under.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tvrl_bench.world.difficulty import DEFAULT, Difficulty
from tvrl_bench.world.grammar import article
from tvrl_bench.world.palette import BACKGROUNDS, SPRITE_COLOURS
from tvrl_bench.world.scene import Rng, Scene, SceneDescription, as_random
from tvrl_bench.world.vocabulary import NUMBER_WORDS, SHAPES, SLOT_NAMES

KINDS: tuple[str, ...] = ("object", "colour", "shape", "motion", "background", "count", "slot")
CATEGORY_OF_KIND: dict[str, str] = {
    "object": "object",
    "colour": "attribute",
    "shape": "attribute",
    "motion": "motion",
    "background": "background",
    "count": "count",
    "slot": "slot",
}
CATEGORIES: tuple[str, ...] = ("object", "attribute", "motion", "background", "count", "slot")

MOTION_QUESTION: dict[str, str] = {
    "static": "stand still",
    "left": "move to the left",
    "right": "move to the right",
    "up": "move up",
    "down": "move down",
}
_QUESTION_TO_MOTION = {v: k for k, v in MOTION_QUESTION.items()}
_WORD_TO_NUMBER = {v: k for k, v in NUMBER_WORDS.items()}


@dataclass(frozen=True)
class CheckSpec:
    """A parsed check. Fields a kind does not use are None.

    kind: one of KINDS. colour / shape: the sprite asked about (object, colour, shape, motion checks; slot checks
    ask a colour). motion: one of MOTIONS (motion checks). background: a background name. count: number of
    sprites. slot: the slot world's slot name (slot checks).
    """

    kind: str
    colour: str | None = None
    shape: str | None = None
    motion: str | None = None
    background: str | None = None
    count: int | None = None
    slot: str | None = None

    @property
    def category(self) -> str:
        return CATEGORY_OF_KIND[self.kind]

    def text(self) -> str:
        """The check's question text (the inverse of `parse_check`)."""
        if self.kind == "object":
            return f"Is there {article(self.colour)} {self.colour} {self.shape}?"
        if self.kind == "colour":
            return f"Is there {article(self.colour)} {self.colour} object?"
        if self.kind == "shape":
            return f"Is there {article(self.shape)} {self.shape}?"
        if self.kind == "motion":
            return f"Does the {self.colour} {self.shape} {MOTION_QUESTION[self.motion]}?"
        if self.kind == "background":
            return f"Is the background {self.background}?"
        if self.kind == "slot":
            return f"Is the {self.slot} object {self.colour}?"
        if self.kind == "count":
            if self.count == 1:
                return "Is there exactly one object?"
            return f"Are there exactly {NUMBER_WORDS[self.count]} objects?"
        raise ValueError(f"unknown check kind '{self.kind}'; kinds are {KINDS}")


_C = "|".join(SPRITE_COLOURS)
_S = "|".join(SHAPES)
# every slot name, longest first so that "top left" is read before "top"
_SLOT = "|".join(sorted({name for names in SLOT_NAMES.values() for name in names}, key=len, reverse=True))
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("object", re.compile(rf"is there an? (?P<colour>{_C}) (?P<shape>{_S})\?")),
    ("colour", re.compile(rf"is there an? (?P<colour>{_C}) object\?")),
    ("shape", re.compile(rf"is there an? (?P<shape>{_S})\?")),
    ("motion", re.compile(rf"does the (?P<colour>{_C}) (?P<shape>{_S}) (?P<motion>{'|'.join(MOTION_QUESTION.values())})\?")),
    ("background", re.compile(rf"is the background (?P<background>{'|'.join(BACKGROUNDS)})\?")),
    ("count", re.compile(r"(?:is there exactly (?P<one>one) object|are there exactly (?P<many>\w+) objects)\?")),
    ("slot", re.compile(rf"is the (?P<slot>{_SLOT}) object (?P<colour>{_C})\?")),
)


def parse_check(text: str) -> CheckSpec:
    """The CheckSpec of a check's text (case and surrounding spaces ignored); ValueError if it is not a toy check."""
    cleaned = " ".join(text.strip().lower().split())
    for kind, pattern in _PATTERNS:
        m = pattern.fullmatch(cleaned)
        if m is None:
            continue
        if kind == "motion":
            return CheckSpec(kind, colour=m["colour"], shape=m["shape"], motion=_QUESTION_TO_MOTION[m["motion"]])
        if kind == "count":
            word = m["one"] or m["many"]
            if word not in _WORD_TO_NUMBER:
                break
            return CheckSpec(kind, count=_WORD_TO_NUMBER[word])
        return CheckSpec(kind, **{k: v for k, v in m.groupdict().items()})
    raise ValueError(
        f"not a toy-world check: {text!r}. Checks read like 'Is there a red circle?', 'Is there a red object?', "
        "'Is there a circle?', 'Does the red circle move to the right?', 'Is the background black?', "
        "'Are there exactly two objects?', 'Is the top left object red?'"
    )


@lru_cache(maxsize=4096)
def check_kind(question: str) -> str | None:
    """The toy check kind of a question, or None for a question that is not a toy-world check."""
    try:
        return parse_check(question).kind
    except ValueError:
        return None


@lru_cache(maxsize=4096)
def check_row(question: str) -> str | None:
    """The row a toy check is reported under: its kind ('object'), or 'slot:<name>' for a slot-world check
    ('slot:top left'); None for a question that is not a toy-world check."""
    kind = check_kind(question)
    return f"slot:{parse_check(question).slot}" if kind == "slot" else kind


def _description(scene: SceneDescription | Scene) -> SceneDescription:
    return scene.description() if isinstance(scene, Scene) else scene


def check_specs_for(scene: SceneDescription | Scene, count: bool = False) -> tuple[CheckSpec, ...]:
    """The CheckSpecs of a scene's checks, grouped by category (object, attribute, motion, background, count)."""
    d = _description(scene)
    specs = [CheckSpec("object", colour=s.colour, shape=s.shape) for s in d.sprites]
    specs += [CheckSpec("colour", colour=s.colour) for s in d.sprites]
    specs += [CheckSpec("shape", shape=shape) for shape in dict.fromkeys(s.shape for s in d.sprites)]
    specs += [CheckSpec("motion", colour=s.colour, shape=s.shape, motion=s.motion) for s in d.sprites]
    specs.append(CheckSpec("background", background=d.background))
    if count:
        specs.append(CheckSpec("count", count=len(d.sprites)))
    return tuple(specs)


def checks_for(scene: SceneDescription | Scene, count: bool = False) -> tuple[str, ...]:
    """A prompt's yes/no checks (text), every one answered Yes by the scene."""
    return tuple(spec.text() for spec in check_specs_for(scene, count))


def answer(scene: SceneDescription | Scene, spec: CheckSpec | str) -> bool:
    """The true answer of a check for a scene (description), or for a slot scene (world/slots.py SlotScene)."""
    spec = parse_check(spec) if isinstance(spec, str) else spec
    if spec.kind == "slot" or hasattr(scene, "slots"):
        slots = getattr(scene, "slots", ())
        return spec.kind == "slot" and spec.slot in slots and scene.colours[slots.index(spec.slot)] == spec.colour
    d = _description(scene)
    sprite = d.sprite(spec.colour) if spec.colour else None
    if spec.kind == "object":
        return sprite is not None and sprite.shape == spec.shape
    if spec.kind == "colour":
        return sprite is not None
    if spec.kind == "shape":
        return any(s.shape == spec.shape for s in d.sprites)
    if spec.kind == "motion":
        return sprite is not None and sprite.shape == spec.shape and sprite.motion == spec.motion
    if spec.kind == "background":
        return d.background == spec.background
    if spec.kind == "count":
        return len(d.sprites) == spec.count
    raise ValueError(f"unknown check kind '{spec.kind}'")


def negative_check_specs(scene: SceneDescription | Scene, difficulty: Difficulty = DEFAULT) -> tuple[CheckSpec, ...]:
    """Every check within the difficulty's vocabulary that the scene answers No, grouped by kind.

    Object: present colours with another shape, and absent colours; colour: absent colours; shape: absent
    shapes; motion: each sprite with the other motions (and its colour with the other shapes); background: the
    other backgrounds; count: other sprite counts of the difficulty (only when it has count checks).
    """
    d = _description(scene)
    k = difficulty
    specs = [CheckSpec("object", colour=c, shape=s) for c in k.colours for s in k.shapes]
    specs += [CheckSpec("colour", colour=c) for c in k.colours]
    specs += [CheckSpec("shape", shape=s) for s in k.shapes]
    specs += [CheckSpec("motion", colour=sp.colour, shape=s, motion=m) for sp in d.sprites for s in k.shapes for m in k.motions]
    specs += [CheckSpec("background", background=b) for b in k.backgrounds]
    if k.count_checks:
        specs += [CheckSpec("count", count=n) for n in range(k.min_sprites, k.max_sprites + 1)]
    return tuple(s for s in specs if not answer(d, s))


def negative_checks(
    scene: SceneDescription | Scene, difficulty: Difficulty = DEFAULT, rng: Rng | None = None, per_kind: int | None = None
) -> tuple[str, ...]:
    """Checks the scene answers No (text). With `per_kind`, at most that many per kind, drawn with `rng`.

    For training a learned critic only: these are never rewards.
    """
    specs = negative_check_specs(scene, difficulty)
    if per_kind is None:
        return tuple(s.text() for s in specs)
    r = as_random(0 if rng is None else rng)
    chosen: list[CheckSpec] = []
    for kind in KINDS:
        of_kind = [s for s in specs if s.kind == kind]
        chosen += r.sample(of_kind, min(per_kind, len(of_kind)))
    return tuple(s.text() for s in chosen)
