"""Chat texts of the digit-score critics (rewards/qwen/digit_scores.py): the published prompt around a video (one
`<|video_pad|>`) or `num_images` frames (one `<|image_pad|>` each), and the token ids that start every teacher-forced
answer (chat text with the vision placeholders expanded, then the answer template's first segment)."""

from __future__ import annotations

from typing import Any

from tvrl_bench.rewards.qwen.chat import render_images_prompt, render_prompt
from tvrl_bench.rewards.qwen.layout import expand_video_tokens, tokenize_texts


class DigitPrompts:
    """The chat text per generation prompt (cached) and the answer prefix ids of a batch of videos."""

    def __init__(
        self,
        processor: Any,
        prompt_template: str,
        system_prompt: str | None,
        token: str,
        num_images: int | None,
        answer_start: str,
    ) -> None:
        """
        Args:
            processor: the checkpoint's processor (chat template and tokenizer).
            prompt_template: the user text; field {prompt}.
            system_prompt: a system message, or None for the template's default.
            token: the vision placeholder the chat template writes (`<|video_pad|>` or `<|image_pad|>`).
            num_images: frames per video given as images, or None for one video.
            answer_start: the answer template's text before its first score slot.
        """
        self.processor = processor
        self.prompt_template = prompt_template
        self.system_prompt = system_prompt
        self.token = token
        self.num_images = num_images
        self.answer_start = answer_start
        self._cache: dict[str, str] = {}

    def text(self, prompt: str) -> str:
        """The chat text for a video and its generation prompt (one vision placeholder per video / image), ending
        with the generation prompt of the assistant turn."""
        if prompt not in self._cache:
            user_text = self.prompt_template.format(prompt=prompt)
            if self.num_images is None:
                text = render_prompt(self.processor, user_text, self.system_prompt)
            else:
                text = render_images_prompt(self.processor, self.num_images, user_text, self.system_prompt)
            expected = 1 if self.num_images is None else self.num_images
            if text.count(self.token) != expected:
                raise ValueError(
                    f"the chat template wrote {text.count(self.token)} '{self.token}' tokens; expected {expected}"
                )
            self._cache[prompt] = text
        return self._cache[prompt]

    def prefix_ids(self, texts: list[str], placeholders: list[list[str]]) -> list[list[int]]:
        """Token ids of each chat text + the answer's first segment, the vision placeholders of texts[r] replaced
        by placeholders[r] (in order)."""
        laid_out = expand_video_tokens(texts, [ph for per_video in placeholders for ph in per_video], self.token)
        return tokenize_texts(self.processor.tokenizer, [t + self.answer_start for t in laid_out])
