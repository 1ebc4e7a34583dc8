"""VBench-2.0's prompt suite: which dimensions each prompt tests, its auxiliary info, and prompt variants.

Read from a VBench-2.0 checkout (the `VBench-2.0` folder of Vchitect/VBench):
- `vbench2/VBench2_full_info.json`: a list of `{"prompt_en": str, "dimension": [str], "auxiliary_info": ...}`,
  one entry per (prompt, dimension); `auxiliary_info` (VQA questions, camera-motion label, ...) is present for the
  dimensions that need it. The same prompt can appear under several dimensions.
- `prompts/meta_info/<Dimension>.json`: the same entries for one dimension, with "dimension" a string.
- `prompts/prompt/<Dimension>.txt`: one standard prompt per line; `prompts/prompt_aug/VBench2_aug_prompt/`,
  `prompts/prompt_aug/wanx_aug_prompt/` and `prompts/prompt_ch/VBench2_ch_prompt/` hold line-aligned augmented
  and Chinese variants. VBench-2.0 names videos by the standard prompt whichever variant generated them, so the
  catalog maps every variant back to its standard prompt (`resolve`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvrl_bench.evaluators.vbench2.spec import DIMENSIONS, canonical_dimension

FULL_INFO = Path("vbench2") / "VBench2_full_info.json"
STANDARD_PROMPTS = Path("prompts") / "prompt"
# variant name -> folder of line-aligned prompt files, relative to the VBench-2.0 folder
VARIANTS: dict[str, Path] = {
    "en": STANDARD_PROMPTS,
    "aug": Path("prompts") / "prompt_aug" / "VBench2_aug_prompt",
    "wanx": Path("prompts") / "prompt_aug" / "wanx_aug_prompt",
    "ch": Path("prompts") / "prompt_ch" / "VBench2_ch_prompt",
}


class CatalogError(ValueError):
    """A VBench-2.0 prompt file or folder is missing or malformed; the message names it and the fix."""


@dataclass(frozen=True)
class CatalogEntry:
    """One (standard prompt, dimension) entry of VBench-2.0's prompt suite, with its auxiliary info (or None)."""

    prompt: str
    dimension: str
    auxiliary_info: Any = None

    def as_full_info(self) -> dict[str, Any]:
        """The entry in `VBench2_full_info.json`'s format."""
        entry: dict[str, Any] = {"prompt_en": self.prompt, "dimension": [self.dimension]}
        if self.auxiliary_info is not None:
            entry["auxiliary_info"] = self.auxiliary_info
        return entry


@dataclass
class PromptCatalog:
    """VBench-2.0's prompts by dimension; `aliases` maps variant prompts (augmented, Chinese) to standard ones."""

    entries: tuple[CatalogEntry, ...]
    source: str
    aliases: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._dimensions: dict[str, list[str]] = {}
        for e in self.entries:
            self._dimensions.setdefault(e.prompt, []).append(e.dimension)

    @property
    def prompts(self) -> list[str]:
        """Standard prompts, each once, in suite order."""
        return list(self._dimensions)

    def resolve(self, prompt: str) -> str | None:
        """The standard prompt that names videos of `prompt` (itself, or the one a variant was written from)."""
        text = prompt.strip()
        if text in self._dimensions:
            return text
        return self.aliases.get(text)

    def dimensions_of(self, prompt: str) -> tuple[str, ...]:
        """The dimensions a standard prompt is evaluated on (in suite order); () for an unknown prompt."""
        return tuple(self._dimensions.get(prompt, ()))

    def subset(self, dimension: str, prompts: set[str] | None = None) -> list[dict[str, Any]]:
        """The `VBench2_full_info.json` entries of `dimension`, limited to `prompts` when given."""
        return [
            e.as_full_info()
            for e in self.entries
            if e.dimension == dimension and (prompts is None or e.prompt in prompts)
        ]


