"""`toy_scorer_slots`: the slot world's scalar video scorer, VideoAlign's class on a tiny trained Qwen2-VL.

One score per video and no answer per check (`uses_checks = False`, one score name, "TA"), like VideoAlign,
VideoScore2 or UnifiedReward-2: per-check advantages get nothing to read, so credit can only come from its map.
It is `rewards.videoalign` itself (VideoReward's folder layout, qwen-vl-utils video rules, sequential positions,
a reward head on the special tokens) loading a tiny `Qwen2VLForConditionalGeneration` and head that
`tvrl_bench.recipes.pretrain_slot_scorer` trained to predict the exact evaluator's `overall` of a (video,
prompt) pair: the share of the prompt's slot checks the video passes. The one change: the head's output goes
through a sigmoid, so the score is a 0-1 estimate of that share (score_space 'score', `score_range` (0, 1));
the recipe trains it with a cross-entropy against the share, which keeps it calibrated.

The asset (tvrl_bench/assets/toy_scorer_slots/): `model_config.json`, `checkpoint-<steps>/` (the reward head and
tokenizer) and `base/` (the trained Qwen2-VL with its processor). Missing or corrupt files are one ConfigError
line naming the critic and the rebuild command; it judges the default slot world only (`worlds = ('slots',)`):
a prompt that is not a slot prompt, or asks a colour it never saw, is a ConfigError too (as a check is for the
answer critics).
"""

from __future__ import annotations

import torch

from tvrl_bench.registry import register
from tvrl_bench.rewards.qwen.inputs import QwenInputs
from tvrl_bench.rewards.toy_qwen_slots import toy_inputs
from tvrl_bench.rewards.toy_slot_assets import asset_folder, load_asset, read_record, slot_prompt
from tvrl_bench.rewards.videoalign import VideoAlign

# The user text after the video (the tiny model was trained with it): the prompt, then the three reward tokens.
PROMPT_TEMPLATE = "{prompt}<|VQ_reward|><|MQ_reward|><|TA_reward|>"
SCORE = "TA"
MIN_PIXELS = 8 * 8  # per frame: 16 x 16 frames keep their size (qwen-vl-utils' default would upscale them)  # text alignment: the head trained on the evaluator's overall
REQUIRED = ("model_config.json", "base/config.json", "base/model.safetensors", "base/tokenizer.json",
            "base/processor_config.json")


@register("rewards", "toy_scorer_slots")
class ToyScorerSlots(VideoAlign):
    """A tiny trained VideoAlign-class scorer: one 0-1 score per video, its estimate of the evaluator's overall."""

    asset = "toy_scorer_slots"
    worlds = ("slots",)
    score_names = (SCORE,)
    score_range = (0.0, 1.0)
    fps = None

    def __init__(self, path: str | None = None, inputs: QwenInputs | None = None) -> None:
        """path: a folder written by `tvrl-bench prepare-toy --what critic --recipe slots --critic
        toy_scorer_slots` (None: the shipped tvrl_bench/assets/toy_scorer_slots/). inputs: the Qwen input settings
        (None: float32, 256 videos per forward)."""
        folder = asset_folder(self.asset, path, REQUIRED)
        load_asset(self.asset, folder, lambda: super(ToyScorerSlots, self).__init__(
            str(folder), base_path=str(folder / "base"), score_names=(SCORE,), normalize=False,
            prompt_template=PROMPT_TEMPLATE, inputs=inputs if inputs is not None else toy_inputs(min_pixels=MIN_PIXELS)))
        self.path = folder
        self.record = read_record(folder)

    def head_scores(self, videos: torch.Tensor, prompts: list[str]) -> torch.Tensor:
        """[b, 3] VQ, MQ, TA in (0, 1): the head's outputs through a sigmoid (only TA is trained)."""
        return torch.sigmoid(super().head_scores(videos, prompts))

    def score_pairs(self, videos, prompts, questions):
        """The 0-1 score [P] of each (video, prompt); ConfigError for a prompt that is not a slot prompt in the
        colours the scorer saw (toy_slot_assets.slot_prompt)."""
        for prompt in dict.fromkeys(prompts):
            slot_prompt(self.asset, prompt)
        return super().score_pairs(videos, prompts, questions)
