"""The vivid-colour relation of the palette: which colours a vivid-biased labeler prefers to the one asked.

A one-channel colour (red, green, blue: one RGB channel at 1, the others at 0) has two "lures" in the slot world's
palette: the two-channel colours (both channels at 1, the third at 0) that share its channel (red: yellow and
magenta; green: yellow and cyan; blue: magenta and cyan). The slot bases already draw them where a primary is asked
(docs/toy/critics.md measures how often), which is what makes a critic that prefers them exploitable by RL.

- `lures(colour, palette)`: the palette's lures of `colour` (empty for a colour that is not one-channel);
- `vivid_yes_probability(asked, seen, bias)`: what the vivid-biased labeler answers Yes with, for a check asking
  `asked` of a slot showing `seen`: `bias` for a lure, 1 - bias / 3 for the asked primary itself, None where the
  bias does not apply (the exact label stands). `bias` in [0, 1]: 0 is the exact labeler, 0.75 pays a lure as
  much as the truth, above it the lure more (0.9: lure 0.9, truth 0.7).
"""

from __future__ import annotations

from tvrl_bench.world.palette import rgb

BIAS_RANGE = (0.0, 1.0)
TRUTH_DISCOUNT = 1.0 / 3.0  # truth's Yes probability falls by bias / 3: at 0.75 lure and truth are paid alike


def _channels(colour: str) -> frozenset[int]:
    """The RGB channels at full strength; empty when some channel is partial (orange, purple)."""
    values = rgb(colour)
    if any(0.0 < v < 1.0 for v in values):
        return frozenset()
    return frozenset(i for i, v in enumerate(values) if v == 1.0)


def lures(colour: str, palette: tuple[str, ...]) -> tuple[str, ...]:
    """The two-channel colours of `palette` that share one-channel `colour`'s channel (empty otherwise)."""
    own = _channels(colour)
    if len(own) != 1:
        return ()
    return tuple(c for c in palette if len(_channels(c)) == 2 and own <= _channels(c))


def check_bias(bias: float, name: str = "vivid_bias") -> None:
    """ValueError naming `bias` and the range unless it lies in BIAS_RANGE."""
    low, high = BIAS_RANGE
    if not low <= bias <= high:
        raise ValueError(f"{name}={bias}: must be in [{low:g}, {high:g}] (0: exact labels; 0.75: a lure paid as "
                         f"much as the asked colour; 0.9: the shipped hackable critic)")


def vivid_yes_probability(asked: str, seen: str | None, bias: float, palette: tuple[str, ...]) -> float | None:
    """The vivid labeler's Yes probability for a check asking `asked` of a slot showing `seen` (None: the
    evaluator's exact label stands: a colour without lures, a slot showing neither the asked colour nor a lure)."""
    if bias == 0.0 or seen is None:
        return None
    options = lures(asked, palette)
    if not options:
        return None
    if seen in options:
        return bias
    if seen == asked:
        return 1.0 - bias * TRUTH_DISCOUNT
    return None
