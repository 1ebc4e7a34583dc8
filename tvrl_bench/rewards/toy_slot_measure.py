"""The oracle's answer to the slot world's checks ("Is the top left object red?", world/slots.py), differentiable.

A mixin of ToyPerception (rewards/toy_perception.py), read by the oracle (rewards/toy_oracle.py) for slot checks.
Per frame, inside the slot's pixel box, the soft mask of every sprite colour is summed into an area (pixels); the
asked colour must cover more of the slot than any other sprite colour and at least `min_area` pixels, as the
evaluator asks, through a sigmoid of the margin:

    log p_t = log sigmoid(slot_sharpness * (area_asked - max(area_rival, min_area)))
    log p   = log of the mean of p_t over frames

The rival is the other colour of largest area (chosen without gradient, its area with gradient). Masks are cut to
the slot's box, so a slot check's gradient lies in its slot and nowhere else. `slot_sharpness` (0.5 per pixel)
keeps the answer's slope alive on the policy's crisp squares: a square of 16 px against no rival scores p = 0.99
with a gradient 1 / (1 - p) larger than at a sharpness of 2 per pixel, where p = 1 - 2e-9 and the credit map of
every clear answer underflows to nothing (a router then spreads it over the whole video).
"""

from __future__ import annotations

import math

import torch

from tvrl_bench.rewards.toy_perception import log_sigmoid
from tvrl_bench.world.palette import SPRITE_COLOURS
from tvrl_bench.world.slots import slot_box

# The oracle's parameters that act on the sprite world's checks only: a slot check reads the colour masks
# (colour_width, l1_scale, mask_level, mask_sharpness), min_area, slot_sharpness, floor and score.
SPRITE_ONLY_PARAMETERS = (
    "difficulty", "min_size", "max_size", "shapes", "speed", "shape_threshold", "colour_threshold", "sharpness",
    "amplitude_threshold", "amplitude_sharpness", "background_threshold", "background_sharpness", "motion_sharpness",
    "count_width", "shape_measure", "fill_sharpness", "ring_level", "ring_sharpness", "reach_level", "area_sharpness",
    "tolerance", "max_side", "min_frame_fraction", "exist_sharpness", "min_speed", "aspect_sharpness",
    "component_values")


class SlotPerception:
    """Mixin of ToyPerception (for kernel, palette, sprite_rows) that reads min_area and slot_sharpness."""

    def slot_log_prob(self, videos: torch.Tensor, specs: list) -> torch.Tensor:
        """log p(Yes)[P] of slot checks specs[P] (kind 'slot') for videos[P, F, 3, H, W] in [0, 1]."""
        p, f, _, h, w = videos.shape
        sprite = self.palette[self.sprite_rows].to(videos.dtype)  # [C, 3]
        masks = self.kernel(videos[:, None], sprite[None, :, None, :, None, None])  # [P, C, F, H, W]
        box = videos.new_zeros(p, 1, 1, h, w)
        for i, spec in enumerate(specs):
            x0, y0, x1, y1 = slot_box(spec.slot, h, w)
            box[i, ..., y0:y1, x0:x1] = 1
        area = (masks * box).sum((-2, -1))  # [P, C, F]
        asked = torch.tensor([list(SPRITE_COLOURS).index(s.colour) for s in specs], device=videos.device)
        own = area.gather(1, asked[:, None, None].expand(p, 1, f))[:, 0]  # [P, F]
        others = area.masked_fill(torch.nn.functional.one_hot(asked, area.shape[1]).bool()[..., None], -math.inf)
        rival = others.gather(1, others.detach().argmax(1, keepdim=True))[:, 0]  # [P, F]
        margin = own - torch.clamp(rival, min=self.min_area)
        return log_sigmoid(self.slot_sharpness * margin).logsumexp(1) - math.log(f)
