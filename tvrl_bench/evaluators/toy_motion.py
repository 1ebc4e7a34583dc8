"""Does a toy policy make videos? Motion and coherence diagnostics read with the exact evaluator's perception.

- `motion_confusion`: for every motion check of every video, the motion asked against the motion detected for
  the sprite of that colour (its largest blob per frame, the evaluator's least-squares velocity); "absent" when
  the colour is seen in fewer than two frames. A base that makes videos detects the asked motion most often.
- `static_ranges`: for every sprite asked to stand still, how far its centroid wanders over the frames: the
  larger of its x and y ranges in pixels (inf when the sprite is seen in fewer than two frames).
- `path_deviations`: for every sprite a motion check names, whatever the motion asked, how far its centroid
  strays from the straight line through time that fits it best (least squares; the world moves every sprite at a
  constant velocity, so ground truth strays 0 px). This separates coherence from correctness: a static sprite
  drawn gliding steadily left has a large range but no deviation; one that jitters in place has both.

Both identify a sprite by colour only (sprites of a scene have distinct colours), so a sprite whose shape came out
wrong still counts: these measure motion and coherence, not shape.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
import torch

from tvrl_bench.evaluators.toy import Blob, ToyEvaluator
from tvrl_bench.world.checks import parse_check
from tvrl_bench.world.vocabulary import MOTIONS

DETECTED = (*MOTIONS, "other", "absent")


def sprite_track(blobs: list[Blob], colour: str) -> list[Blob]:
    """The largest blob of `colour` in each frame where there is one, in frame order."""
    largest: dict[int, Blob] = {}
    for b in blobs:
        if b.colour == colour and (b.frame not in largest or b.area > largest[b.frame].area):
            largest[b.frame] = b
    return [largest[f] for f in sorted(largest)]


@dataclass
class MotionReport:
    """confusion[(asked, detected)] -> count over motion checks; ranges: one per static sprite (px, inf if lost);
    deviations: one per motion-checked sprite (px from its best straight path, inf if seen in fewer than 3 frames)."""

    confusion: Counter
    ranges: list[float]
    deviations: list[float]

    def asked(self, motion: str) -> int:
        return sum(n for (a, _), n in self.confusion.items() if a == motion)

    def most_detected(self, motion: str) -> str | None:
        """The detection most frequent for `motion` asked (None if it was never asked)."""
        row = {d: n for (a, d), n in self.confusion.items() if a == motion}
        return max(row, key=lambda d: (row[d], d == motion)) if row else None

    def asked_is_most_detected(self) -> bool:
        """True when, for every motion asked at least once, the asked motion is its most frequent detection."""
        return all(self.most_detected(m) == m for m in MOTIONS if self.asked(m))

    def static_within(self, pixels: float = 1.0) -> float:
        """Fraction of static sprites whose centroid stays within `pixels` (nan when none was asked)."""
        return _fraction_within(self.ranges, pixels)

    def on_path_within(self, pixels: float = 1.0) -> float:
        """Fraction of motion-checked sprites that stay within `pixels` of a straight path (nan when none)."""
        return _fraction_within(self.deviations, pixels)

    def table(self) -> str:
        """The confusion table as text: one row per asked motion, columns DETECTED, then correct / asked."""
        lines = [f"{'asked':>8} | " + " ".join(f"{d:>6}" for d in DETECTED) + " | correct"]
        for m in MOTIONS:
            n = self.asked(m)
            if n:
                cells = " ".join(f"{self.confusion[(m, d)]:>6}" for d in DETECTED)
                lines.append(f"{m:>8} | {cells} | {self.confusion[(m, m)]}/{n}")
        return "\n".join(lines)


def motion_report(videos: torch.Tensor, checks: list[tuple[str, ...]], evaluator: ToyEvaluator | None = None) -> MotionReport:
    """Motion confusion and static-sprite ranges of videos[B, F, 3, H, W] in [0, 1] for their checks."""
    evaluator = evaluator or ToyEvaluator()
    confusion: Counter = Counter()
    ranges: list[float] = []
    deviations: list[float] = []
    for video, video_checks in zip(videos.detach().cpu().float().numpy(), checks):
        specs = [s for s in map(parse_check, video_checks) if s.kind == "motion"]
        if not specs:
            continue
        blobs = evaluator.blobs(evaluator.segment(video))
        for spec in specs:
            track = sprite_track(blobs, spec.colour)
            detected = evaluator.motion_of(evaluator.velocity(track)) if len(track) >= 2 else "absent"
            confusion[(spec.motion, detected)] += 1
            deviations.append(path_deviation(track))
            if spec.motion == "static":
                ranges.append(centroid_range(track))
    return MotionReport(confusion, ranges, deviations)


def _fraction_within(distances: list[float], pixels: float) -> float:
    """Fraction of `distances` (px) at most `pixels`; nan for none."""
    return float(np.mean([d <= pixels for d in distances])) if distances else math.nan


def centroid_range(track: list[Blob]) -> float:
    """max(x range, y range) in pixels of a track's centroids; inf for fewer than two frames."""
    if len(track) < 2:
        return math.inf
    xs, ys = [b.x for b in track], [b.y for b in track]
    return max(max(xs) - min(xs), max(ys) - min(ys))


def path_deviation(track: list[Blob]) -> float:
    """Largest distance in pixels of a track's centroids from their least-squares line through time,
    (x, y)(frame) = a + b * frame; inf for fewer than three frames (two points always fit a line)."""
    if len(track) < 3:
        return math.inf
    frames = np.array([b.frame for b in track], dtype=float)
    design = np.stack([np.ones_like(frames), frames], axis=1)
    points = np.array([[b.x, b.y] for b in track], dtype=float)
    fit, *_ = np.linalg.lstsq(design, points, rcond=None)
    return float(np.linalg.norm(points - design @ fit, axis=1).max())
