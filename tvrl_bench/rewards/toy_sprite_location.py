"""Hard sprite location for the toy oracle's `shape_measure = 'component'`: where to look, decided without gradient.

The soft template search (rewards/toy_perception.py) picks a window by correlation, and on a blurry rollout its box
rarely is the blob's own box, so its fill ratio and centroid disagree with what a segmenting judge sees. Here each
frame is segmented as a judge would (a pixel takes the nearest palette colour within `tolerance` RGB, otherwise
none), the 4-connected components of the sprite colours are found (scipy.ndimage.label), and one component per
(pair, frame) is chosen: among the colours the question names (all sprite colours when it names none), the largest
component of sprite size (at least `min_area` pixels, box sides at most `max_side` of the frame) whose box reads as
the asked shape; failing that the largest of sprite size; failing that the largest. The oracle then scores soft
masks inside that fixed box, so the critic's values follow the hard geometry while its gradient stays on the pixels.

Shape bands (fill ratio of the box, and asymmetry = (bottom half - top half) / area), aspect min(h/w, w/h) >= 0.7:
square fill >= 0.88; triangle asymmetry >= 0.2 and fill <= 0.8; circle 0.55 <= fill < 0.88 and |asymmetry| < 0.15.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from tvrl_bench.rewards.toy_perception import log_sigmoid
from tvrl_bench.world.palette import SPRITE_COLOURS
from tvrl_bench.world.vocabulary import MOTIONS

# (fill low, fill high, asymmetry low, |asymmetry| high); None: no bound. Squares come first (any asymmetry).
COMPONENT_BANDS = {
    "square": (0.88, None, None, None),
    "triangle": (None, 0.8, 0.2, None),
    "circle": (0.55, 0.88, None, 0.15),
}
MIN_ASPECT = 0.7


def band_margins(fill: torch.Tensor, asymmetry: torch.Tensor, shape: str) -> list[torch.Tensor]:
    """Signed margins (each like fill) that are all >= 0 exactly when fill and asymmetry lie in the shape's band."""
    low, high, asym_low, asym_abs = COMPONENT_BANDS[shape]
    out = []
    if low is not None:
        out.append(fill - low)
    if high is not None:
        out.append(high - fill)
    if asym_low is not None:
        out.append(asymmetry - asym_low)
    if asym_abs is not None:
        out.append(asym_abs - asymmetry.abs())
    return out


def reads_as(fill: float, asymmetry: float, aspect: float, shape: str | None) -> bool:
    """Whether a hard component's box reads as `shape` (None: any shape will do)."""
    if shape is None:
        return True
    if aspect < MIN_ASPECT or (shape != "square" and fill >= COMPONENT_BANDS["square"][0]):
        return False
    low, high, asym_low, asym_abs = COMPONENT_BANDS[shape]
    return ((low is None or fill >= low) and (high is None or fill <= high) and (asym_low is None or asymmetry >= asym_low)
            and (asym_abs is None or abs(asymmetry) < asym_abs))


@dataclass
class Located:
    """One chosen component per (pair, frame); tensors [P, F] unless stated, on the videos' device.

    found: a component of the question's colours exists; colour: its position in `colours` (0 where not found);
    pixels, box, top, bottom [P, F, H, W]: its pixels, its box, and the box's top and bottom halves (rows h // 2
    from the top and from the bottom), all 0/1; aspect: min(h / w, w / h) of its box (1 where not found).
    """

    found: torch.Tensor
    colour: torch.Tensor
    pixels: torch.Tensor
    box: torch.Tensor
    top: torch.Tensor
    bottom: torch.Tensor
    aspect: torch.Tensor


def segment(videos: torch.Tensor, palette: torch.Tensor, tolerance: float) -> np.ndarray:
    """labels[P, F, H, W] (int): each pixel's nearest palette row (palette[K, 3]) if within tolerance, else -1."""
    with torch.no_grad():
        d2 = ((videos.detach().float()[:, :, None] - palette.float()[None, None, :, :, None, None]) ** 2).sum(3)
        d2 = torch.nan_to_num(d2, nan=float("inf"))  # [P, F, K, H, W]
        best, nearest = d2.min(2)
        return torch.where(best <= tolerance**2, nearest, -1).cpu().numpy()


