"""`toy_oracle`: the exact, differentiable critic of the toy world (the default reward and credit model).

For each (video[F, 3, H, W], question) pair it returns log p(Yes) in [log(floor), 0] (`score = 'prob'`: p(Yes)
itself, in [floor, 1]), built from:
- soft colour masks: closeness k(x) = exp(-|x - c|^2 / colour_width^2 - |x - c|_1 / l1_scale) to the
  question's colour c, softly thresholded, m = sigmoid(mask_sharpness (k - mask_level)) rescaled so that
  k = 0 and 1 map to 0 and 1: a pixel about 0.3 RGB away is half in (like the evaluator's tolerance).
  Shape-only questions use the soft union 1 - prod(1 - m_k) of the sprite colours, background questions the
  background's mask. Palette colours are at least 0.5 apart, so a mask ignores the other named colours; the
  L1 term keeps the gradient non-zero on pixels that hit a palette colour exactly (clamped generator outputs
  do), where a Gaussian would be flat.
- where a shape is: the mask is cross-correlated with a template of every shape and size of the difficulty
  (+1 on its pixels, -1 on the rest of its box and on a 1-pixel ring); the best window of each shape is picked
  without gradient, and the evidence there is recomputed with gradient.
- what shape it is, `shape_measure = 'fill'` (the default, calibrated on the base policy's own blurry rollouts):
  a blob of at least min_area (the mask's sum over the box), bounded by the box (the ring's mean mask below
  ring_level), spanning it (each of the box's four edges has a pixel above reach_level) and with a fill ratio
  (the box's mean mask) in the shape's band: a square fills its box (>= 0.9), a circle 0.55-0.9 of it
  symmetrically (a 5 px circle fills 0.84), a triangle at most 0.8 with its mass in the bottom half. Each
  condition is a sigmoid, so p_t has slope on both sides of every boundary; colour questions need only the
  bounded blob. `shape_measure = 'template'` keeps the earlier measure: structure = (mask inside - mask
  outside) / (area * amplitude) with amplitude = sum m^2 / sum m over the shape's pixels, held constant in
  backward, p_t = sigmoid(sharpness (structure - threshold)) * sigmoid(amplitude_sharpness (amplitude -
  amplitude_threshold)); on ground truth it is exact, but it scores nearly every blurry rollout at its floor.
  Existence is the mean of p_t over frames (the evaluator asks for half of them).
- soft motion: the mask's centroid per frame, a least-squares velocity weighted by p_t, and a softmax over the
  motions with logits motion_sharpness * (speed along the motion - speed / 2) (static: speed / 2 - the largest
  axis speed); a motion question's probability is existence x p(motion).
- background: the fraction of pixels in the background's mask, through a sigmoid; count: the sum over sprite
  colours of their existence, scored with a Gaussian around the asked number.
Probabilities are combined in log space, so saturated sigmoids still pass (tiny) gradients. A question's
gradient flows only through its own colour's mask (for shapes, through the best-matching window): "Is there a
red circle?" puts its gradient on the red circle, not on the blue square. All pairs go through one batched
forward; only the question text is parsed per pair. It shares no code with the evaluator. The templates are
sized for the difficulty it is built with (`difficulty`, or `min_size` / `max_size` / `shapes`): set it to the
dataset's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import torch
import torch.nn.functional as F

from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward
from tvrl_bench.world.checks import CheckSpec, parse_check
from tvrl_bench.world.difficulty import from_knobs
from tvrl_bench.world.palette import ALL_COLOURS, SPRITE_COLOURS, palette_tensor
from tvrl_bench.world.shapes import shape_mask
from tvrl_bench.world.vocabulary import MOTION_STEPS, MOTIONS

_KINDS = ("object", "colour", "shape", "motion", "background", "count")
_ANY_SPRITE = len(ALL_COLOURS)  # mask row: the union of the sprite colours


@lru_cache(maxsize=4096)
def _parse(question: str) -> CheckSpec:
    return parse_check(question)


def _log_sigmoid(z: torch.Tensor) -> torch.Tensor:
    """log sigmoid(z) as -softplus(-z): unlike F.logsigmoid in float32, its gradient sigmoid(-z) stays
    non-zero (if tiny) when z is large, so a question its video already answers still has a credit map."""
    return -F.softplus(-z)


@dataclass
class Evidence:
    """Shape evidence at the best window of each shape, each field [N, F, S] (see ToyOracle.shape_evidence)."""

    response: torch.Tensor
    structure: torch.Tensor
    amplitude: torch.Tensor
    fill: torch.Tensor
    ring: torch.Tensor
    reach: torch.Tensor
    mass: torch.Tensor
    asymmetry: torch.Tensor


def shape_templates(shapes: tuple[str, ...], sizes: tuple[int, ...]) -> torch.Tensor:
    """[len(shapes) * len(sizes), k, k] templates (k = max size + 2), shape-major, the shape at offset (1, 1):
    +1 on the shape's pixels, -1 on the rest of its box and on the 1-pixel ring around the box, 0 elsewhere."""
    k = max(sizes) + 2
    out = torch.zeros(len(shapes) * len(sizes), k, k)
    for i, shape in enumerate(shapes):
        for j, size in enumerate(sizes):
            t = torch.full((size + 2, size + 2), -1.0)
            t[1:-1, 1:-1] = torch.where(shape_mask(shape, size), 1.0, -1.0)
            out[i * len(sizes) + j, : size + 2, : size + 2] = t
    return out


