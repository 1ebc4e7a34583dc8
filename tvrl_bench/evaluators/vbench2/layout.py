"""Which video files VBench-2.0 reads: samples per prompt, file names, and the prompts each dimension evaluates.

Videos are grouped by their VBench-2.0 standard prompt (a variant such as an augmented prompt counts as the
standard prompt it was written from); a prompt's k-th video in the batch is its sample k, named
`<prompt[:180]>-<k>.mp4`. Every dimension of the prompt reads its first 3 samples (20 for Diversity), from a
folder of its own, as VBench-2.0's sampling guide lays videos out.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from tvrl_bench.evaluators.vbench2.catalog import PromptCatalog
from tvrl_bench.evaluators.vbench2.spec import DIMENSIONS, samples_needed, video_name


class LayoutError(ValueError):
    """The generated videos do not fit VBench-2.0's prompt suite; the message says which and the fix."""


@dataclass(frozen=True)
class VideoSlot:
    """Video `index` of the batch is sample `sample` of VBench-2.0 prompt `standard`, stored as `name`."""

    index: int
    standard: str
    sample: int
    name: str


@dataclass(frozen=True)
class Layout:
    """The slot of every video and, per dimension to run, the prompts it evaluates and the slots it reads."""

    slots: tuple[VideoSlot, ...]
    prompts_by_dimension: dict[str, tuple[str, ...]]
    reads: dict[str, tuple[VideoSlot, ...]]

    @property
    def dimensions(self) -> tuple[str, ...]:
        return tuple(self.prompts_by_dimension)

    def slot_of(self, dimension: str, file_name: str) -> VideoSlot | None:
        for slot in self.reads.get(dimension, ()):
            if slot.name == file_name:
                return slot
        return None

    def samples_of(self, dimension: str, standard: str) -> tuple[VideoSlot, ...]:
        return tuple(s for s in self.reads.get(dimension, ()) if s.standard == standard)


def plan_layout(prompts: list[str], catalog: PromptCatalog, dimensions: tuple[str, ...] = DIMENSIONS) -> Layout:
    """The layout of a batch whose video i was generated from prompts[i], evaluated on `dimensions`."""
    slots: list[VideoSlot] = []
    counts: dict[str, int] = {}
    unknown: list[str] = []
    for i, prompt in enumerate(prompts):
        standard = catalog.resolve(prompt)
        if standard is None:
            unknown.append(prompt)
            continue
        k = counts.get(standard, 0)
        counts[standard] = k + 1
        slots.append(VideoSlot(i, standard, k, video_name(standard, k)))
    if unknown:
        shown = "; ".join(repr(p[:80]) for p in unknown[:3])
        raise LayoutError(
            f"{len(unknown)} prompt(s) are not in VBench-2.0's prompt suite ({catalog.source}), e.g. {shown}. "
            "VBench-2.0 evaluates its own prompts only: evaluate on the datasets.vbench2 prompt set."
        )
    prompts_by_dimension: dict[str, tuple[str, ...]] = {}
    reads: dict[str, tuple[VideoSlot, ...]] = {}
    short: list[str] = []
    for dimension in dimensions:
        members = tuple(p for p in counts if dimension in catalog.dimensions_of(p))
        if not members:
            continue
        need = samples_needed(dimension)
        for p in members:
            if counts[p] < need:
                short.append(f"{dimension} needs {need} videos of {p[:80]!r}, got {counts[p]}")
        prompts_by_dimension[dimension] = members
        reads[dimension] = tuple(s for s in slots if s.standard in members and s.sample < need)
    if short:
        raise LayoutError(
            "VBench-2.0 reads 3 videos per prompt (20 for Diversity): " + "; ".join(short[:5])
            + (f"; and {len(short) - 5} more" if len(short) > 5 else "")
            + ". Generate that many samples per eval prompt (datasets.vbench2.repeat = True lists each prompt "
            "that many times)."
        )
    return Layout(tuple(slots), prompts_by_dimension, reads)


def link_or_copy(source: Path, target: Path) -> None:
    """Put `source` at `target` (replacing it): a hard link, or a copy where the file system refuses one."""
    if target.exists():
        target.unlink()
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
