"""Where the slot world's learned critics keep their weights, and the one-line errors of a critic that cannot run.

Each critic ships as a folder of tvrl_bench/assets/ (weights, config, tokenizer and processor files, and a
`pretrain.json` that records its recipe, seed, data size and CPU time). `tvrl-bench prepare-toy --what critic
--recipe slots --critic <name>` rebuilds one.

Errors are `ConfigError`s (exit 2): a missing or corrupt asset folder, a check the critic cannot answer (it
answers the slot world's "Is the <slot> object <colour>?" only), a prompt the scalar scorer cannot score (the
slot world's, in the colours it saw) and a world it was not trained on, each naming the
critic, the asset and the fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, TypeVar

from tvrl_bench.config.errors import ConfigError
from tvrl_bench.world.checks import CheckSpec, parse_check
from tvrl_bench.world.slots import SLOTS, parse_slot_prompt

ASSETS = Path(__file__).resolve().parent.parent / "assets"
RECORD = "pretrain.json"
SLOT_COLOURS = SLOTS.colours
DEFAULT_SLOTS = SLOTS.slots  # the default slot world's slot names row by row (world/vocabulary.py: SLOT_NAMES by grid)

T = TypeVar("T")


def rebuild_hint(name: str) -> str:
    """The command that rebuilds critic `name`'s shipped asset."""
    return f"`tvrl-bench prepare-toy --what critic --recipe slots --critic {name} --overwrite-assets`"


def asset_folder(name: str, path: str | None, required: tuple[str, ...]) -> Path:
    """The critic's folder: `path`, or the shipped tvrl_bench/assets/<name>/; ConfigError when a required file
    (relative path) is missing."""
    folder = Path(path).expanduser() if path else ASSETS / name
    missing = [f for f in required if not (folder / f).exists()]
    if missing:
        raise ConfigError(
            f"rewards.{name}: its asset {folder} is missing {', '.join(missing)}; rebuild it with "
            f"{rebuild_hint(name)} (or point rewards.{name}.path at a folder that command wrote with --out)"
        )
    return folder


def load_asset(name: str, folder: Path, load: Callable[[], T]) -> T:
    """`load()`, with any failure to read the folder turned into one ConfigError naming the critic and the fix."""
    try:
        return load()
    except ConfigError:
        raise
    except Exception as exc:  # a corrupt or foreign file: safetensors, json, tokenizer or config errors
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"rewards.{name}: its asset {folder} cannot be loaded ({type(exc).__name__}: {first[:160]}); it is "
            f"corrupt or from another critic: rebuild it with {rebuild_hint(name)}"
        ) from None


def read_record(folder: Path) -> dict:
    """The asset's pretrain.json ({} when absent)."""
    file = folder / RECORD
    return json.loads(file.read_text()) if file.is_file() else {}


def slot_spec(name: str, question: str) -> CheckSpec:
    """The parsed slot check; ConfigError naming the critic when `question` is not one of the default slot world's
    checks (another world's check, or a colour / slot this critic never saw)."""
    try:
        spec = parse_check(question)
    except ValueError:
        spec = None
    if spec is None or spec.kind != "slot" or spec.colour not in SLOT_COLOURS or spec.slot not in DEFAULT_SLOTS:
        raise ConfigError(
            f"rewards.{name} answers the slot world's checks only ('Is the top left object red?': slots "
            f"{', '.join(DEFAULT_SLOTS)}; colours {', '.join(SLOT_COLOURS)}) and cannot answer {question!r}; train "
            f"with a slot-world profile (components/profiles/toy.gin, datasets.toy_slots) or use a critic of "
            f"that world (rewards.toy_oracle)"
        )
    return spec


def slot_prompt(name: str, prompt: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(colours, slots) of a default slot world's prompt; ConfigError naming the critic when `prompt` is not one
    (another world's prompt, another grid, or a colour this critic never saw), as `slot_spec` for a check."""
    try:
        colours, slots = parse_slot_prompt(prompt)
    except ValueError:
        colours, slots = (), ()
    if slots != DEFAULT_SLOTS or any(c not in SLOT_COLOURS for c in colours):
        raise ConfigError(
            f"rewards.{name} scores the slot world's prompts only ('red at the top left, ... and yellow at the "
            f"bottom right': slots {', '.join(DEFAULT_SLOTS)} in that order; colours {', '.join(SLOT_COLOURS)}) and "
            f"cannot score {prompt!r}: train with a slot-world profile (components/profiles/toy.gin, "
            f"datasets.toy_slots) or use a critic of that world (rewards.toy_oracle)"
        )
    return colours, slots


def check_world(name: str, worlds: tuple[str, ...], world: str) -> None:
    """ConfigError when a critic trained on `worlds` is used on `world`."""
    if world not in worlds:
        raise ConfigError(
            f"rewards.{name} was trained on the {' / '.join(worlds)} world and cannot judge the {world} world; "
            f"use it with a slot-world profile (components/profiles/toy.gin) or pick a critic of the {world} "
            f"world (rewards.toy_oracle answers both)"
        )