def vbench2_folder(path: str | Path) -> Path:
    """The VBench-2.0 folder (holding evaluate.py and vbench2/) of a Vchitect/VBench checkout or of itself."""
    path = Path(path).expanduser()
    for candidate in (path, path / "VBench-2.0"):
        if (candidate / "evaluate.py").is_file() and (candidate / "vbench2").is_dir():
            return candidate.resolve()
    raise CatalogError(
        f"{path} is not a VBench-2.0 checkout: expected evaluate.py and vbench2/ in it or in {path / 'VBench-2.0'}. "
        "Clone Vchitect/VBench (or run `tvrl-bench vbench2 setup`) and pass its VBench-2.0 folder."
    )


def read_full_info(path: str | Path) -> list[CatalogEntry]:
    """Entries of a file in `VBench2_full_info.json`'s (or `prompts/meta_info/*.json`'s) format."""
    path = Path(path)
    if not path.is_file():
        raise CatalogError(f"VBench-2.0 prompt info file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CatalogError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, list):
        raise CatalogError(
            f"{path}: expected a JSON list of {{'prompt_en', 'dimension', 'auxiliary_info'}} entries "
            "(VBench2_full_info.json's format)"
        )
    entries = []
    for i, item in enumerate(data):
        where = f"{path}: entry {i}"
        if not isinstance(item, dict) or not isinstance(item.get("prompt_en"), str):
            raise CatalogError(f"{where}: each entry needs a string 'prompt_en'")
        dims = item.get("dimension")
        dims = [dims] if isinstance(dims, str) else dims
        if not isinstance(dims, list) or not dims:
            raise CatalogError(f"{where}: 'dimension' must be a dimension name or a list of them")
        for name in dims:
            dimension = canonical_dimension(str(name))
            if dimension is None:
                raise CatalogError(f"{where}: unknown dimension '{name}' (known: {', '.join(DIMENSIONS)})")
            entries.append(CatalogEntry(item["prompt_en"].strip(), dimension, item.get("auxiliary_info")))
    return entries


def read_prompt_lines(path: str | Path) -> list[str]:
    """The non-empty lines of a VBench-2.0 prompt .txt file, stripped."""
    path = Path(path)
    if not path.is_file():
        raise CatalogError(f"VBench-2.0 prompt file not found: {path}")
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def variant_prompts(folder: Path, variant: str) -> dict[str, str]:
    """standard prompt -> its `variant` text, from the line-aligned per-dimension files of a VBench-2.0 folder."""
    if variant not in VARIANTS:
        raise CatalogError(f"unknown VBench-2.0 prompt variant '{variant}'; choose one of {', '.join(VARIANTS)}")
    mapping: dict[str, str] = {}
    for dimension in DIMENSIONS:
        standard_file = folder / STANDARD_PROMPTS / f"{dimension}.txt"
        variant_file = folder / VARIANTS[variant] / f"{dimension}.txt"
        if not standard_file.is_file() or not variant_file.is_file():
            continue
        standard, texts = read_prompt_lines(standard_file), read_prompt_lines(variant_file)
        if len(standard) != len(texts):
            raise CatalogError(
                f"{variant_file} has {len(texts)} prompts but {standard_file} has {len(standard)}; the files must "
                "be line-aligned (restore them from the VBench-2.0 checkout)"
            )
        mapping.update(zip(standard, texts))
    return mapping


def load_catalog(path: str | Path) -> PromptCatalog:
    """The catalog of a VBench-2.0 folder (full info plus every variant's aliases) or of a full-info JSON file."""
    path = Path(path).expanduser()
    if path.is_file():
        return PromptCatalog(tuple(read_full_info(path)), str(path))
    folder = vbench2_folder(path)
    entries = read_full_info(folder / FULL_INFO)
    aliases: dict[str, str] = {}
    for variant in VARIANTS:
        if variant != "en":
            aliases.update({text: standard for standard, text in variant_prompts(folder, variant).items()})
    return PromptCatalog(tuple(entries), str(folder / FULL_INFO), aliases)
