"""Chat texts of the Qwen-family critics: one user turn holding the vision input and the text, then the
generation prompt, with thinking off where the checkpoint's template has the switch."""

from __future__ import annotations

from typing import Any


def _render(processor: Any, vision: list[dict[str, str]], text: str, system_prompt: str | None) -> str:
    messages: list[dict[str, Any]] = []
    if system_prompt is not None:
        messages.append({"role": "system", "content": [{"type": "text", "text": system_prompt}]})
    messages.append({"role": "user", "content": [*vision, {"type": "text", "text": text}]})
    # Qwen3 / Qwen3.5 templates have the switch; the others (Qwen3-VL Instruct, Qwen2.5-VL) never think.
    extra = {"enable_thinking": False} if "enable_thinking" in str(processor.chat_template or "") else {}
    return processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False, **extra)


def render_prompt(processor: Any, question: str, system_prompt: str | None = None) -> str:
    """The chat text of one user turn (a video, then the question) followed by the generation prompt.

    Thinking is switched off where the template has the switch (`enable_thinking`, Qwen3 / Qwen3.5 templates:
    an empty `<think>\\n\\n</think>\\n\\n` block); templates without it are rendered as they are.
    """
    return _render(processor, [{"type": "video"}], question, system_prompt)


def render_images_prompt(processor: Any, num_images: int, text: str, system_prompt: str | None = None) -> str:
    """The chat text of one user turn (`num_images` images, then `text`) and the generation prompt (thinking off
    where the template has the switch, as `render_prompt`)."""
    return _render(processor, [{"type": "image"} for _ in range(num_images)], text, system_prompt)
