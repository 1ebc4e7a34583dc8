"""`toy_learned`: the small learned critic of the toy world, scored as log p("Yes").

A question-conditioned convolutional network (`toy_critic_net.ToyCriticNet`: FiLM over a word-level question
embedding; inputs rgb, rgb minus the detached frame median and the frame difference; temporal convolutions)
trained on toy videos to answer the checks (`tvrl_bench.recipes.pretrain_critic`). Its 2-way Yes/No head gives
the score r = log_softmax(logits)[Yes] <= 0. Imperfect like a real VLM: docs/toy/learned_critic.md has its measured
accuracy per check kind and how often its gradient falls on the sprite a question names.

Loaded from a folder (`path`, default the shipped tvrl_bench/assets/toy_learned/) holding config.json and
model.safetensors. Videos whose frame count or size differ from the trained ones are resampled first (frames
picked evenly over the clip, pixels by bilinear interpolation), as a real critic's preprocessing would.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F

from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward
from tvrl_bench.rewards.toy_critic_net import CONFIG_FILE, WEIGHTS_FILE, ToyCriticNet

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "assets" / "toy_learned"
YES = 1  # index of "Yes" in the head's two logits (0 = "No")


@register("rewards", "toy_learned")
class ToyLearned(Reward):
    """Learned toy critic: a FiLM conv net answering the checks; log p(Yes)."""

    fps = None  # toy videos have no physical frame rate; the critic reads frames, not seconds
    worlds = ("sprites",)  # the shipped weights learned the sprite world's words; slot words are unknown to them

    @staticmethod
    def configured_worlds(values: dict) -> tuple[str, ...]:
        """The world of the checkpoint a config's values load: `world` in its config.json or pretrain.json (or
        pretrain.json's recipe.world), else the sprite world (every critic trained before the key was)."""
        folder = Path(values.get("path") or DEFAULT_PATH).expanduser()
        stated = ((CONFIG_FILE, ("world",)), ("pretrain.json", ("world",)), ("pretrain.json", ("recipe", "world")))
        for name, keys in stated:
            try:
                found = json.loads((folder / name).read_text(encoding="utf-8"))
                for key in keys:
                    found = found.get(key) if isinstance(found, dict) else None
            except (OSError, ValueError):
                found = None
            if isinstance(found, str):
                return (found,)
        return ToyLearned.worlds

    def __init__(self, path: str | None = None) -> None:
        super().__init__()
        folder = Path(path) if path else DEFAULT_PATH
        missing = [name for name in (CONFIG_FILE, WEIGHTS_FILE) if not (folder / name).is_file()]
        if missing:
            raise FileNotFoundError(
                f"rewards.toy_learned.path: no learned toy critic at {folder} (missing {', '.join(missing)}). "
                "Run `tvrl-bench prepare-toy --what critic` to build it, or point the path at a folder it wrote."
            )
        self.path = folder
        self.net = ToyCriticNet.load(folder)
        config = self.net.config
        self.frames = config.frames
        self.size = (config.height, config.width_px)
        self.freeze()

    def preprocess(self, videos: torch.Tensor) -> torch.Tensor:
        """videos[P, F, 3, H, W] -> [P, frames, 3, *size]: even frame sampling and bilinear resizing (differentiable)."""
        p, f, c, h, w = videos.shape
        if f != self.frames:
            picks = torch.linspace(0, f - 1, self.frames).round().long().to(videos.device)
            videos = videos[:, picks]
        if (h, w) != self.size:
            flat = videos.reshape(p * self.frames, c, h, w)
            videos = F.interpolate(flat, size=self.size, mode="bilinear", align_corners=False).reshape(
                p, self.frames, c, *self.size
            )
        return videos

    def logits(self, videos: torch.Tensor, questions: list[str]) -> torch.Tensor:
        """Yes/No logits[P, 2] (index 1 = Yes) for videos[P, F, 3, H, W] in [0, 1] and one question each."""
        return self.net(self.preprocess(videos.float()), list(questions))

    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        """log p(Yes)[P] for videos[P, F, 3, H, W] in [0, 1], one question per pair, all in one batched forward."""
        if videos.dim() != 5 or videos.shape[2] != 3:
            raise ValueError(f"rewards.toy_learned expects videos[P, F, 3, H, W], got shape {tuple(videos.shape)}")
        if len(questions) != videos.shape[0]:
            raise ValueError(f"rewards.toy_learned: {videos.shape[0]} videos but {len(questions)} questions")
        return torch.log_softmax(self.logits(videos, questions), dim=-1)[:, YES]
