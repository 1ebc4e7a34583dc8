"""What the slot critics' tests share: a small model size and two slot prompts with their checks."""

from __future__ import annotations

from tvrl_bench.recipes.slot_qwen_build import QwenSize
from tvrl_bench.world.slots import SLOTS, parse_slot_prompt, slot_checks

SMALL = QwenSize(hidden=16, layers=1, heads=2, vision_hidden=16, init_std=0.1)
PROMPTS = ["red at the top left, blue at the top right, green at the bottom left and cyan at the bottom right",
           "yellow at the top left, yellow at the top right, magenta at the bottom left and red at the bottom right"]


def prompt_checks() -> list[tuple[str, ...]]:
    """The checks of PROMPTS, one per slot."""
    return [slot_checks(parse_slot_prompt(p)[0], SLOTS.slots) for p in PROMPTS]
