"""A trial's identity: the key that names it across reruns, resumes and sweeps."""

from __future__ import annotations

import hashlib

import gin


def canonical_config() -> str:
    """gin's full config text after parsing (sorted and normalised by gin), one binding per line."""
    return gin.config_str(max_line_length=10_000)


def trial_key(config_text: str | None = None) -> str:
    """16 hex digits of sha256 over the canonical config (the currently parsed gin config by default)."""
    text = canonical_config() if config_text is None else config_text
    return hashlib.sha256(text.encode()).hexdigest()[:16]
