"""Gradient maps on the Qwen critic's own input grid: the merge packing of the patches undone."""

from __future__ import annotations

import torch

from tvrl_bench.rewards.qwen.credit import patch_credit
from tvrl_bench.rewards.qwen.video import patchify
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings


def test_patch_credit_undoes_the_merge_packing():
    settings = QwenVideoSettings(family="qwen3_vl", patch_size=2, temporal_patch_size=2, merge_size=2)
    frames = torch.rand(4, 3, 8, 12, requires_grad=True)
    patches, grid = patchify(frames, settings)
    g = torch.randn_like(patches)
    (dframes,) = torch.autograd.grad((patches * g).sum(), frames)
    expected = dframes.abs().reshape(2, 2, 3, 4, 2, 6, 2).sum(dim=(1, 2, 4, 6))  # [t, rows, cols] of 2x2 pixels
    got = patch_credit(g, torch.tensor([grid]), merge=2)[0]
    torch.testing.assert_close(got, expected)
