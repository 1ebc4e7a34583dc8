"""`datasets.vbench2`: VBench-2.0's prompt suite (by path) as eval prompts.

Accepted paths (formats: tvrl_bench.evaluators.vbench2.catalog):
- the VBench-2.0 folder of a Vchitect/VBench checkout (or the checkout's root): `vbench2/VBench2_full_info.json`,
  plus the augmented / Chinese prompt files for `variant`;
- a JSON file in `VBench2_full_info.json`'s or `prompts/meta_info/<Dimension>.json`'s format (a list of
  {"prompt_en", "dimension", "auxiliary_info"}), or `prompts/VBench2_full_text_info.json`'s ({prompt: {"caption",
  "dimension": [...]}});
- a `.txt` prompt list (`prompts/prompt/<Dimension>.txt`: the file's stem names the dimension; any other
  name, e.g. `VBench2_full_text.txt`, gives prompts of unknown dimension).
Every prompt goes to the eval split (train is empty; pair it with a training set through datasets.pair).
Checks: VBench-2.0's own yes/no questions where its auxiliary info has them (Dynamic_Attribute,
Dynamic_Spatial_Relationship, Material, Mechanics, Motion_Rationality, Thermotics: "Is the dog on the left of
the table? (yes or no)" becomes "Is the dog on the left of the table?"), replaced by a checks JSONL's where that
lists the prompt.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Sequence

from tvrl_bench.datasets.rows import PromptFileError
from tvrl_bench.datasets.splits import read_checks_cache
from tvrl_bench.evaluators.vbench2.catalog import (
    CatalogEntry,
    load_catalog,
    read_full_info,
    read_prompt_lines,
    variant_prompts,
    vbench2_folder,
)
from tvrl_bench.evaluators.vbench2.spec import DIMENSIONS, canonical_dimension, samples_needed
from tvrl_bench.prompts import PromptItem, PromptSet
from tvrl_bench.config.rules import Checks, checked, one_of
from tvrl_bench.registry import register

CHECK_MODES = ("auxiliary", "none")
_YES_NO = "(yes or no)"


def suite_entries(path: str | Path) -> list[CatalogEntry]:
    """(prompt, dimension, auxiliary info) entries of any accepted path (see the module docstring)."""
    path = Path(path).expanduser()
    if path.is_dir():
        return list(load_catalog(path).entries)
    if not path.is_file():
        raise PromptFileError(f"VBench-2.0 prompts not found: {path} (give the VBench-2.0 folder or one of its prompt files)")
    if path.suffix.lower() == ".txt":
        dimension = canonical_dimension(path.stem)
        return [CatalogEntry(p, dimension or "", None) for p in read_prompt_lines(path)]
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            return _text_info_entries(data, path)
        return read_full_info(path)
    raise PromptFileError(f"{path}: VBench-2.0 prompts come as a folder, a .json info file or a .txt prompt list")


def _text_info_entries(data: dict[str, Any], path: Path) -> list[CatalogEntry]:
    entries = []
    for prompt, info in data.items():
        dims = info.get("dimension") if isinstance(info, dict) else None
        if not isinstance(dims, list):
            raise PromptFileError(f"{path}: entry {prompt[:60]!r} needs a 'dimension' list (VBench2_full_text_info.json's format)")
        for name in dims:
            dimension = canonical_dimension(str(name))
            if dimension is None:
                raise PromptFileError(f"{path}: entry {prompt[:60]!r}: unknown dimension '{name}'")
            entries.append(CatalogEntry(prompt.strip(), dimension, None))
    return entries


def auxiliary_checks(auxiliary_info: Any) -> tuple[str, ...]:
    """VBench-2.0's yes/no questions in an entry's auxiliary info, without the trailing "(yes or no)"."""
    if not isinstance(auxiliary_info, list):
        return ()
    checks = []
    for item in auxiliary_info:
        if isinstance(item, str) and "?" in item:
            text = item.strip()
            if text.lower().endswith(_YES_NO):
                text = text[: -len(_YES_NO)].rstrip()
            checks.append(text)
    return tuple(checks)


@register("datasets", "vbench2")
@checked(Checks(checks=one_of(*CHECK_MODES)))
def vbench2_prompt_set(
    path: str,
    dimensions: Sequence[str] = (),
    per_dimension: int | None = None,
    seed: int = 0,
    variant: str = "en",
    checks: str = "auxiliary",
    checks_path: str | None = None,
    repeat: bool = False,
    name: str = "vbench2",
) -> PromptSet:
    """VBench-2.0's prompts (by path) as eval prompts, optionally a seeded subset per dimension.

    path: the VBench-2.0 folder or a prompt file of it; dimensions: keep prompts of these dimensions (default:
    all); per_dimension: at most this many prompts per dimension, drawn with `seed`; variant: the text the
    generator gets: "en" (standard), "aug" (VBench-2.0's augmented prompts), "wanx" (Wan's), "ch" (Chinese), the
    variants needing the folder; checks: "auxiliary" (VBench-2.0's yes/no questions) or "none"; checks_path: a
    checks JSONL (`tvrl-bench decompose`) that replaces them; repeat: list each prompt as many times as
    VBench-2.0 samples it (3; 20 for Diversity prompts), for a trainer that generates one video per eval item.
    """
    entries = suite_entries(path)
    wanted = [_dimension(d) for d in dimensions] or list(DIMENSIONS)
    by_prompt: dict[str, list[CatalogEntry]] = {}
    for e in entries:
        by_prompt.setdefault(e.prompt, []).append(e)
    known_dims = any(e.dimension for e in entries)
    chosen = [p for p, es in by_prompt.items() if not known_dims or any(e.dimension in wanted for e in es)]
    if per_dimension is not None:
        if not known_dims:
            raise PromptFileError(f"{path}: per_dimension needs prompts of known dimension (use the VBench-2.0 folder)")
        rng, keep = random.Random(seed), set()
        for dimension in wanted:
            members = [p for p in chosen if any(e.dimension == dimension for e in by_prompt[p])]
            keep.update(rng.sample(members, min(per_dimension, len(members))))
        chosen = [p for p in chosen if p in keep]
    if not chosen:
        raise PromptFileError(f"{path}: no VBench-2.0 prompt of dimensions {', '.join(wanted)}")
    texts = _variant_texts(path, variant)
    cache = read_checks_cache(checks_path) if checks_path else {}
    items = []
    for prompt in chosen:
        text = texts.get(prompt, prompt) if texts is not None else prompt
        if texts is not None and prompt not in texts:
            raise PromptFileError(f"{path}: no '{variant}' variant of the prompt {prompt[:80]!r}")
        own = tuple(dict.fromkeys(c for e in by_prompt[prompt] for c in auxiliary_checks(e.auxiliary_info)))
        item = PromptItem(text, cache.get(text, own if checks == "auxiliary" else ()))
        copies = max((samples_needed(e.dimension) for e in by_prompt[prompt]), default=3) if repeat else 1
        items += [item] * copies
    return PromptSet(name, (), tuple(items))


def _dimension(name: str) -> str:
    dimension = canonical_dimension(str(name))
    if dimension is None:
        raise ValueError(f"datasets.vbench2.dimensions: unknown dimension '{name}' (known: {', '.join(DIMENSIONS)})")
    return dimension


def _variant_texts(path: str | Path, variant: str) -> dict[str, str] | None:
    """standard prompt -> generation text for a non-standard variant; None for the standard prompts."""
    if variant == "en":
        return None
    if not Path(path).expanduser().is_dir():
        raise PromptFileError(f"{path}: variant '{variant}' needs the VBench-2.0 folder (its prompt_aug / prompt_ch files)")
    return variant_prompts(vbench2_folder(path), variant)
