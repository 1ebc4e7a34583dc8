"""The HunyuanVideo-1.5 policy's conditioning layout: valid tokens, zero padding, and the [cond; uncond] stack."""

from __future__ import annotations

import torch

from tvrl_bench.policies.hunyuan_text import COND_KEYS, conditioning, stack_with_negative, valid_tokens


def tokens(length: int, dim: int, value: float) -> torch.Tensor:
    return torch.full((length, dim), value)


def test_valid_tokens_keep_the_masked_rows_in_the_dtype():
    embeds = torch.arange(2 * 3 * 2, dtype=torch.float32).reshape(2, 3, 2)
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    rows = valid_tokens(embeds, mask, torch.float64)
    assert [r.shape for r in rows] == [(2, 2), (1, 2)] and rows[0].dtype == torch.float64
    torch.testing.assert_close(rows[1], embeds[1, :1].double())


def test_conditioning_pads_both_halves_to_the_longest_row():
    pos = [(tokens(3, 4, 1.0), tokens(0, 2, 0.0)), (tokens(1, 4, 2.0), tokens(2, 2, 3.0))]
    neg = [(tokens(2, 4, -1.0), tokens(0, 2, 0.0))] * 2
    cond = conditioning(pos, neg)
    assert set(cond) == {*COND_KEYS, *(f"neg_{k}" for k in COND_KEYS)}
    assert cond["embeds"].shape == cond["neg_embeds"].shape == (2, 3, 4)
    assert cond["embeds_2"].shape == (2, 2, 2)
    assert cond["mask"].tolist() == [[1, 1, 1], [1, 0, 0]] and cond["neg_mask"].tolist() == [[1, 1, 0]] * 2
    assert cond["mask_2"].tolist() == [[0, 0], [1, 1]] and float(cond["embeds"][1, 1:].abs().sum()) == 0


def test_stack_with_negative_puts_uncond_second_at_a_common_length():
    cond = {"embeds": torch.ones(2, 3, 4), "mask": torch.ones(2, 3), "embeds_2": torch.ones(2, 1, 2),
            "mask_2": torch.ones(2, 1), "neg_embeds": -torch.ones(2, 5, 4), "neg_mask": torch.ones(2, 5),
            "neg_embeds_2": -torch.ones(2, 1, 2), "neg_mask_2": torch.ones(2, 1)}
    both = stack_with_negative(cond)
    assert set(both) == set(COND_KEYS)
    assert both["embeds"].shape == (4, 5, 4) and both["mask"].shape == (4, 5) and both["embeds_2"].shape == (4, 1, 2)
    assert both["mask"][:2, 3:].sum() == 0 and both["mask"][2:].sum() == 10
    torch.testing.assert_close(both["embeds"][2:], cond["neg_embeds"])
