"""The toy policy's text encoder: a learned word (and position) embedding over the toy world's words."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from torch import nn

from tvrl_bench.config.errors import ConfigError

PAD, NULL = "<pad>", "<null>"


class ToyTextEncoder(nn.Module):
    """Word-level tokenizer + embedding: prompts -> (embeddings[B, L, D], mask[B, L]).

    The empty prompt (classifier-free guidance's unconditional input) is the single token <null>, so no
    sequence is ever fully masked.
    """

    def __init__(self, vocabulary: list[str], dim: int, max_length: int = 32):
        super().__init__()
        if vocabulary[:2] != [PAD, NULL]:
            vocabulary = [PAD, NULL] + [w for w in vocabulary if w not in (PAD, NULL)]
        self.vocabulary = list(vocabulary)
        self.index = {w: i for i, w in enumerate(self.vocabulary)}
        self.max_length = max_length
        self.words = nn.Embedding(len(self.vocabulary), dim)
        self.positions = nn.Embedding(max_length, dim)

    def tokenize(self, prompts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Token ids [B, L] and mask [B, L] (1 = real token), padded to the longest prompt."""
        rows = []
        for prompt in prompts:
            words = prompt.lower().replace(",", " ").split() or [NULL]
            unknown = sorted({w for w in words if w not in self.index})
            if unknown:
                raise ConfigError(
                    f"the toy policy does not know the word(s) {unknown} in prompt {prompt!r}; it only reads prompts of "
                    "the toy world's grammar (tvrl_bench.world.grammar)"
                )
            if len(words) > self.max_length:
                raise ConfigError(f"prompt {prompt!r} has {len(words)} words; the toy text encoder reads at most {self.max_length}")
            rows.append([self.index[w] for w in words])
        length = max(len(r) for r in rows)
        ids = torch.zeros(len(rows), length, dtype=torch.long)
        mask = torch.zeros(len(rows), length, dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = torch.tensor(r)
            mask[i, : len(r)] = 1
        return ids, mask

    def forward(self, prompts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """(embeddings[B, L, D], mask[B, L]) for B prompts; '' gives the <null> token."""
        ids, mask = self.tokenize(prompts)
        ids, mask = ids.to(self.words.weight.device), mask.to(self.words.weight.device)
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.words(ids) + self.positions(positions)[None], mask

    def save_pretrained(self, folder: str | Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(
            json.dumps({"vocabulary": self.vocabulary, "dim": self.words.embedding_dim, "max_length": self.max_length}, indent=1)
        )
        save_file({k: v.contiguous() for k, v in self.state_dict().items()}, str(folder / "model.safetensors"))

    @classmethod
    def from_pretrained(cls, folder: str | Path) -> "ToyTextEncoder":
        folder = Path(folder)
        config = json.loads((folder / "config.json").read_text())
        encoder = cls(config["vocabulary"], config["dim"], config["max_length"])
        encoder.load_state_dict(load_file(str(folder / "model.safetensors")))
        return encoder
