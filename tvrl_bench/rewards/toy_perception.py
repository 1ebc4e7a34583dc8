"""Soft perception of toy videos for the oracle critic (rewards/toy_oracle.py), differentiable: colour masks,
shape evidence at the best window of each shape, and centroid motion.

- soft colour masks: closeness k(x) = exp(-|x - c|^2 / colour_width^2 - |x - c|_1 / l1_scale) to a colour c,
  softly thresholded, m = sigmoid(mask_sharpness (k - mask_level)) rescaled so that k = 0 and 1 map to 0 and 1: a
  pixel about 0.3 RGB away is half in. The soft union 1 - prod(1 - m_k) covers the sprite colours. The L1 term
  keeps the gradient non-zero on pixels that hit a palette colour exactly, where a Gaussian would be flat.
- shape evidence: the mask is cross-correlated with a template of every shape and size (+1 on its pixels, -1 on
  the rest of its box and on a 1-pixel ring); the best window of each shape is picked without gradient, and the
  evidence there (template response, structure, amplitude, fill ratio, ring, reach, mass, asymmetry) is recomputed
  with gradient. `log_presence` turns it into log p(shape present) per frame, by fill-ratio bands (`'fill'`) or
  template structure (`'template'`); see the oracle's docstring.
- motion: the mask's centroid per frame and a weighted least-squares velocity.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from tvrl_bench.world.palette import ALL_COLOURS, SPRITE_COLOURS, palette_tensor
from tvrl_bench.world.shapes import shape_mask

ANY_SPRITE = len(ALL_COLOURS)  # mask row: the union of the sprite colours


def log_sigmoid(z: torch.Tensor) -> torch.Tensor:
    """log sigmoid(z) elementwise (z of any shape) as -softplus(-z): unlike F.logsigmoid in float32, its gradient sigmoid(-z) stays
    non-zero (if tiny) when z is large, so a question its video already answers still has a credit map."""
    return -F.softplus(-z)


@dataclass
class Evidence:
    """Shape evidence at the best window of each shape, each field [N, F, S] (see ToyPerception.shape_evidence)."""

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


class ToyPerception:
    """The oracle's soft perception, a mixin of an nn.Module that sets the settings it reads (colour_width,
    l1_scale, mask_level, mask_sharpness, shape_measure and the presence thresholds and sharpnesses; see
    ToyOracle) and calls `init_perception` for the shapes, sizes and palette buffers."""

    def init_perception(self, shapes: tuple[str, ...], sizes: tuple[int, ...]) -> None:
        """Register the palette, templates and box-part buffers for `shapes` in `sizes` (pixels, ascending)."""
        self.shapes, self.sizes = shapes, sizes
        self.padding = max(sizes) - min(sizes) + 1  # lets every template size sit on any sprite, ring included
        self.register_buffer("palette", palette_tensor(), persistent=False)  # [K, 3]
        templates = shape_templates(shapes, sizes)
        self.register_buffer("templates", templates, persistent=False)  # [T, k, k]
        self.register_buffer("areas", (templates > 0).sum((-2, -1)).float(), persistent=False)  # [T]
        for name, value in zip(("boxes", "rings", "edges", "tops", "bottoms"), box_parts(shapes, sizes)):
            self.register_buffer(name, value, persistent=False)
        self.sprite_rows = [ALL_COLOURS.index(c) for c in SPRITE_COLOURS]

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
        """masks[P, F, H, W]: pair p's soft mask of palette row rows[p] (ANY_SPRITE: the sprite-colour union)."""
        union = rows == ANY_SPRITE
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
            return log_sigmoid(self.sharpness * (at(evidence.structure) - threshold)) + log_sigmoid(
                self.amplitude_sharpness * (at(evidence.amplitude) - self.amplitude_threshold)
            )
        blob = log_sigmoid(self.area_sharpness * (at(evidence.mass) - self.min_area + 0.5)) + log_sigmoid(
            self.ring_sharpness * (self.ring_level - at(evidence.ring))
        )
        per_shape = torch.stack([self.log_band(evidence.fill[..., i], evidence.asymmetry[..., i], shape) for i, shape in enumerate(self.shapes)], -1)
        spans = log_sigmoid(self.ring_sharpness * (at(evidence.reach) - self.reach_level))
        return blob + torch.where(any_shape[:, None], 0.0, at(per_shape) + spans)

    def log_band(self, fill: torch.Tensor, asymmetry: torch.Tensor, shape: str) -> torch.Tensor:
        """log p(the box's fill ratio and asymmetry say `shape`), elementwise over fill and asymmetry[N, F]."""
        low, high = FILL_BANDS[shape]
        out = torch.zeros_like(fill)
        if low is not None:
            out = out + log_sigmoid(self.fill_sharpness * (fill - low))
        if high is not None:
            out = out + log_sigmoid(self.fill_sharpness * (high - fill))
        if shape == "circle":
            out = out + log_sigmoid(self.fill_sharpness * (0.15 - asymmetry.abs()))
        if shape == "triangle":
            out = out + log_sigmoid(self.fill_sharpness * (asymmetry - 0.2))
        return out

    def centroids(self, masks: torch.Tensor) -> torch.Tensor:
        """centroids[..., 2] (x, y in pixels) of masks[..., H, W] (mass-weighted)."""
        h, w = masks.shape[-2:]
        ys = torch.arange(h, dtype=masks.dtype, device=masks.device) + 0.5
        xs = torch.arange(w, dtype=masks.dtype, device=masks.device) + 0.5
        mass = masks.sum((-2, -1)) + 1e-6
        return torch.stack([(masks.sum(-2) * xs).sum(-1) / mass, (masks.sum(-1) * ys).sum(-1) / mass], -1)

    def velocity(self, masks: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """v[P, 2] (px / frame, image axes): weighted least-squares slope of the masks'[P, F, H, W] centroids over frames."""
        return slope(self.centroids(masks), weights)


def slope(centroids: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """v[P, 2]: the least-squares slope over frames of centroids[P, F, 2], each frame weighted by weights[P, F]."""
    f = centroids.shape[1]
    t = torch.arange(f, dtype=centroids.dtype, device=centroids.device)[None, :, None]
    wt = weights[..., None] + 1e-6  # [P, F, 1]
    t_mean = (wt * t).sum(1, keepdim=True) / wt.sum(1, keepdim=True)
    c_mean = (wt * centroids).sum(1, keepdim=True) / wt.sum(1, keepdim=True)
    return (wt * (t - t_mean) * (centroids - c_mean)).sum(1) / ((wt * (t - t_mean) ** 2).sum(1) + 1e-6)
