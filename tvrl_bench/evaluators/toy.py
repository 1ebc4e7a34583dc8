"""The exact toy evaluator (the toy world's VBench): segment, find, classify and track sprites, answer checks.

Per video[F, 3, H, W]:
1. Segment: each pixel takes the nearest named colour of the world (palette.ALL_COLOURS) if it lies within
   `tolerance` (Euclidean RGB); other pixels (blur, noise, in-between colours) are ignored.
2. Components: 4-connected components of each sprite colour in each frame (scipy.ndimage.label). A component
   is an object when it has at least `min_area` pixels and its box is at most `max_side_fraction` of the frame
   (a frame flooded with one colour is not an object).
3. Shapes from the component's box: square when the fill ratio is >= 0.88; triangle when the bottom half holds
   clearly more pixels than the top half; circle for a symmetric fill of 0.55-0.88; anything else is "other".
4. Answers: an object / colour / shape exists when it is seen in at least `min_frame_fraction` of the frames;
   motion is the least-squares velocity (px / frame) of the named object's centroid over the frames it is
   seen in: static below `min_speed`, otherwise the dominant axis when it is at least twice the other; the
   background is the named colour covering at least `background_fraction` of all pixels; the count is the most
   common number of objects per frame; a slot check (the slot world, world/slots.py) passes when the asked colour
   covers the most pixels of the slot's box, at least `min_area` of them, in at least `min_frame_fraction` of
   the frames (the other thresholds act on the sprite world only: `world_parameters`).
Metrics: per-check accuracy pooled per category (object, attribute, motion, background, count), `overall` = the
mean of the categories present. Raw records (one per video): index, prompt, score (the mean over the video's
categories of its own per-category accuracy), fraction (checks passed), and each check with its answer.
This module shares no code with the critics (only the palette, the vocabulary and the check parser).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from tvrl_bench.evaluators.base import Evaluator
from tvrl_bench.config.rules import Checks, number, positive
from tvrl_bench.registry import register
from tvrl_bench.world.checks import CATEGORIES, CheckSpec, parse_check
from tvrl_bench.world.palette import ALL_COLOURS, SPRITE_COLOURS, rgb
from tvrl_bench.world.slots import slot_box

_SPRITE_INDEX = {name: ALL_COLOURS.index(name) for name in SPRITE_COLOURS}


@dataclass(frozen=True)
class Blob:
    """One object found in one frame: colour, classified shape, area (px) and centroid (x, y) in pixels."""

    frame: int
    colour: str
    shape: str
    area: int
    x: float
    y: float


def classify_shape(mask: np.ndarray) -> str:
    """'square', 'circle', 'triangle' or 'other' for a component cropped to its box (mask[h, w] bool)."""
    h, w = mask.shape
    area = int(mask.sum())
    fill = area / (h * w)
    if not 0.7 <= h / w <= 1.0 / 0.7:
        return "other"
    rows = mask.sum(axis=1)
    top, bottom = rows[: h // 2].sum(), rows[(h + 1) // 2 :].sum()
    asymmetry = (bottom - top) / area
    if fill >= 0.88:
        return "square"
    if asymmetry >= 0.2 and fill <= 0.8:
        return "triangle"
    if 0.55 <= fill < 0.88 and abs(asymmetry) < 0.15:
        return "circle"
    return "other"


@register("evaluators", "toy")
class ToyEvaluator(Evaluator):
    """Exact toy-world evaluator: palette segmentation, components, shapes, tracks; per-category accuracy."""

    categories = CATEGORIES
    worlds = ("slots", "sprites")
    world_parameters = {"sprites": ("max_side_fraction", "min_speed", "background_fraction")}

    CHECKS = Checks(
        tolerance=positive("0.3"),
        min_frame_fraction=number(0, 1, low_open=True, example="0.5"),
        background_fraction=number(0, 1, low_open=True, example="0.5"),
    )

    def __init__(
        self,
        tolerance: float = 0.3,
        min_area: int = 6,
        max_side_fraction: float = 0.75,
        min_frame_fraction: float = 0.5,
        min_speed: float = 0.4,
        background_fraction: float = 0.5,
    ) -> None:
        self.tolerance = tolerance
        self.min_area = min_area
        self.max_side_fraction = max_side_fraction
        self.min_frame_fraction = min_frame_fraction
        self.min_speed = min_speed
        self.background_fraction = background_fraction
        self._palette = np.array([rgb(n) for n in ALL_COLOURS], dtype=np.float32)

    # --- perception -------------------------------------------------------------------------------------------
    def segment(self, video: np.ndarray) -> np.ndarray:
        """labels[F, H, W] int: index into ALL_COLOURS of each pixel's colour, -1 where none is within tolerance."""
        pixels = np.moveaxis(video, 1, -1)  # [F, H, W, 3]
        d2 = ((pixels[..., None, :] - self._palette) ** 2).sum(-1)  # [F, H, W, K]
        nearest = np.nan_to_num(d2, nan=np.inf).argmin(-1)
        close = np.take_along_axis(d2, nearest[..., None], -1)[..., 0] <= self.tolerance**2
        return np.where(close, nearest, -1)

    def blobs(self, labels: np.ndarray) -> list[Blob]:
        """Objects (valid components of sprite colours) in every frame of a segmented video."""
        from scipy import ndimage

        frames, height, width = labels.shape
        structure = np.zeros((3, 3, 3), dtype=bool)
        structure[1] = ndimage.generate_binary_structure(2, 1)  # 4-connected within a frame, never across frames
        found = []
        for colour, index in _SPRITE_INDEX.items():
            mask = labels == index
            if mask.sum() < self.min_area:
                continue
            components, n = ndimage.label(mask, structure=structure)
            for k, box in enumerate(ndimage.find_objects(components), start=1):
                frame_slice, rows, cols = box
                crop = components[box][0] == k
                h, w = crop.shape
                area = int(crop.sum())
                if area < self.min_area or h > self.max_side_fraction * height or w > self.max_side_fraction * width:
                    continue
                ys, xs = np.nonzero(crop)
                found.append(Blob(frame_slice.start, colour, classify_shape(crop), area,
                                  float(xs.mean() + cols.start + 0.5), float(ys.mean() + rows.start + 0.5)))
        return found

    # --- answers ----------------------------------------------------------------------------------------------
    def _seen(self, frames_with: set[int], frames: int) -> bool:
        return len(frames_with) >= max(1, self.min_frame_fraction * frames)

    def velocity(self, track: list[Blob]) -> tuple[float, float]:
        """Least-squares centroid velocity (vx, vy) in px / frame of a track (one blob per frame)."""
        t = np.array([b.frame for b in track], dtype=np.float64)
        xy = np.array([[b.x, b.y] for b in track], dtype=np.float64)
        tc = t - t.mean()
        slope = (tc[:, None] * (xy - xy.mean(0))).sum(0) / max((tc**2).sum(), 1e-9)
        return float(slope[0]), float(slope[1])

    def motion_of(self, velocity: tuple[float, float]) -> str:
        """'static', 'left', 'right', 'up', 'down' or 'other' for a velocity (image axes, y down)."""
        vx, vy = velocity
        if max(abs(vx), abs(vy)) < self.min_speed:
            return "static"
        if abs(vx) >= 2 * abs(vy):
            return "right" if vx > 0 else "left"
        if abs(vy) >= 2 * abs(vx):
            return "down" if vy > 0 else "up"
        return "other"

    def answer(self, spec: CheckSpec, labels: np.ndarray, blobs: list[Blob]) -> bool:
        """The evaluator's yes (True) / no answer to one check for a segmented video and its objects."""
        frames = labels.shape[0]
        if spec.kind == "background":
            return float((labels == ALL_COLOURS.index(spec.background)).mean()) >= self.background_fraction
        if spec.kind == "count":
            per_frame = Counter(b.frame for b in blobs)
            counts = Counter(per_frame.get(f, 0) for f in range(frames))
            return counts.most_common(1)[0][0] == spec.count
        if spec.kind == "slot":
            return self._slot_colour_seen(spec, labels)
        if spec.kind == "colour":
            return self._seen({b.frame for b in blobs if b.colour == spec.colour}, frames)
        if spec.kind == "shape":
            return self._seen({b.frame for b in blobs if b.shape == spec.shape}, frames)
        named = [b for b in blobs if b.colour == spec.colour and b.shape == spec.shape]
        if spec.kind == "object":
            return self._seen({b.frame for b in named}, frames)
        if spec.kind == "motion":
            largest: dict[int, Blob] = {}
            for b in named:
                if b.frame not in largest or b.area > largest[b.frame].area:
                    largest[b.frame] = b
            if not self._seen(set(largest), frames) or len(largest) < 2:
                return False
            return self.motion_of(self.velocity(sorted(largest.values(), key=lambda b: b.frame))) == spec.motion
        raise ValueError(f"evaluators.toy cannot answer a '{spec.kind}' check")

    def _slot_colour_seen(self, spec: CheckSpec, labels: np.ndarray) -> bool:
        """Whether the asked colour is the slot's colour: the sprite colour covering the most of the slot's pixels,
        at least min_area of them, in at least min_frame_fraction of the frames (labels[F, H, W] segmented)."""
        frames, height, width = labels.shape
        x0, y0, x1, y1 = slot_box(spec.slot, height, width)
        box = labels[:, y0:y1, x0:x1].reshape(frames, -1)
        indices = np.array(list(_SPRITE_INDEX.values()))
        counts = (box[:, :, None] == indices).sum(1)  # [F, C]: pixels of each sprite colour
        asked = list(_SPRITE_INDEX).index(spec.colour)
        wins = (counts.argmax(1) == asked) & (counts[:, asked] >= self.min_area)
        return self._seen(set(np.nonzero(wins)[0].tolist()), frames)

    def verdicts(self, video: np.ndarray, specs: list[CheckSpec]) -> list[bool]:
        """The yes (True) / no answers to `specs` for one video[F, 3, H, W] (a float array in [0, 1])."""
        labels = self.segment(video)
        blobs = self.blobs(labels)
        return [self.answer(spec, labels, blobs) for spec in specs]

    # --- the contract -----------------------------------------------------------------------------------------
    def evaluate_detailed(self, videos: torch.Tensor, prompts: list[str],
                          checks: list[tuple[str, ...]]) -> tuple[dict[str, float], list[dict[str, Any]]]:
        """(metrics, raw records) for videos[B, F, 3, H, W] in [0, 1] (see the module docstring)."""
        if videos.dim() != 5 or videos.shape[2] != 3:
            raise ValueError(f"evaluators.toy expects videos[B, F, 3, H, W], got shape {tuple(videos.shape)}")
        if not len(prompts) == len(checks) == videos.shape[0]:
            raise ValueError(
                f"evaluators.toy: {videos.shape[0]} videos, {len(prompts)} prompts and {len(checks)} check lists; "
                "give one prompt and one check list per video"
            )
        array = videos.detach().to("cpu", torch.float32).numpy()
        pooled: dict[str, list[bool]] = {c: [] for c in CATEGORIES}
        records = []
        for i, (video, prompt, video_checks) in enumerate(zip(array, prompts, checks)):
            specs = []
            for text in video_checks:
                try:
                    specs.append(parse_check(text))
                except ValueError as exc:
                    raise ValueError(f"evaluators.toy, video {i} ({prompt!r}): {exc}") from None
            answers = self.verdicts(video, specs)
            mine: dict[str, list[bool]] = {}
            for spec, yes in zip(specs, answers):
                pooled[spec.category].append(yes)
                mine.setdefault(spec.category, []).append(yes)
            per_category = {c: float(np.mean(v)) for c, v in mine.items()}
            records.append(
                {
                    "index": i,
                    "prompt": prompt,
                    "score": float(np.mean(list(per_category.values()))) if per_category else 0.0,
                    "fraction": float(np.mean(answers)) if answers else 0.0,
                    "categories": per_category,
                    "checks": [
                        {"check": t, "category": s.category, "answer": "yes" if a else "no", "passed": bool(a)}
                        for t, s, a in zip(video_checks, specs, answers)
                    ],
                }
            )
        metrics = {c: float(np.mean(v)) for c, v in pooled.items() if v}
        metrics = {"overall": float(np.mean(list(metrics.values()))) if metrics else 0.0, **metrics}
        return metrics, records
