"""The video token layout equals what the real Qwen processors' `__call__` emits for the same text and video."""

from __future__ import annotations

import pytest
import torch

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.layout import (
    QwenVisionTokens,
    encode_video_prompts,
    expand_video_tokens,
    mm_token_type_ids,
    pad_sequences,
    video_placeholder,
    video_timestamps,
)
from tvrl_bench.rewards.qwen.video import preprocess_videos
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings


def _chat(processor, question: str, videos: int = 1) -> str:
    content = [{"type": "video"}] * videos + [{"type": "text", "text": question}]
    return processor.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True)


@pytest.mark.parametrize("kind", tiny_qwen.KINDS)
@pytest.mark.parametrize("padding_side", ["left", "right"])
def test_encoding_matches_processor_call(kind, padding_side):
    processor = tiny_qwen.build_processor(kind)
    settings = QwenVideoSettings.from_processor(processor.video_processor).with_overrides(fps=2.0)
    tokens = QwenVisionTokens.from_processor(processor)
    torch.manual_seed(2)
    videos = [torch.rand(9, 3, 20, 28), torch.rand(12, 3, 16, 30), torch.rand(8, 3, 24, 24)]
    rates = [4.0, 6.0, 3.0]
    # Two videos in the first text, one in the second; texts of different lengths so padding shows.
    texts = [_chat(processor, "Is the first clip the same as the second?", videos=2), _chat(processor, "Red?")]
    ref = processor(
        text=texts,
        videos=videos,
        video_metadata=[{"total_num_frames": int(v.shape[0]), "fps": r} for v, r in zip(videos, rates)],
        videos_kwargs={"do_rescale": False, **settings.processor_kwargs()},
        padding=True,
        padding_side=padding_side,
        return_tensors="pt",
    )
    inputs = preprocess_videos(videos, settings, rates)
    mine = encode_video_prompts(processor.tokenizer, texts, inputs, settings, tokens, padding_side)
    for key in ("input_ids", "attention_mask", "mm_token_type_ids"):
        assert torch.equal(mine[key], torch.as_tensor(ref[key])), key
    assert not bool(mine["attention_mask"].all()), "the texts should need padding"
    torch.testing.assert_close(inputs.pixel_values_videos, ref["pixel_values_videos"], atol=1e-6, rtol=0)
    assert torch.equal(inputs.video_grid_thw, ref["video_grid_thw"])
    if kind == "qwen2_5_vl":
        torch.testing.assert_close(
            torch.tensor(inputs.second_per_grid_ts(settings.temporal_patch_size)),
            torch.as_tensor(ref["second_per_grid_ts"]).float(),
        )


def test_qwen3_placeholder_by_hand():
    processor = tiny_qwen.build_processor("qwen3_5")
    settings = QwenVideoSettings.from_processor(processor.video_processor)
    tokens = QwenVisionTokens.from_processor(processor)
    # Frames 0, 3, 5, 8 of a 4 fps video in temporal patches of 2: (0 + 0.75) / 2 and (1.25 + 2) / 2 seconds.
    assert video_timestamps([0, 3, 5, 8], 4.0, 2) == [0.375, 1.625]
    # An odd count repeats the last index: frames (6, 6) -> 1.5 s.
    assert video_timestamps([0, 2, 6], 4.0, 2) == [0.25, 1.5]
    text = video_placeholder(settings, (2, 4, 4), [0, 3, 5, 8], 4.0, tokens)
    frame = "<|vision_start|>" + "<|video_pad|>" * 4 + "<|vision_end|>"
    assert text == "<0.4 seconds>" + frame + "<1.6 seconds>" + frame


def test_qwen2_placeholder_is_one_block():
    processor = tiny_qwen.build_processor("qwen2_5_vl")
    settings = QwenVideoSettings.from_processor(processor.video_processor)
    tokens = QwenVisionTokens.from_processor(processor)
    assert video_placeholder(settings, (3, 2, 6), [0, 1, 2, 3, 4, 5], 4.0, tokens) == "<|video_pad|>" * 9


def test_helpers_and_errors():
    processor = tiny_qwen.build_processor("qwen3_vl")
    tokens = QwenVisionTokens.from_processor(processor)
    assert tokens.vision_start == "<|vision_start|>" and tokens.pad_token_id == processor.tokenizer.pad_token_id
    ids = torch.tensor([[5, tokens.image_token_id, tokens.video_token_id, tokens.video_token_id]])
    assert mm_token_type_ids(ids, tokens).tolist() == [[0, 1, 2, 2]]
    padded, mask = pad_sequences([[1, 2, 3], [4]], pad_token_id=0, padding_side="left")
    assert padded.tolist() == [[1, 2, 3], [0, 0, 4]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    padded, mask = pad_sequences([[1, 2, 3], [4]], pad_token_id=0, padding_side="right")
    assert padded.tolist() == [[1, 2, 3], [4, 0, 0]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]
    assert expand_video_tokens(["a<v>b<v>", "<v>"], ["1", "2", "3"], "<v>") == ["a1b2", "3"]
    with pytest.raises(ValueError, match="2 '<v>' tokens but 1 videos"):
        expand_video_tokens(["a<v>b<v>"], ["1"], "<v>")
    with pytest.raises(ValueError, match="padding_side"):
        pad_sequences([[1]], 0, "middle")
