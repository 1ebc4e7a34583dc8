"""Parameters that moved to another configurable: an old binding fails with one line naming its new binding."""

from __future__ import annotations

# (old selector, old parameter) -> new `selector.parameter`
RENAMED: dict[tuple[str, str], str] = {
    ("training.trial", "learning_rate"): "training.optimizer.learning_rate",
    ("training.trial", "betas"): "training.optimizer.betas",
    ("training.trial", "weight_decay"): "training.optimizer.weight_decay",
}


def renamed_message(selector: str, param: str) -> str | None:
    """What to write instead of binding `selector.param`, or None when that parameter never moved."""
    new = RENAMED.get((selector, param))
    if new is None:
        return None
    return f"'{selector}.{param}' has moved to '{new}'; bind it there instead: {new} = ..."
