"""The oracle on the slot world's checks: agreement with the evaluator, gradients inside the asked slot, an
ascent direction, and slot and sprite checks in one batch."""

from __future__ import annotations

import torch

from tvrl_bench.evaluators.toy import ToyEvaluator
from tvrl_bench.rewards.toy_oracle import ToyOracle
from tvrl_bench.world.slots import SLOTS, render_slots, sample_slot_scene, slot_box, slot_checks, slot_prompt


def scenes(n: int, seed: int = 0):
    return [sample_slot_scene(seed * 1000 + i) for i in range(n)]


def test_it_agrees_with_the_evaluator_on_clean_noisy_and_wrong_videos():
    """(On a 3 x 3 box blur, where only a square's 2 x 2 core keeps its colour within the evaluator's tolerance,
    the oracle counts the half-coloured rim and says yes where the evaluator says no: its agreement on the policy's
    own rollouts is measured by diagnostics/calibration.py.)"""
    oracle, evaluator = ToyOracle(score="prob"), ToyEvaluator()
    drawn = scenes(32)
    clean = render_slots(drawn)
    g = torch.Generator().manual_seed(0)
    noisy = (clean + 0.25 * torch.randn(clean.shape, generator=g)).clamp(0, 1)
    agree = total = 0
    for video in (clean, noisy):
        for shift in (0, 1):  # 1: every video asked another scene's checks
            asked = drawn[shift:] + drawn[:shift]
            questions = [q for s in asked for q in slot_checks(s.colours, s.slots)]
            index = torch.arange(len(drawn)).repeat_interleave(4)
            p = oracle.score_pairs(video[index], [""] * len(questions), questions)
            _, records = evaluator.evaluate_detailed(video, [slot_prompt(s.colours, s.slots) for s in asked],
                                                     [slot_checks(s.colours, s.slots) for s in asked])
            verdicts = torch.tensor([c["passed"] for r in records for c in r["checks"]])
            agree += int(((p > 0.5) == verdicts).sum())
            total += len(verdicts)
    assert agree / total == 1.0


def test_a_slot_checks_gradient_lies_in_its_slot_only():
    oracle = ToyOracle(score="prob")
    clean = render_slots(scenes(8, 1))
    g = torch.Generator().manual_seed(1)
    video = (clean + 0.2 * torch.randn(clean.shape, generator=g)).clamp(0, 1)
    for k, name in enumerate(SLOTS.slots):
        copies = video.clone().requires_grad_(True)
        questions = [f"Is the {name} object red?"] * len(video)
        oracle.score_pairs(copies, [""] * len(video), questions).sum().backward()
        x0, y0, x1, y1 = slot_box(name, 16, 16)
        inside = torch.zeros(16, 16, dtype=torch.bool)
        inside[y0:y1, x0:x1] = True
        magnitude = copies.grad.abs().sum(2)  # [B, F, H, W]
        assert float(magnitude[..., ~inside].abs().max()) == 0.0
        assert float(magnitude[..., inside].sum()) > 0


def test_its_gradient_raises_the_score_of_an_unsure_slot():
    oracle = ToyOracle(score="log_prob")
    clean = render_slots(scenes(12, 2)).double()
    g = torch.Generator().manual_seed(2)
    video = (0.6 * clean + 0.2 + 0.1 * torch.randn(clean.shape, generator=g, dtype=torch.float64)).clamp(0, 1)
    questions = [slot_checks(s.colours, s.slots)[i % 4] for i, s in enumerate(scenes(12, 2))]
    video.requires_grad_(True)
    before = oracle.score_pairs(video, [""] * 12, questions)
    before.sum().backward()
    step = video.grad / video.grad.flatten(1).norm(dim=1).clamp_min(1e-30)[:, None, None, None, None]
    with torch.no_grad():
        after = oracle.score_pairs(video + 1e-3 * step, [""] * 12, questions)
    unsure = before.detach() < -1e-3
    assert int(unsure.sum()) >= 4 and bool((after[unsure] > before.detach()[unsure]).all())


def test_slot_and_sprite_checks_in_one_batch_score_as_they_do_apart():
    oracle = ToyOracle(score="prob")
    video = render_slots(scenes(2, 3))
    slot_q = slot_checks(sample_slot_scene(3000).colours, SLOTS.slots)[0]
    mixed = oracle.score_pairs(video, ["", ""], [slot_q, "Is there a red object?"])
    alone = torch.stack([oracle.score_pairs(video[:1], [""], [slot_q])[0],
                         oracle.score_pairs(video[1:], [""], ["Is there a red object?"])[0]])
    assert torch.allclose(mixed, alone)