def box_parts(shapes: tuple[str, ...], sizes: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    """(boxes, rings, edges, tops, bottoms) laid out like shape_templates: boxes[T, k, k], the size x size box at
    offset (1, 1); rings[T, k, k], the 1-pixel ring around it; edges[T, 4, k, k], the box's own first and last
    rows and columns; tops and bottoms[T, k, k], the box's top and bottom halves."""
    k = max(sizes) + 2
    n = len(shapes) * len(sizes)
    boxes, rings, tops, bottoms = (torch.zeros(n, k, k) for _ in range(4))
    edges = torch.zeros(n, 4, k, k)
    for i in range(len(shapes)):
        for j, size in enumerate(sizes):
            t, last = i * len(sizes) + j, size
            boxes[t, 1 : size + 1, 1 : size + 1] = 1
            rings[t, : size + 2, : size + 2] = 1
            rings[t] -= boxes[t]
            edges[t, 0, 1, 1 : size + 1] = edges[t, 1, last, 1 : size + 1] = 1
            edges[t, 2, 1 : size + 1, 1] = edges[t, 3, 1 : size + 1, last] = 1
            tops[t, 1 : 1 + size // 2, 1 : size + 1] = 1
            bottoms[t, 1 + (size + 1) // 2 : size + 1, 1 : size + 1] = 1
    return boxes, rings, edges, tops, bottoms


# Fill-ratio bands (low, high) of each shape's box: a square fills its box, a circle 0.55-0.9 of it (a 5 px circle
# 0.84, so the boundary sits between it and a square's 1.0), a triangle at most 0.8 (its mass in the bottom half).
FILL_BANDS = {"square": (0.9, None), "circle": (0.55, 0.9), "triangle": (None, 0.8)}


@register("rewards", "toy_oracle")
class ToyOracle(Reward):
    """Exact differentiable toy critic: soft colour masks, shape boxes, centroid motion; log p(Yes) (or p)."""

    def __init__(
        self,
        difficulty: str = "default",
        min_size: int | None = None,
        max_size: int | None = None,
        shapes: tuple[str, ...] | None = None,
        speed: int | None = None,
        colour_width: float = 0.3,
        l1_scale: float = 2.0,
        mask_level: float = 0.3,
        mask_sharpness: float = 12.0,
        shape_threshold: float = 0.92,
        colour_threshold: float = 0.6,
        sharpness: float = 50.0,
        amplitude_threshold: float = 0.3,
        amplitude_sharpness: float = 30.0,
        background_threshold: float = 0.35,
        background_sharpness: float = 20.0,
        motion_sharpness: float = 12.0,
        count_width: float = 0.35,
        floor: float = 1e-4,
        shape_measure: str = "fill",
        fill_sharpness: float = 60.0,
        ring_level: float = 0.3,
        ring_sharpness: float = 15.0,
        reach_level: float = 0.5,
        score: str = "log_prob",
        min_area: float = 6.0,
        area_sharpness: float = 2.0,
    ) -> None:
        super().__init__()
        d = from_knobs(difficulty, min_size=min_size, max_size=max_size, shapes=shapes, speed=speed)
        positive = dict(colour_width=colour_width, l1_scale=l1_scale, mask_sharpness=mask_sharpness,
                        sharpness=sharpness, amplitude_sharpness=amplitude_sharpness,
                        background_sharpness=background_sharpness, motion_sharpness=motion_sharpness)
        if min(positive.values()) <= 0:
            raise ValueError(f"rewards.toy_oracle: these must be > 0: {positive}")
        if shape_measure not in ("fill", "template"):
            raise ValueError(f"rewards.toy_oracle.shape_measure must be 'fill' or 'template', got {shape_measure!r}")
        if min(fill_sharpness, ring_sharpness, area_sharpness) <= 0:
            raise ValueError("rewards.toy_oracle: fill_sharpness, ring_sharpness and area_sharpness must be > 0")
        if score not in ("log_prob", "prob"):
            raise ValueError(f"rewards.toy_oracle.score must be 'log_prob' or 'prob', got {score!r}")
        if not 0 < floor < 1:
            raise ValueError(f"rewards.toy_oracle: need 0 < floor < 1, got {floor}")
        self.frames, self.size = d.frames, (d.height, d.width)  # the world it is made for (any size is scored)
        self.shapes = d.shapes
        self.sizes = tuple(range(d.min_size, d.max_size + 1))
        self.speed = float(d.speed)
        self.colour_width = colour_width
        self.l1_scale = l1_scale
        self.mask_level = mask_level
        self.mask_sharpness = mask_sharpness
        self.shape_threshold = shape_threshold
        self.colour_threshold = colour_threshold
        self.sharpness = sharpness
        self.amplitude_threshold = amplitude_threshold
        self.amplitude_sharpness = amplitude_sharpness
        self.background_threshold = background_threshold
        self.background_sharpness = background_sharpness
        self.motion_sharpness = motion_sharpness
        self.count_width = count_width
        self.floor = floor
        self.score_space = score  # (not self.score: that is the reward contract's method)
        self.floor_score = math.log(floor) if score == "log_prob" else floor
        self.shape_measure = shape_measure
        self.fill_sharpness, self.ring_level, self.ring_sharpness = fill_sharpness, ring_level, ring_sharpness
        self.min_area, self.area_sharpness = min_area, area_sharpness
        self.reach_level = reach_level
        self.padding = d.max_size - d.min_size + 1  # lets every template size sit on any sprite, ring included
        self.register_buffer("palette", palette_tensor(), persistent=False)  # [K, 3]
        templates = shape_templates(self.shapes, self.sizes)
        self.register_buffer("templates", templates, persistent=False)  # [T, k, k]
        self.register_buffer("areas", (templates > 0).sum((-2, -1)).float(), persistent=False)  # [T]
        for name, value in zip(("boxes", "rings", "edges", "tops", "bottoms"), box_parts(self.shapes, self.sizes)):
            self.register_buffer(name, value, persistent=False)
        steps = torch.tensor([MOTION_STEPS[m] for m in MOTIONS], dtype=torch.float32)  # [5, 2]
        self.register_buffer("motion_steps", steps, persistent=False)
        self.sprite_rows = [ALL_COLOURS.index(c) for c in SPRITE_COLOURS]
        self.freeze()

    # --- soft perception --------------------------------------------------------------------------------------
    def kernel(self, videos: torch.Tensor, colours: torch.Tensor) -> torch.Tensor:
        """Soft masks of videos[..., 3, H, W] for colours[..., 3, 1, 1] (broadcast) -> masks[..., H, W] in [0, 1].

        closeness = exp(-|x - c|^2 / colour_width^2 - |x - c|_1 / l1_scale), then a soft threshold
        sigmoid(mask_sharpness * (closeness - mask_level)) rescaled to map closeness 0 -> 0 and 1 -> 1: about
        0.3 RGB away from c a pixel is half in.
        |.|_1 takes the subgradient +1 at 0, so no channel's gradient vanishes on an exact palette colour.
        """
        delta = videos - colours
        sign = torch.where(delta >= 0, 1.0, -1.0).to(delta.dtype)
        closeness = torch.exp(-(delta**2).sum(-3) / self.colour_width**2 - (delta * sign).sum(-3) / self.l1_scale)
        low, high = (torch.sigmoid(torch.tensor(self.mask_sharpness * (e - self.mask_level))).item() for e in (0.0, 1.0))
        return (torch.sigmoid(self.mask_sharpness * (closeness - self.mask_level)) - low) / (high - low)

    def colour_masks(self, videos: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """masks[P, F, H, W]: pair p's soft mask of palette row rows[p] (_ANY_SPRITE: the sprite-colour union)."""
        union = rows == _ANY_SPRITE
        colours = self.palette[rows.clamp(max=len(ALL_COLOURS) - 1)]  # [P, 3]
        masks = self.kernel(videos, colours[:, None, :, None, None])
        if bool(union.any()):
            which = union.nonzero()[:, 0]
            sprite = self.palette[self.sprite_rows]  # [C, 3]
            per_colour = self.kernel(videos[which][:, :, None], sprite[None, None, :, :, None, None])  # [Pu, F, C, H, W]
            soft_union = 1 - torch.prod(1 - per_colour, dim=2)
            masks = torch.where(union[:, None, None, None], masks.new_zeros(masks.shape).index_put((which,), soft_union), masks)
        return masks

    def shape_evidence(self, masks: torch.Tensor) -> "Evidence":
        """Evidence (each field [N, F, S]) at the best window of each shape in masks[N, F, H, W].

        response = (mask inside - mask outside) / area, the template score that picks the window and size;
        amplitude = the mass-weighted mean mask over the shape's pixels (sum m^2 / sum m), the colour's
        strength where it is; structure = response / amplitude, with the amplitude held constant in the
        backward pass (see the module docstring); fill, ring, reach, mass and asymmetry describe the best size's
        box: the mean mask over the box, over the 1-pixel ring around it (empty when the box holds the whole
        blob), the least over the box's four edges of the fullest pixel on that edge (high when the blob spans
        the box), the mask's sum over the box, and (bottom half - top half) / mass.
        """
        n, f, h, w = masks.shape
        images = F.pad(masks.reshape(n * f, h, w), (self.padding,) * 4)  # [N*F, H + 2p, W + 2p]
        k = self.templates.shape[-1]
        shapes, sizes = len(self.shapes), len(self.sizes)
        templates = self.templates.to(images.dtype)
        with torch.no_grad():  # where each template fits best; the evidence there is recomputed with gradient
            response = F.conv2d(images[:, None], templates[:, None]) / self.areas.to(images.dtype)[:, None, None]
            best = response.flatten(2).amax(-1).reshape(-1, shapes, sizes).argmax(-1)  # best size per shape
            template = torch.arange(shapes, device=masks.device) * sizes + best  # [N*F, S]
            where = response.flatten(2).argmax(-1).gather(1, template)  # [N*F, S] flat position
            top, left = where // response.shape[-1], where % response.shape[-1]
        offsets = torch.arange(k, device=masks.device)
        rows = (top[..., None] + offsets)[..., :, None]  # [N*F, S, k, 1]
        cols = (left[..., None] + offsets)[..., None, :]  # [N*F, S, 1, k]
        windows = images[torch.arange(n * f, device=masks.device)[:, None, None, None], rows, cols]  # [N*F, S, k, k]
        chosen = templates[template]
        inside = (windows * (chosen > 0)).sum((-2, -1))
        outside = (windows * (chosen < 0)).sum((-2, -1))
        shape_pixels = windows * (chosen > 0)
        amplitude = (shape_pixels**2).sum((-2, -1)) / (inside + 1e-6)  # mass-weighted mean of the mask
        area = self.areas.to(images.dtype)[template]
        # The normaliser is held constant in the backward pass: normalised cross-correlation is flat at its
        # maximum, which would leave a video that already answers Yes without any credit map.
        structure = (inside - outside) / (area * amplitude.detach() + 1e-6)
        mass = (windows * self.boxes[template]).sum((-2, -1))
        box_area = self.boxes[template].sum((-2, -1))
        ring = (windows * self.rings[template]).sum((-2, -1)) / self.rings[template].sum((-2, -1))
        # the box is the blob's own box when the blob reaches each of its four edges (its fullest pixel there)
        reach = (windows[:, :, None] * self.edges[template]).flatten(-2).amax(-1).amin(-1)
        asymmetry = ((windows * self.bottoms[template]).sum((-2, -1)) - (windows * self.tops[template]).sum((-2, -1))) / (mass + 1e-6)
        out = ((inside - outside) / area, structure, amplitude, mass / box_area, ring, reach, mass, asymmetry)
        return Evidence(*(x.reshape(n, f, shapes) for x in out))

    def log_presence(self, evidence: "Evidence", pick: torch.Tensor, any_shape: torch.Tensor) -> torch.Tensor:
        """log p_t[N, F]: the picked shape (pick[N, F, 1], a shape index) is present in each frame.

        any_shape[N] (bool): colour questions, which accept any shape. 'template': the structure above
        shape_threshold (colour_threshold for any shape) and the amplitude above amplitude_threshold.
        'fill': a sprite-sized blob (mass above min_area) bounded by its box (ring mean below ring_level) and,
        unless any shape will do, spanning the box (reach above reach_level) with a fill ratio in the picked shape's band
        (FILL_BANDS).
        """
        at = lambda x: x.gather(2, pick)[..., 0]  # noqa: E731
        if self.shape_measure == "template":
            threshold = torch.where(any_shape[:, None], self.colour_threshold, self.shape_threshold)
            return _log_sigmoid(self.sharpness * (at(evidence.structure) - threshold)) + _log_sigmoid(
                self.amplitude_sharpness * (at(evidence.amplitude) - self.amplitude_threshold)
            )
        blob = _log_sigmoid(self.area_sharpness * (at(evidence.mass) - self.min_area + 0.5)) + _log_sigmoid(
            self.ring_sharpness * (self.ring_level - at(evidence.ring))
        )
        per_shape = torch.stack([self.log_band(evidence.fill[..., i], evidence.asymmetry[..., i], shape) for i, shape in enumerate(self.shapes)], -1)
        spans = _log_sigmoid(self.ring_sharpness * (at(evidence.reach) - self.reach_level))
        return blob + torch.where(any_shape[:, None], 0.0, at(per_shape) + spans)

    def log_band(self, fill: torch.Tensor, asymmetry: torch.Tensor, shape: str) -> torch.Tensor:
        """log p(the box's fill ratio and asymmetry say `shape`), elementwise."""
        low, high = FILL_BANDS[shape]
        out = torch.zeros_like(fill)
        if low is not None:
            out = out + _log_sigmoid(self.fill_sharpness * (fill - low))
        if high is not None:
            out = out + _log_sigmoid(self.fill_sharpness * (high - fill))
        if shape == "circle":
            out = out + _log_sigmoid(self.fill_sharpness * (0.15 - asymmetry.abs()))
        if shape == "triangle":
            out = out + _log_sigmoid(self.fill_sharpness * (asymmetry - 0.2))
        return out

    def velocity(self, masks: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """v[P, 2] (px / frame, image axes): weighted least-squares slope of the masks' centroids over frames."""
        p, f, h, w = masks.shape
        ys = torch.arange(h, dtype=masks.dtype, device=masks.device) + 0.5
        xs = torch.arange(w, dtype=masks.dtype, device=masks.device) + 0.5
        mass = masks.sum((-2, -1)) + 1e-6
        centroid = torch.stack([(masks.sum(-2) * xs).sum(-1) / mass, (masks.sum(-1) * ys).sum(-1) / mass], -1)
        t = torch.arange(f, dtype=masks.dtype, device=masks.device)[None, :, None]
        wt = weights[..., None] + 1e-6  # [P, F, 1]
        t_mean = (wt * t).sum(1, keepdim=True) / wt.sum(1, keepdim=True)
        c_mean = (wt * centroid).sum(1, keepdim=True) / wt.sum(1, keepdim=True)
        return (wt * (t - t_mean) * (centroid - c_mean)).sum(1) / ((wt * (t - t_mean) ** 2).sum(1) + 1e-6)

    # --- the contract -----------------------------------------------------------------------------------------
    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        """log p(Yes)[P] (p(Yes) with score = 'prob') for videos[P, F, 3, H, W] in [0, 1] and one question each
        (prompts are not needed)."""
        if videos.dim() != 5 or videos.shape[2] != 3:
            raise ValueError(f"rewards.toy_oracle expects videos[P, F, 3, H, W], got shape {tuple(videos.shape)}")
        if len(questions) != videos.shape[0]:
            raise ValueError(f"rewards.toy_oracle: {videos.shape[0]} videos but {len(questions)} questions")
        specs = [_parse(q) for q in questions]
        unknown = sorted({s.shape for s in specs if s.shape is not None and s.shape not in self.shapes})
        if unknown:
            raise ValueError(
                f"rewards.toy_oracle has no template for {unknown}; its shapes are {self.shapes} "
                "(set rewards.toy_oracle.difficulty or .shapes to the dataset's)"
            )
        device = videos.device
        kind = torch.tensor([_KINDS.index(s.kind) for s in specs], device=device)
        row = torch.tensor(
            [
                ALL_COLOURS.index(s.background) if s.kind == "background"
                else ALL_COLOURS.index(s.colour) if s.colour is not None
                else _ANY_SPRITE
                for s in specs
            ],
            device=device,
        )
        shape = torch.tensor([self.shapes.index(s.shape) if s.shape else 0 for s in specs], device=device)
        motion = torch.tensor([MOTIONS.index(s.motion) if s.motion else 0 for s in specs], device=device)

        videos = videos if videos.dtype == torch.float64 else videos.float()  # float64 kept for gradcheck
        p, f = videos.shape[:2]
        masks = self.colour_masks(videos, row)  # [P, F, H, W]

        evidence = self.shape_evidence(masks)  # fields [P, F, S]
        is_colour = kind == _KINDS.index("colour")
        # colour questions take the best-fitting shape; the others the shape they name
        pick = torch.where(is_colour[:, None, None], evidence.response.argmax(-1, keepdim=True), shape[:, None, None].expand(p, f, 1))
        log_present = self.log_presence(evidence, pick, is_colour)
        log_exist = log_present.logsumexp(1) - math.log(f)  # log of the mean over frames

        v = self.velocity(masks, log_present.exp())  # [P, 2]
        along = v @ self.motion_steps.T.to(v.dtype)  # [P, 5]: speed along each motion's direction
        logits = self.motion_sharpness * (along - self.speed / 2)
        logits[:, MOTIONS.index("static")] = self.motion_sharpness * (self.speed / 2 - v.abs().amax(-1))
        log_move = torch.log_softmax(logits, -1).gather(1, motion[:, None])[:, 0]

        coverage = masks.mean((1, 2, 3))
        log_background = _log_sigmoid(self.background_sharpness * (coverage - self.background_threshold))

        log_prob = torch.where(kind == _KINDS.index("motion"), log_exist + log_move, log_exist)
        log_prob = torch.where(kind == _KINDS.index("background"), log_background, log_prob)
        is_count = kind == _KINDS.index("count")
        if bool(is_count.any()):
            log_prob = torch.where(is_count, self._count_log_prob(videos, specs, is_count), log_prob)
        # log(floor + (1 - floor) p): bounded below by log(floor)
        floored = torch.logaddexp(torch.full_like(log_prob, math.log(self.floor)), math.log1p(-self.floor) + log_prob)
        return floored if self.score_space == "log_prob" else floored.exp()

    def _count_log_prob(self, videos: torch.Tensor, specs: list[CheckSpec], is_count: torch.Tensor) -> torch.Tensor:
        """log p(count)[P] (0 for pairs that are not count questions): a Gaussian around the asked number of the
        soft count, the sum over sprite colours of their existence (as for colour questions)."""
        rows = is_count.nonzero()[:, 0]
        sprite = self.palette[self.sprite_rows]  # [C, 3]
        per_colour = self.kernel(videos[rows][:, None], sprite[None, :, None, :, None, None])  # [Pc, C, F, H, W]
        pc, c, f, h, w = per_colour.shape
        evidence = self.shape_evidence(per_colour.reshape(pc * c, f, h, w))
        pick = evidence.response.argmax(-1, keepdim=True)
        present = self.log_presence(evidence, pick, torch.ones(pc * c, dtype=torch.bool, device=videos.device))
        count = present.exp().mean(1).reshape(pc, c).sum(1)
        asked = torch.tensor([float(specs[i].count) for i in rows.tolist()], device=videos.device, dtype=videos.dtype)
        out = videos.new_zeros(len(specs))
        return out.index_put((rows,), -((count - asked) ** 2) / (2 * self.count_width**2))
