"""Teacher-forced answer scores from one forward of a Qwen VL model (the answer-likelihood critic's scores).

A score is the sum, over some of the answer tokens appended to a chat text, of log p(token | everything before),
read from the language model head at the position before each token; with score_type "prob" its exponential.
"""

from __future__ import annotations

import torch

from tvrl_bench.rewards.qwen.prompt_encoder import VideoPromptEncoder
from tvrl_bench.rewards.qwen.video import QwenVideoInputs

SCORE_TYPES = ("log_prob", "prob")


class AnswerScorer:
    """Teacher-forced log-probs (or probs) of answer tokens after (video, chat text) sequences."""

    def __init__(self, model: torch.nn.Module, encoder: VideoPromptEncoder, score_type: str) -> None:
        """
        Args:
            model: a Qwen VL model with `.model` (returns `last_hidden_state`) and `.lm_head`.
            encoder: builds the model's inputs (its `padding_side` locates the answer tokens).
            score_type: "log_prob" or "prob".
        """
        self.model = model
        self.encoder = encoder
        self.score_type = score_type

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def answer_scores(self, videos: torch.Tensor, texts: list[str], answer_ids: list[int]) -> torch.Tensor:
        """Scores [b] (float32) of `answer_ids` after each of videos[b, F, 3, H, W] (on the model's device) and its
        chat text: all answer tokens summed. Differentiable w.r.t. `videos`."""
        kwargs, prompt_lengths = self.encoder.model_inputs(videos, texts, answer_ids, self.device)
        hidden = self.model.model(**kwargs).last_hidden_state  # [b, L, D]
        b, length = kwargs["input_ids"].shape
        n_answer = len(answer_ids)
        ends = torch.full((b,), length) if self.encoder.padding_side == "left" else prompt_lengths + n_answer
        # Hidden state at position j predicts token j + 1: the answer's tokens are predicted from the n_answer
        # positions before each sequence's end.
        positions = (ends[:, None] - n_answer - 1 + torch.arange(n_answer)[None, :]).to(hidden.device)
        picked = hidden[torch.arange(b, device=hidden.device)[:, None], positions]  # [b, A, D]
        log_probs = torch.log_softmax(self.model.lm_head(picked).float(), dim=-1)
        target = torch.tensor(answer_ids, device=hidden.device)[None, :, None].expand(b, -1, 1)
        total = log_probs.gather(-1, target).squeeze(-1).sum(-1)
        return total.exp() if self.score_type == "prob" else total

    def suffix_scores(
        self, inputs: QwenVideoInputs, texts: list[str], suffixes: list[list[int]], picks: list[list[list[int]]]
    ) -> list[torch.Tensor]:
        """One forward over a batch: per sequence r a tensor [len(picks[r])] of summed teacher-forced log-probs
        (probabilities with score_type "prob").

        texts[r] holds one video token (the video of `inputs` row r); suffixes[r] the appended answer ids;
        picks[r][g] the indices into suffixes[r] whose log-probs make score g.
        """
        kwargs, prompt_ids = self.encoder.encode(inputs, texts, suffixes, self.device)
        hidden = self.model.model(**kwargs).last_hidden_state  # [b, L, D]
        length = kwargs["input_ids"].shape[1]
        out = []
        for r, suffix in enumerate(suffixes):
            seq_length = len(prompt_ids[r]) + len(suffix)
            offset = length - seq_length if self.encoder.padding_side == "left" else 0
            first = offset + len(prompt_ids[r])  # position of the first suffix token
            index = torch.arange(len(suffix), device=hidden.device)
            log_probs = torch.log_softmax(self.model.lm_head(hidden[r, first - 1 + index]).float(), dim=-1)
            token = log_probs.gather(-1, torch.tensor(suffix, device=hidden.device)[:, None]).squeeze(-1)
            scores = torch.stack([token[g].sum() for g in picks[r]])
            out.append(scores.exp() if self.score_type == "prob" else scores)
        return out
