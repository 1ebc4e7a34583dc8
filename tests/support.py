"""Helpers shared by tests that drive the installed console scripts."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def console_script(name: str) -> str:
    """Path of an installed console script (beside this Python first, so a venv or pyenv needs no rehash)."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"console script '{name}' is not installed: run `pip install -e .` first")
    return found
