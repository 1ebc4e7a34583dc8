"""Deterministic random streams derived from (seed, step, purpose, rank).

Every random draw of a trial comes from a generator derived from the trial seed and where it is used, so a
trial resumed at step k draws exactly what an uninterrupted trial draws at step k, with no RNG state to save.
"""

from __future__ import annotations

import hashlib

import torch


def derive_seed(seed: int, *keys: object) -> int:
    """A 63-bit seed from the trial seed and any keys (step, purpose name, rank)."""
    text = "/".join(str(k) for k in (seed, *keys))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


def generator(seed: int, *keys: object) -> torch.Generator:
    """A CPU generator seeded by derive_seed(seed, *keys)."""
    return torch.Generator().manual_seed(derive_seed(seed, *keys))
