"""Chat texts and answer prefix ids of the digit-score critics (rewards/qwen/digit_prompts.py) with the tiny
Qwen2.5-VL processor (real processor and tokenizer classes)."""

from __future__ import annotations

import pytest

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.digit_prompts import DigitPrompts

VIDEO, IMAGE = "<|video_pad|>", "<|image_pad|>"


@pytest.fixture(scope="module")
def processor():
    return tiny_qwen.build_processor("qwen2_5_vl")


def _prompts(processor, token=VIDEO, num_images=None) -> DigitPrompts:
    return DigitPrompts(processor, "Rate: {prompt}", "Be brief.", token, num_images, "Score: ")


def test_text_holds_one_video_or_one_block_per_image(processor):
    prompts = _prompts(processor)
    text = prompts.text("a cat")
    assert text.count(VIDEO) == 1 and "Rate: a cat" in text and "Be brief." in text
    assert text.endswith("<|im_start|>assistant\n") and prompts.text("a cat") is text
    images = _prompts(processor, IMAGE, num_images=3).text("a cat")
    assert images.count(IMAGE) == 3 and VIDEO not in images


def test_a_wrong_placeholder_count_is_named(processor):
    with pytest.raises(ValueError, match=r"wrote 0 '<\|image_pad\|>' tokens; expected 1"):
        _prompts(processor, IMAGE).text("a cat")


def test_prefix_ids_expand_the_placeholders_and_start_the_answer(processor):
    prompts = _prompts(processor, IMAGE, num_images=2)
    texts = [prompts.text("a"), prompts.text("b")]
    placeholders = [[IMAGE * 2, IMAGE * 3], [IMAGE, IMAGE * 4]]
    ids = prompts.prefix_ids(texts, placeholders)
    tokenizer = processor.tokenizer
    image_id = tokenizer.convert_tokens_to_ids(IMAGE)
    assert [row.count(image_id) for row in ids] == [5, 5]
    assert tokenizer.decode(ids[0]).endswith("<|im_start|>assistant\nScore: ")
    expected = texts[1].replace(IMAGE, "\x00", 1).replace(IMAGE, IMAGE * 4).replace("\x00", IMAGE) + "Score: "
    assert ids[1] == tokenizer(expected)["input_ids"]
