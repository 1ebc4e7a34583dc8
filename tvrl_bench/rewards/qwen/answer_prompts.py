"""Chat texts and reference answers of the answer-likelihood critic (`rewards.qwen_vl`).

Per check: one user turn holding the video and `question_template` filled with the check and the prompt, then the
generation prompt; the reference answer's ids are appended and scored. Joint: one user turn listing all of a
video's checks (`joint_template`, rewards/qwen/joint.py), teacher-forced on the all-"Yes" JSON answer, check k read
at the token starting its value. Every text holds exactly one video token, expanded later by the layout.
"""

from __future__ import annotations

from typing import Any

from tvrl_bench.rewards.qwen.chat import render_prompt
from tvrl_bench.rewards.qwen.joint import answer_token_positions, joint_answer, joint_question


class AnswerPrompts:
    """The texts a Qwen VL processor's chat template renders for (video, check) pairs or a video's joint prompt."""

    def __init__(
        self,
        processor: Any,
        video_token: str,
        answer: str,
        question_template: str,
        joint_template: str,
        system_prompt: str | None,
    ) -> None:
        """
        Args:
            processor: the checkpoint's processor (chat template and tokenizer).
            video_token: the processor's video placeholder token; each rendered text must hold it once.
            answer: the reference answer ("Yes"); `answer_ids` are its tokens.
            question_template: the per-check user text; fields {question} and {prompt}.
            joint_template: the joint user text; fields {questions} and {prompt}.
            system_prompt: a system message, or None for the template's default.
        """
        self.processor = processor
        self.video_token = video_token
        self.answer = answer
        self.answer_ids = list(processor.tokenizer(answer, add_special_tokens=False)["input_ids"])
        self.question_template = question_template
        self.joint_template = joint_template
        self.system_prompt = system_prompt
        self._cache: dict[tuple[str, str], str] = {}

    def pair_text(self, prompt: str, question: str) -> str:
        """The rendered chat text (one video token) for a pair, before the video tokens are expanded."""
        key = (prompt, question)
        if key not in self._cache:
            user_text = self.question_template.format(question=question, prompt=prompt)
            text = render_prompt(self.processor, user_text, self.system_prompt)
            if text.count(self.video_token) != 1:
                raise ValueError(
                    f"the chat template of this checkpoint wrote {text.count(self.video_token)} "
                    f"'{self.video_token}' tokens for one video; expected exactly one"
                )
            self._cache[key] = text
        return self._cache[key]

    def joint_text(self, prompt: str, checks: list[str]) -> tuple[str, list[int], list[int]]:
        """(chat text, reference answer ids, index in those ids of each check's value token) for one video."""
        user = joint_question(checks, prompt, self.joint_template)
        text = render_prompt(self.processor, user, self.system_prompt)
        answer, starts = joint_answer(len(checks), self.answer)
        ids, positions = answer_token_positions(self.processor.tokenizer, answer, starts)
        return text, ids, positions