def locate(
    labels: np.ndarray,
    colours: list[int],
    wanted: list[list[int]],
    shapes: list[str | None],
    min_area: int,
    max_side: float,
    device: torch.device,
) -> Located:
    """Choose one component per (pair, frame) of labels[P, F, H, W] (see the module docstring).

    colours: the palette rows of the sprite colours; wanted[p]: positions in `colours` pair p may use;
    shapes[p]: the shape pair p asks for (None: any).
    """
    from scipy import ndimage

    p_count, frames, h, w = labels.shape
    four = np.zeros((3, 3, 3), dtype=bool)
    four[1] = ndimage.generate_binary_structure(2, 1)  # 4-connected within a frame, never across frames
    found = np.zeros((p_count, frames), dtype=bool)
    colour = np.zeros((p_count, frames), dtype=np.int64)
    aspect = np.ones((p_count, frames))
    pixels, box, top, bottom = (np.zeros(labels.shape, dtype=np.float32) for _ in range(4))
    for p in range(p_count):
        best: dict[int, tuple] = {}  # frame -> (rank, c, component slice, component mask)
        for c in wanted[p]:
            components, n = ndimage.label(labels[p] == colours[c], structure=four)
            for k, where in enumerate(ndimage.find_objects(components), start=1):
                frame_slice, rows, cols = where
                crop = components[where][0] == k
                bh, bw = crop.shape
                area = int(crop.sum())
                sized = area >= min_area and bh <= max_side * h and bw <= max_side * w
                half = crop.sum(1)
                asymmetry = (half[(bh + 1) // 2:].sum() - half[: bh // 2].sum()) / area
                fits = sized and reads_as(area / (bh * bw), asymmetry, min(bh / bw, bw / bh), shapes[p])
                rank = (fits, sized, area)
                f = frame_slice.start
                if f not in best or rank > best[f][0]:
                    best[f] = (rank, c, (rows, cols), crop)
        for f, (_, c, (rows, cols), crop) in best.items():
            found[p, f], colour[p, f] = True, c
            bh, bw = crop.shape
            aspect[p, f] = min(bh / bw, bw / bh)
            pixels[p, f, rows, cols] = crop
            box[p, f, rows, cols] = 1
            top[p, f, rows.start: rows.start + bh // 2, cols] = 1
            bottom[p, f, rows.start + (bh + 1) // 2: rows.stop, cols] = 1
    as_tensor = lambda a: torch.from_numpy(a).to(device)  # noqa: E731
    return Located(as_tensor(found), as_tensor(colour), as_tensor(pixels), as_tensor(box), as_tensor(top),
                   as_tensor(bottom), as_tensor(aspect))


def straight_through(hard: torch.Tensor, soft: torch.Tensor) -> torch.Tensor:
    """The value of `hard` with the gradient of `soft` (same shape)."""
    return hard.to(soft.dtype) + soft - soft.detach()


class ComponentPerception:
    """Mixin of ToyPerception for `shape_measure = 'component'`: presence and centroids in the located box.

    Reads the oracle's tolerance, min_area, max_side, min_frame_fraction, exist_sharpness, min_speed,
    motion_sharpness, fill_sharpness, area_sharpness and aspect_sharpness.
    """

    def component_presence(
        self, videos: torch.Tensor, specs: list, masks: torch.Tensor, fallback: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(log p_t[P, F], centroids[P, F, 2] (x, y) px) for videos[P, F, 3, H, W] and one question spec each.

        Values follow the located component: its area, its box's fill ratio and asymmetry in the asked shape's band
        (any shape for colour questions), its aspect, its pixel centroid. Gradients come from the soft mask of the
        component's colour inside its box (centroid: the box and a 1-pixel ring). Frames without a component
        take the value p_t = 0.01 and the gradient of `fallback` (log p_t[P, F] of the soft template search), and
        the centroid of masks[P, F, H, W] (the question's soft colour mask).
        """
        p, f, h, w = masks.shape
        labels = segment(videos, self.palette, self.tolerance)
        wanted = [[list(SPRITE_COLOURS).index(s.colour)] if s.colour in SPRITE_COLOURS else list(range(len(SPRITE_COLOURS)))
                  for s in specs]
        asked = [None if s.kind == "colour" else s.shape for s in specs]
        at = locate(labels, self.sprite_rows, wanted, asked, self.min_area, self.max_side, videos.device)
        colours = self.palette[self.sprite_rows][at.colour]  # [P, F, 3]
        m = self.kernel(videos, colours[..., None, None])  # [P, F, H, W]: the chosen colour's soft mask
        box, pix = at.box.to(m.dtype), at.pixels.to(m.dtype)
        total = lambda x: x.sum((-2, -1))  # noqa: E731
        soft, hard = total(m * box), total(pix)
        soft_asymmetry = total(m * at.bottom - m * at.top) / (soft + 1e-6)
        if self.component_values == "hard":
            area = straight_through(hard, soft)
            asymmetry = straight_through(total(pix * at.bottom - pix * at.top) / hard.clamp_min(1), soft_asymmetry)
        else:
            area, asymmetry = soft, soft_asymmetry
        fill = area / total(box).clamp_min(1)
        # slope area_sharpness at the boundary like the fill measure's, but logarithmic in the area, so that a large
        # sprite's term is not so saturated that its gradient underflows in float32
        edge = self.min_area - 0.5
        log_p = log_sigmoid(self.area_sharpness * edge * (area.clamp_min(1e-3) / edge).log())
        aspect = log_sigmoid(self.aspect_sharpness * (at.aspect - MIN_ASPECT + 0.01)).to(m.dtype)
        for shape in self.shapes:
            rows = torch.tensor([a == shape for a in asked], device=videos.device)
            if bool(rows.any()):
                terms = [log_sigmoid(self.fill_sharpness * margin) for margin in band_margins(fill, asymmetry, shape)]
                # a conjunction scores its least likely condition: p > 0.5 exactly when every condition holds
                weakest = torch.stack([log_p, aspect, *terms]).amin(0)
                log_p = torch.where(rows[:, None], weakest, log_p)
        outside = straight_through(torch.full_like(fallback, -4.6), fallback) if self.component_values == "hard" else fallback
        log_p = torch.where(at.found, log_p, outside)

        ring = torch.nn.functional.max_pool2d(box.reshape(p * f, 1, h, w), 3, 1, 1).reshape(p, f, h, w)
        soft_centroid = self.centroids(torch.where(at.found[..., None, None], m * ring, masks))
        centroid = straight_through(self.centroids(pix), soft_centroid) if self.component_values == "hard" else soft_centroid
        return log_p, torch.where(at.found[..., None], centroid, soft_centroid)

    def log_exist(self, log_present: torch.Tensor) -> torch.Tensor:
        """log p(seen in at least min_frame_fraction of the frames)[P] from log p_t[P, F], through a sigmoid of
        the expected number of frames seen."""
        frames = log_present.shape[1]
        need = max(1, int(np.ceil(self.min_frame_fraction * frames - 1e-9)))
        return log_sigmoid(self.exist_sharpness * (log_present.exp().sum(1) - need + 0.5))

    def log_motion_rules(self, v: torch.Tensor, motion: torch.Tensor) -> torch.Tensor:
        """log p(motion[P] is seen)[P] for velocities v[P, 2] (px / frame, image axes) by a judge's rules: static
        below min_speed, otherwise the axis at least twice the other; each condition a sigmoid of its margin, a motion the least
        likely of its two conditions."""
        s, vx, vy = self.motion_sharpness, v[:, 0], v[:, 1]
        speed = torch.maximum(vx.abs(), vy.abs())
        horizontal = log_sigmoid(s * (vx.abs() - 2 * vy.abs()))
        vertical = log_sigmoid(s * (vy.abs() - 2 * vx.abs()))
        rules = {
            "static": log_sigmoid(s * (self.min_speed - speed)),
            "right": torch.minimum(log_sigmoid(s * (vx - self.min_speed)), horizontal),
            "left": torch.minimum(log_sigmoid(s * (-vx - self.min_speed)), horizontal),
            "down": torch.minimum(log_sigmoid(s * (vy - self.min_speed)), vertical),
            "up": torch.minimum(log_sigmoid(s * (-vy - self.min_speed)), vertical),
        }
        table = torch.stack([rules[m] for m in MOTIONS], -1)  # [P, 5]
        return table.gather(1, motion[:, None])[:, 0]

