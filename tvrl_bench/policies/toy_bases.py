"""The toy policy's shipped bases and the world each checkpoint was trained on (its pretrain.json).

- `SHIPPED_BASES`: base name (the recipe that made it, tvrl_bench.recipes.pretrain_policy.RECIPES) -> folder.
- `folder_world(folder, recipe_name)`: the world and video size a checkpoint folder's pretrain.json states
  (world/declaration.py `checkpoint_world`; an older one's are inferred); None for a folder without pretrain.json
  (a checkpoint written by hand or by a test) and no recipe name; a ConfigError naming the file and the fix for
  one that cannot be read or names an unknown world.
- `configured_world(base, path)`: the same for the toy policy as a config sets it (`path` wins over `base`).
- `bases_of(world)`: the shipped bases trained on a world.
"""

from __future__ import annotations

import json
from pathlib import Path

from tvrl_bench.config.errors import ConfigError
from tvrl_bench.world.declaration import WORLDS, CheckpointWorld, checkpoint_world

ASSETS = Path(__file__).resolve().parent.parent / "assets"
SHIPPED_BASES = {name: ASSETS / ("toy_policy" if name == "v1" else f"toy_policy_{name}")
                 for name in ("v1", "v2", "v2_18k", "v2_noisy_captions", "slots_clean", "slots")}
METADATA = "pretrain.json"


def folder_world(folder: str | Path, recipe_name: str | None = None) -> CheckpointWorld | None:
    """The world a toy policy checkpoint folder was trained on (see the module docstring); ConfigError naming the
    file and the fix when its pretrain.json cannot be read or states no world or video size this package knows (a
    user's damaged or edited file, not a bug)."""
    path = Path(folder).expanduser() / METADATA
    if not path.is_file():
        return checkpoint_world(None, recipe_name)
    try:
        metadata = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(metadata, dict):
            raise ValueError(f"it holds a {type(metadata).__name__}, not a JSON object")
        return checkpoint_world(metadata, recipe_name)
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as exc:
        reason = str(exc).removeprefix(f"{METADATA}: ") if not isinstance(exc, KeyError) else f"no {exc} in video"
        raise ConfigError(
            f"{path}: the toy policy checkpoint's record cannot be read ({reason}); it must be the JSON object "
            f"`tvrl-bench prepare-toy` wrote (recipe.world one of {', '.join(map(repr, WORLDS))}, video frames, "
            "height and width): restore it from the checkpoint's backup, rebuild the checkpoint with `tvrl-bench "
            "prepare-toy --what policy --recipe NAME --out DIR`, or point policies.toy.path at another checkpoint"
        ) from None


def configured_world(base: str, path: str | None) -> CheckpointWorld | None:
    """The world of the checkpoint a toy policy loads: `path` when given, else the shipped base `base`."""
    if path:
        return folder_world(path)
    if base not in SHIPPED_BASES:
        return None  # refused by the policy's own checks
    return folder_world(SHIPPED_BASES[base], base)


def bases_of(world: str) -> list[str]:
    """The shipped bases trained on `world` ('slots' or 'sprites'), in SHIPPED_BASES's order."""
    return [name for name, folder in SHIPPED_BASES.items()
            if (found := folder_world(folder, name)) is not None and found.world == world]
