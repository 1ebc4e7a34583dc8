"""The network of the learned toy critic: a question-conditioned (FiLM) convolutional yes/no classifier.

    videos[P, F, 3, H, W] in [0, 1], questions[P] (text)  ->  logits[P, 2]  (index 0 = No, 1 = Yes)

Inputs (9 channels per pixel and frame): rgb; rgb minus the frame's median colour (a background estimate; the
median is detached, since its gradient would land on one arbitrary pixel per frame, docs/toy/world.md); and the frame
difference rgb[t] - rgb[t-1] (zero at t = 0), which makes motion local: a sprite moving right leaves
+(sprite - background) on its leading edge and the opposite on its trailing edge.

    features  (question-independent, once per video)        [N, 9, F, H, W] -> [N, C0, F, H, W]
              spatial 3x3 conv (no activation yet)
    answer    (per (video, question) pair)                   -> logits[P, 2]
              FiLM from the question, ReLU                    (selects what the question is about, per pixel)
              stride-2 spatial 3x3 conv + temporal 3-tap conv, ReLU                     [P, C, F, H/2, W/2]
              `blocks` x: temporal 3-tap conv (the first with temporal stride 2) + skip, spatial 3x3 conv,
                          FiLM h = relu((1 + gamma(q)) * h + beta(q))
              max and mean over (frames, height, width), gated by (1 + g(q)), concatenated with q -> MLP -> 2

The question encoder is word-level: a bag of word embeddings over the toy vocabulary (mean over the question's
words), an MLP and a LayerNorm (so FiLM modulates strongly from the first step). Unknown words map to <unk>.
`features` runs once per video and `answer` once per pair (training shares a video's first layer over its
questions). No normalisation layers on the video path: a norm's statistics would mix every pixel of the video
into every answer and spread the gradient off the sprite; He initialisation keeps the signal's scale instead.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

PAD, UNK = "<pad>", "<unk>"
CONFIG_FILE, WEIGHTS_FILE = "config.json", "model.safetensors"


def toy_vocabulary() -> list[str]:
    """Every word of every toy check over the whole palette, shapes, motions and counts (sorted), after PAD/UNK."""
    from tvrl_bench.world.checks import CheckSpec
    from tvrl_bench.world.palette import BACKGROUNDS, SPRITE_COLOURS
    from tvrl_bench.world.vocabulary import MOTIONS, NUMBER_WORDS, SHAPES

    specs = [CheckSpec("object", colour=c, shape=s) for c in SPRITE_COLOURS for s in SHAPES]
    specs += [CheckSpec("colour", colour=c) for c in SPRITE_COLOURS]
    specs += [CheckSpec("shape", shape=s) for s in SHAPES]
    specs += [CheckSpec("motion", colour=c, shape=s, motion=m) for c in SPRITE_COLOURS for s in SHAPES for m in MOTIONS]
    specs += [CheckSpec("background", background=b) for b in BACKGROUNDS]
    specs += [CheckSpec("count", count=n) for n in NUMBER_WORDS]
    words = {w for spec in specs for w in question_words(spec.text())}
    return [PAD, UNK] + sorted(words)


def question_words(question: str) -> list[str]:
    """Lower-case words of a question, punctuation dropped: 'Is there a red circle?' -> [is, there, a, red, circle]."""
    cleaned = "".join(ch if ch.isalnum() else " " for ch in question.lower())
    return cleaned.split()


@dataclass(frozen=True)
class CriticConfig:
    """Architecture and input size of a toy critic network (written to config.json)."""

    vocabulary: list[str] = field(default_factory=toy_vocabulary)
    word_dim: int = 32
    question_dim: int = 64
    stem_width: int = 16
    width: int = 32
    blocks: int = 3
    head_hidden: int = 64
    frames: int = 8
    height: int = 16
    width_px: int = 16

    def to_json(self) -> dict:
        return {"architecture": "toy_film_conv", **asdict(self)}

    @classmethod
    def from_json(cls, data: dict) -> "CriticConfig":
        data = dict(data)
        kind = data.pop("architecture", None)
        if kind != "toy_film_conv":
            raise ValueError(f"not a toy_learned critic config: architecture={kind!r} (expected 'toy_film_conv')")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"toy_learned config has unknown field(s) {unknown}; fields are {sorted(known)}")
        return cls(**data)


class QuestionEncoder(nn.Module):
    """Word-level question encoder: questions[P] -> q[P, question_dim] (bag of word embeddings, then an MLP)."""

    def __init__(self, vocabulary: list[str], word_dim: int, question_dim: int):
        super().__init__()
        if vocabulary[:2] != [PAD, UNK]:
            raise ValueError(f"a toy critic vocabulary starts with {[PAD, UNK]}, got {vocabulary[:2]}")
        self.vocabulary = list(vocabulary)
        self.index = {w: i for i, w in enumerate(self.vocabulary)}
        self.words = nn.Embedding(len(self.vocabulary), word_dim, padding_idx=0)
        # The LayerNorm gives q unit scale, so FiLM modulates strongly from the first step: the answer is an
        # interaction of question and video (neither alone predicts it), and weak coupling means a long plateau.
        self.mlp = nn.Sequential(
            nn.Linear(word_dim, question_dim), nn.ReLU(), nn.Linear(question_dim, question_dim), nn.LayerNorm(question_dim)
        )

    def tokenize(self, questions: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Token ids [P, L] and mask [P, L] (1.0 = a word), padded to the longest question of the batch."""
        rows = [[self.index.get(w, 1) for w in question_words(q)] or [1] for q in questions]
        length = max((len(r) for r in rows), default=1)
        ids = torch.zeros(len(rows), length, dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = torch.tensor(r)
        return ids, (ids != 0).float()

    def forward(self, questions: list[str]) -> torch.Tensor:
        device = self.words.weight.device
        ids, mask = self.tokenize(questions)
        ids, mask = ids.to(device), mask.to(device)
        bag = (self.words(ids) * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        return self.mlp(bag)


def critic_inputs(videos: torch.Tensor) -> torch.Tensor:
    """x[P, 9, F, H, W] from videos[P, F, 3, H, W]: rgb, rgb minus the detached frame median, frame difference."""
    rgb = videos.transpose(1, 2)  # [P, 3, F, H, W]
    median = videos.detach().flatten(-2).median(-1).values  # [P, F, 3]: per frame and channel, over pixels
    centred = rgb - median.transpose(1, 2)[..., None, None]
    diff = F.pad(rgb[:, :, 1:] - rgb[:, :, :-1], (0, 0, 0, 0, 1, 0))
    return torch.cat([rgb, centred, diff], 1)


def _relu_init(conv: nn.Conv3d, gain: float = 1.0) -> nn.Conv3d:
    # He initialisation: without normalisation layers, PyTorch's default conv init shrinks the signal at every
    # layer, and the pooled features barely differ between videos (training then sits at chance for a long time).
    nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
    with torch.no_grad():
        conv.weight.mul_(gain)
    nn.init.zeros_(conv.bias)
    return conv


def _spatial(cin: int, cout: int, stride: int = 1) -> nn.Conv3d:
    return _relu_init(nn.Conv3d(cin, cout, (1, 3, 3), stride=(1, stride, stride), padding=(0, 1, 1)))


def _temporal(c: int, stride: int = 1) -> nn.Conv3d:
    # A residual branch (added to its input): half the gain keeps the sum's scale near the input's.
    return _relu_init(nn.Conv3d(c, c, (3, 1, 1), stride=(stride, 1, 1), padding=(1, 0, 0)), gain=0.5)


class FiLMBlock(nn.Module):
    """h[P, C, F, H, W] -> relu((1 + gamma(q)) * spatial(temporal(h) + h) + beta(q)); temporal stride optional."""

    def __init__(self, c: int, question_dim: int, temporal_stride: int = 1):
        super().__init__()
        self.temporal = _temporal(c, temporal_stride)
        self.spatial = _spatial(c, c)
        self.temporal_stride = temporal_stride
        self.film = nn.Linear(question_dim, 2 * c)

    def forward(self, h: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        """h[P, C, F, H, W] and question embeddings q[P, question_dim] -> [P, C, ceil(F / stride), H, W]."""
        h = self.temporal(h) + h[:, :, :: self.temporal_stride]
        gamma, beta = self.film(q)[..., None, None, None].chunk(2, 1)
        return F.relu((1 + gamma) * self.spatial(h) + beta)


class ToyCriticNet(nn.Module):
    """(videos[P, F, 3, H, W] in [0, 1], questions[P]) -> yes/no logits[P, 2] (see the module docstring)."""

    def __init__(self, config: CriticConfig):
        super().__init__()
        self.config = config
        c0, c = config.stem_width, config.width
        self.questions = QuestionEncoder(config.vocabulary, config.word_dim, config.question_dim)
        self.stem1 = _spatial(9, c0)
        self.stem_film = nn.Linear(config.question_dim, 2 * c0)
        self.stem2 = _spatial(c0, c, stride=2)
        self.stem2_t = _temporal(c)
        self.blocks = nn.ModuleList(
            FiLMBlock(c, config.question_dim, temporal_stride=2 if i == 0 else 1) for i in range(config.blocks)
        )
        self.readout_gate = nn.Linear(config.question_dim, 2 * c)
        self.head = nn.Sequential(nn.Linear(2 * c + config.question_dim, config.head_hidden), nn.ReLU(), nn.Linear(config.head_hidden, 2))

    def features(self, videos: torch.Tensor) -> torch.Tensor:
        """Question-independent first-layer features[N, C0, F, H, W] (before FiLM) of videos[N, F, 3, H, W]."""
        return self.stem1(critic_inputs(videos))

    def answer(self, features: torch.Tensor, questions: list[str]) -> torch.Tensor:
        """logits[P, 2] for first-layer features[P, ...] (one row per pair) and questions[P]."""
        q = self.questions(questions)
        gamma, beta = self.stem_film(q)[..., None, None, None].chunk(2, 1)
        h = F.relu((1 + gamma) * features + beta)
        s = self.stem2(h)
        h = F.relu(s + self.stem2_t(s))
        for block in self.blocks:
            h = block(h, q)
        pooled = torch.cat([h.amax((2, 3, 4)), h.mean((2, 3, 4))], 1) * (1 + self.readout_gate(q))
        return self.head(torch.cat([pooled, q], 1))

    def forward(self, videos: torch.Tensor, questions: list[str]) -> torch.Tensor:
        """logits[P, 2] for videos[P, F, 3, H, W] in [0, 1] and one question each."""
        return self.answer(self.features(videos), questions)

    # --- checkpoints ------------------------------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        """Write config.json and model.safetensors to `folder` (created)."""
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / CONFIG_FILE).write_text(json.dumps(self.config.to_json(), indent=1) + "\n")
        save_file({k: v.detach().contiguous() for k, v in self.state_dict().items()}, str(folder / WEIGHTS_FILE))
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> "ToyCriticNet":
        """The network saved in `folder` (config.json + model.safetensors)."""
        from safetensors.torch import load_file

        folder = Path(folder)
        config_path = folder / CONFIG_FILE
        try:
            config = CriticConfig.from_json(json.loads(config_path.read_text()))
        except (json.JSONDecodeError, TypeError) as error:
            raise ValueError(f"{config_path}: unreadable toy_learned config ({error})") from error
        net = cls(config)
        try:
            net.load_state_dict(load_file(str(folder / WEIGHTS_FILE)))
        except RuntimeError as error:  # missing / unexpected keys or shapes that differ from the config's
            raise ValueError(
                f"{folder / WEIGHTS_FILE} does not match {config_path}: {error}. "
                "Rebuild both with `tvrl-bench prepare-toy --what critic`"
            ) from error
        return net
