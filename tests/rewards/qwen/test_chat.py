"""Chat texts of the Qwen critics on the tiny processors' chat templates (modelled on the real ones)."""

from __future__ import annotations

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.chat import render_images_prompt, render_prompt


def test_thinking_is_off_where_the_template_has_the_switch():
    text = render_prompt(tiny_qwen.build_processor("qwen3_5"), "Is it red?")
    assert text.count("<|video_pad|>") == 1 and text.index("<|video_pad|>") < text.index("Is it red?<|im_end|>")
    assert text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    qwen25 = render_prompt(tiny_qwen.build_processor("qwen2_5_vl"), "Is it red?")
    assert qwen25.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>")  # the template's default
    assert qwen25.endswith("<|im_start|>assistant\n")


def test_a_system_prompt_and_frames_as_images():
    text = render_images_prompt(tiny_qwen.build_processor("qwen2_5_vl"), 3, "Rate it.", system_prompt="Be strict.")
    assert text.startswith("<|im_start|>system\nBe strict.<|im_end|>") and "helpful assistant" not in text
    assert text.count("<|image_pad|>") == 3 and "<|video_pad|>" not in text
    assert text.rindex("<|image_pad|>") < text.index("Rate it.")
