"""Digit scores read from one forward of a Qwen VL model (the digit-score critics, rewards/qwen/digit_scores.py).

At a read position the logits of the allowed digit tokens are softmaxed; the score is the expected digit
(score_type "expected") or the best digit times its renormalised probability ("max_normed", VideoScore2's soft
score). A pair's score sums its reads, each weighted (1 for the leading digit, 10**-j for decimal place j).
"""

from __future__ import annotations

import torch

from tvrl_bench.rewards.qwen.layout import QwenVisionTokens, mm_token_type_ids, pad_sequences
from tvrl_bench.rewards.qwen.teacher_forcing import DigitTokens

SCORE_TYPES = ("expected", "max_normed")
Read = tuple  # (position, "int" | "dec", weight), as teacher_forcing.PairSequence.reads


class DigitReader:
    """Digit logits at given positions of padded token sequences, and the scores they make."""

    def __init__(
        self, model: torch.nn.Module, tokens: QwenVisionTokens, digits: DigitTokens, padding_side: str,
        score_type: str,
    ) -> None:
        """
        Args:
            model: a Qwen VL model with `.model` (returns `last_hidden_state`) and `.lm_head`.
            tokens: the tokenizer's vision tokens (padding id, modality of each token).
            digits: the digit token ids and values of each kind ("int", "dec").
            padding_side: "left" or "right".
            score_type: "expected" or "max_normed".
        """
        self.model = model
        self.tokens = tokens
        self.digits = digits
        self.padding_side = padding_side
        self.score_type = score_type

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def logits(
        self, vision: dict[str, torch.Tensor], sequences: list[list[int]], positions: list[list[int]],
        kinds: list[str] | list[list[str]],
    ) -> list[list[torch.Tensor]]:
        """Per sequence, per read position, the float32 logits [n_digits] of the digit tokens (one forward).

        `vision` is the model's vision keyword arguments for the sequences' videos; positions[r] index the
        unpadded sequences[r]; kinds[r] is one kind for all of row r's positions or one kind per position.
        """
        input_ids, attention_mask = pad_sequences(sequences, self.tokens.pad_token_id, self.padding_side)
        device = self.device
        kwargs = {
            "input_ids": input_ids.to(device),
            "attention_mask": attention_mask.to(device),
            "mm_token_type_ids": mm_token_type_ids(input_ids, self.tokens).to(device),
            "use_cache": False,
            **vision,
        }
        hidden = self.model.model(**kwargs).last_hidden_state  # [b, L, D]
        length = input_ids.shape[1]
        out = []
        for row, (seq, pos, kind) in enumerate(zip(sequences, positions, kinds)):
            offset = length - len(seq) if self.padding_side == "left" else 0
            picked = hidden[row, torch.tensor(pos, device=hidden.device) + offset]  # [R, D]
            row_kinds = [kind] * len(pos) if isinstance(kind, str) else kind
            logits = self.model.lm_head(picked).float()
            out.append([logits[r, self.digits.ids(k)] for r, k in enumerate(row_kinds)])
        return out

    def expected(self, logits: torch.Tensor, kind: str) -> torch.Tensor:
        """The score [] read from one position's digit logits[n_digits]: expected digit (or best digit x its prob)."""
        values = torch.tensor(self.digits.values(kind), dtype=logits.dtype, device=logits.device)
        probs = torch.softmax(logits, dim=-1)
        if self.score_type == "max_normed":
            best = probs.argmax()
            return values[best] * probs[best]
        return (probs * values).sum()

    def scores(
        self, vision: dict[str, torch.Tensor], sequences: list[list[int]], reads: list[list[Read]]
    ) -> torch.Tensor:
        """Scores [b] (float32) of pairs whose token sequences and reads are known (one forward). Differentiable
        w.r.t. the vision inputs."""
        logits = self.logits(vision, sequences, [[r[0] for r in rs] for rs in reads],
                             [[r[1] for r in rs] for rs in reads])
        scores = []
        for row_logits, rs in zip(logits, reads):
            scores.append(sum(w * self.expected(row_logits[i], kind) for i, (_, kind, w) in enumerate(rs)))
        return torch.stack(scores)
