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
- the slot world's checks ("Is the top left object red?"): the asked colour's area in the slot against every other
  sprite colour's and `min_area`, through a sigmoid of `slot_sharpness` per pixel (rewards/toy_slot_measure.py),
  which leaves the sprite measures' parameters out (bound on a slot-world trial, they are refused).
The perception (masks, shape evidence, motion) is `ToyPerception` (rewards/toy_perception.py). Probabilities are
combined in log space, so saturated sigmoids still pass (tiny) gradients. A question's gradient flows only through
its own colour's mask (for shapes, through the best-matching window): "Is there a red circle?" puts its gradient on
the red circle, not on the blue square. All pairs go through one batched forward; only the question text is parsed
per pair. It shares no code with the evaluator. The templates are sized for the difficulty it is built with
(`difficulty`, or `min_size` / `max_size` / `shapes`): set it to the dataset's.
"""

from __future__ import annotations

import math
from functools import lru_cache

import torch

from tvrl_bench.config.rules import Checks, number, one_of, positive
from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward
from tvrl_bench.rewards.toy_slot_measure import SPRITE_ONLY_PARAMETERS, SlotPerception
from tvrl_bench.rewards.toy_sprite_location import ComponentPerception
from tvrl_bench.rewards.toy_perception import ANY_SPRITE, ToyPerception, log_sigmoid, slope
from tvrl_bench.world.checks import CheckSpec, parse_check
from tvrl_bench.world.difficulty import PRESETS, from_knobs
from tvrl_bench.world.palette import ALL_COLOURS
from tvrl_bench.world.vocabulary import MOTION_STEPS, MOTIONS

_KINDS = ("object", "colour", "shape", "motion", "background", "count")  # the sprite world's kinds


@lru_cache(maxsize=4096)
def _parse(question: str) -> CheckSpec:
    return parse_check(question)


@register("rewards", "toy_oracle")
class ToyOracle(SlotPerception, ComponentPerception, ToyPerception, Reward):
    """Exact differentiable toy critic: soft colour masks, shape boxes, centroid motion; log p(Yes) (or p)."""

    worlds = ("slots", "sprites")
    world_parameters = {"sprites": SPRITE_ONLY_PARAMETERS}  # rewards/toy_slot_measure.py
    CHECKS = Checks(
        difficulty=one_of(*PRESETS),
        shape_measure=one_of("fill", "template", "component"),
        component_values=one_of("soft", "hard"),
        score=one_of("log_prob", "prob"),
        min_frame_fraction=number(0, 1, low_open=True, example="0.5"),
        max_side=number(0, 1, low_open=True, example="0.75"),
        floor=number(0, 1, low_open=True, high_open=True, example="1e-4"),
        **{name: positive(repr(default)) for name, default in (
            ("colour_width", 0.3), ("l1_scale", 2.0), ("mask_sharpness", 12.0), ("sharpness", 50.0),
            ("amplitude_sharpness", 30.0), ("background_sharpness", 20.0), ("motion_sharpness", 12.0),
            ("fill_sharpness", 60.0), ("ring_sharpness", 15.0), ("area_sharpness", 2.0), ("exist_sharpness", 3.0),
            ("aspect_sharpness", 50.0), ("tolerance", 0.3), ("slot_sharpness", 0.5))},
    )

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
        tolerance: float = 0.3,
        max_side: float = 0.75,
        min_frame_fraction: float = 0.5,
        exist_sharpness: float = 3.0,
        min_speed: float = 0.4,
        aspect_sharpness: float = 50.0,
        component_values: str = "soft",
        slot_sharpness: float = 0.5,
    ) -> None:
        super().__init__()
        d = from_knobs(difficulty, min_size=min_size, max_size=max_size, shapes=shapes, speed=speed)
        self.frames, self.size = d.frames, (d.height, d.width)  # the world it is made for (any size is scored)
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
        self.tolerance, self.max_side, self.min_frame_fraction = tolerance, max_side, min_frame_fraction
        self.exist_sharpness, self.min_speed, self.aspect_sharpness = exist_sharpness, min_speed, aspect_sharpness
        self.component_values = component_values
        self.slot_sharpness = slot_sharpness
        self.init_perception(d.shapes, tuple(range(d.min_size, d.max_size + 1)))
        steps = torch.tensor([MOTION_STEPS[m] for m in MOTIONS], dtype=torch.float32)  # [5, 2]
        self.register_buffer("motion_steps", steps, persistent=False)
        self.freeze()

    # --- the contract -----------------------------------------------------------------------------------------
    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        """log p(Yes)[P] (p(Yes) with score = 'prob') for videos[P, F, 3, H, W] in [0, 1] and one question each
        (prompts are not needed)."""
        if videos.dim() != 5 or videos.shape[2] != 3:
            raise ValueError(f"rewards.toy_oracle expects videos[P, F, 3, H, W], got shape {tuple(videos.shape)}")
        if len(questions) != videos.shape[0]:
            raise ValueError(f"rewards.toy_oracle: {videos.shape[0]} videos but {len(questions)} questions")
        specs = [_parse(q) for q in questions]
        slots = [s.kind == "slot" for s in specs]
        if any(slots):
            return self._with_slot_checks(videos, prompts, questions, specs, slots)
        unknown = sorted({s.shape for s in specs if s.shape is not None and s.shape not in self.shapes})
        if unknown:
            raise ValueError(
                f"rewards.toy_oracle has no template for {unknown}; its shapes are {self.shapes} "
                "(set rewards.toy_oracle.difficulty or .shapes to the dataset's)"
            )
        device = videos.device
        kind = torch.tensor([_KINDS.index(s.kind) for s in specs], device=device)
        row = torch.tensor([ALL_COLOURS.index(s.background) if s.kind == "background"
                            else ALL_COLOURS.index(s.colour) if s.colour is not None else ANY_SPRITE for s in specs],
                           device=device)
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
        if self.shape_measure == "component":
            log_present, centroids = self.component_presence(videos, specs, masks, log_present)
            log_exist = self.log_exist(log_present)
            log_move = self.log_motion_rules(slope(centroids, log_present.exp().detach()), motion)
        else:
            log_exist = log_present.logsumexp(1) - math.log(f)  # log of the mean over frames
            v = self.velocity(masks, log_present.exp())  # [P, 2]
            along = v @ self.motion_steps.T.to(v.dtype)  # [P, 5]: speed along each motion's direction
            logits = self.motion_sharpness * (along - self.speed / 2)
            logits[:, MOTIONS.index("static")] = self.motion_sharpness * (self.speed / 2 - v.abs().amax(-1))
            log_move = torch.log_softmax(logits, -1).gather(1, motion[:, None])[:, 0]

        coverage = masks.mean((1, 2, 3))
        log_background = log_sigmoid(self.background_sharpness * (coverage - self.background_threshold))

        log_prob = torch.where(kind == _KINDS.index("motion"), log_exist + log_move, log_exist)
        log_prob = torch.where(kind == _KINDS.index("background"), log_background, log_prob)
        is_count = kind == _KINDS.index("count")
        if bool(is_count.any()):
            log_prob = torch.where(is_count, self._count_log_prob(videos, specs, is_count), log_prob)
        # log(floor + (1 - floor) p): bounded below by log(floor)
        floored = torch.logaddexp(torch.full_like(log_prob, math.log(self.floor)), math.log1p(-self.floor) + log_prob)
        return floored if self.score_space == "log_prob" else floored.exp()

    def _with_slot_checks(self, videos, prompts, questions, specs, slots) -> torch.Tensor:
        """score_pairs for a batch holding slot checks: those through `slot_log_prob`, the rest as usual."""
        videos = videos if videos.dtype == torch.float64 else videos.float()
        at = torch.tensor(slots, device=videos.device)
        log_prob = videos.new_zeros(len(specs))
        log_prob = log_prob.index_put((at.nonzero()[:, 0],), self.slot_log_prob(videos[at], [s for s, y in zip(specs, slots) if y]))
        floored = torch.logaddexp(torch.full_like(log_prob, math.log(self.floor)), math.log1p(-self.floor) + log_prob)
        out = floored if self.score_space == "log_prob" else floored.exp()
        if not all(slots):
            rest = (~at).nonzero()[:, 0]
            out = out.index_put((rest,), self.score_pairs(videos[rest], [prompts[i] for i in rest.tolist()],
                                                          [questions[i] for i in rest.tolist()]))
        return out

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
