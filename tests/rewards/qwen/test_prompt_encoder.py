"""Model inputs of chat texts with one video each and answer ids appended (rewards/qwen/prompt_encoder.py) equal
what the real Qwen2.5-VL processor's `__call__` returns for the texts with the answer written out."""

from __future__ import annotations

import pytest
import torch

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.chat import render_prompt
from tvrl_bench.rewards.qwen.layout import QwenVisionTokens
from tvrl_bench.rewards.qwen.prompt_encoder import VideoPromptEncoder
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings

VIDEO_FPS = 4.0


@pytest.mark.parametrize("padding_side", ["left", "right"])
def test_model_inputs_equal_the_processor_call_with_the_answer_appended(padding_side):
    processor = tiny_qwen.build_processor("qwen2_5_vl")
    settings = QwenVideoSettings.from_processor(processor.video_processor).with_overrides(fps=2.0)
    encoder = VideoPromptEncoder(processor.tokenizer, QwenVisionTokens.from_processor(processor), settings,
                                 VIDEO_FPS, padding_side, seconds_per_grid=True)
    videos = torch.rand(2, 9, 3, 20, 28, generator=torch.Generator().manual_seed(0))
    texts = [render_prompt(processor, "Red?"), render_prompt(processor, "Does the ball roll to the left?")]
    answer_ids = processor.tokenizer("Yes", add_special_tokens=False)["input_ids"]
    kwargs, prompt_lengths = encoder.model_inputs(videos, texts, answer_ids, torch.device("cpu"))

    ref = processor(
        text=[t + "Yes" for t in texts],
        videos=list(videos),
        video_metadata=[{"total_num_frames": 9, "fps": VIDEO_FPS}] * 2,
        videos_kwargs={"do_rescale": False, **settings.processor_kwargs()},
        padding=True,
        padding_side=padding_side,
        return_tensors="pt",
    )
    for key in ("input_ids", "attention_mask", "mm_token_type_ids", "video_grid_thw"):
        assert torch.equal(kwargs[key], torch.as_tensor(ref[key])), key
    torch.testing.assert_close(kwargs["pixel_values_videos"], ref["pixel_values_videos"], atol=1e-6, rtol=0)
    torch.testing.assert_close(kwargs["second_per_grid_ts"], torch.as_tensor(ref["second_per_grid_ts"]).float())
    assert kwargs["use_cache"] is False
    assert prompt_lengths.tolist() == (ref["attention_mask"].sum(-1) - len(answer_ids)).tolist()


def test_without_seconds_per_grid_the_kwargs_have_none():
    processor = tiny_qwen.build_processor("qwen2_vl")
    settings = QwenVideoSettings.from_processor(processor.video_processor).with_overrides(fps=2.0)
    encoder = VideoPromptEncoder(processor.tokenizer, QwenVisionTokens.from_processor(processor), settings,
                                 VIDEO_FPS, "left", seconds_per_grid=False)
    inputs = encoder.preprocess(torch.rand(1, 8, 3, 16, 16))
    kwargs, prompt_ids = encoder.encode(inputs, [render_prompt(processor, "Red?")], [[7, 8]], torch.device("cpu"))
    assert "second_per_grid_ts" not in kwargs
    assert kwargs["input_ids"][0].tolist() == prompt_ids[0] + [7, 8]
