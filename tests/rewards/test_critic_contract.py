"""The contract every checkpoint critic keeps, checked once for each on its tiny checkpoint.

A critic is frozen (no parameter requires grad, the model in eval mode); `score_pairs` of a batch gives finite
gradients on every video's pixels and none on the critic's parameters; and the batch, scored in sub-batches
(`batch_size=2`: batches of 2 and 1, checkpointed), equals the pairs scored one at a time, in scores and in gradients.

Each critic is built by its own test file's builder (`_critic`) on the tiny checkpoint that file uses
(tests/rewards/tiny_qwen, tiny_videoalign); what is particular to one critic stays in its file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest
import torch

from tests.rewards import test_toy_qwen_slots as tqs
from tests.rewards import test_toy_scorer_slots as tss
from tests.rewards import test_unifiedreward2 as ur2
from tests.rewards import test_videoalign as va
from tests.rewards import test_videoscore2 as vs2
from tests.rewards import tiny_qwen
from tests.rewards.tiny_videoalign import save_tiny_videoalign


@dataclass(frozen=True)
class Case:
    save: Callable[[Path], Any]  # writes the tiny checkpoint into a folder; returns what `build` takes
    build: Callable[..., Any]  # the critic's test file's `_critic(checkpoint, **overrides)`
    prompts: tuple[str, ...]
    questions: tuple[str, ...]  # one score name per pair
    overrides: dict[str, Any] = field(default_factory=dict)


CASES = {
    "toy_qwen_slots": Case(
        save=lambda folder: tqs.save_tiny(folder / "toy_qwen_slots"),
        build=tqs._critic,
        prompts=("p one", "p two", "p three"),
        questions=("Is the top left object red?", "Is the bottom right object cyan?", "Is the top right object blue?"),
    ),
    "toy_scorer_slots": Case(
        save=lambda folder: tss.save_tiny(folder / "toy_scorer_slots"),
        build=tss._critic,
        prompts=tuple(tss.PROMPTS) + (tss.PROMPTS[0],),
        questions=("TA", "TA", "TA"),
    ),
    "unifiedreward2": Case(
        save=lambda folder: str(tiny_qwen.save_tiny_qwen(folder / "qwen2_5_vl", "qwen2_5_vl", seed=2)),
        build=ur2._critic,
        prompts=("p one", "p two", "p three"),
        questions=("style", "alignment", "physics"),
    ),
    "videoalign": Case(
        save=lambda folder: save_tiny_videoalign(folder, fmt="full"),
        build=va._critic,
        prompts=tuple(va.PROMPTS),
        questions=("VQ", "TA", "MQ"),
        overrides={"prompt_template": va.SHORT},
    ),
    "videoscore2": Case(
        save=lambda folder: str(tiny_qwen.save_tiny_qwen(folder / "qwen2_5_vl", "qwen2_5_vl", seed=1)),
        build=vs2._critic,
        prompts=("p one", "p two", "p three"),
        questions=("physical_consistency", "visual_quality", "t2v_alignment"),
    ),
}


def _videos(n: int = 3, seed: int = 1) -> torch.Tensor:
    return torch.rand(n, 9, 3, 20, 28, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_frozen_and_batches_equal_single_pairs(name, tmp_path):
    case = CASES[name]
    critic = case.build(case.save(tmp_path), batch_size=2, **case.overrides)
    assert not any(p.requires_grad for p in critic.parameters()) and not critic.model.training
    videos = _videos().requires_grad_(True)
    prompts, questions = list(case.prompts), list(case.questions)
    batched = critic.score_pairs(videos, prompts, questions)  # batches of 2 and 1, checkpointed
    assert batched.shape == (3,) and torch.isfinite(batched).all()
    batched.sum().backward()
    assert torch.isfinite(videos.grad).all() and (videos.grad.abs().sum(dim=(1, 2, 3, 4)) > 0).all()
    assert not any(p.grad is not None for p in critic.parameters())
    for i in range(3):
        one = videos[i : i + 1].detach().clone().requires_grad_(True)
        score = critic.score_pairs(one, [prompts[i]], [questions[i]])
        score.sum().backward()
        torch.testing.assert_close(score.detach(), batched[i : i + 1].detach(), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(one.grad, videos.grad[i : i + 1], atol=1e-6, rtol=1e-4)
