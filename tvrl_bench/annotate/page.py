"""The annotation page: one self-contained HTML document (inline CSS and JS, no build step, no external files),
kept in page.html beside this module (package data) and read once at import as `PAGE_HTML`.

The page is the same for every annotator and every study: it reads its API base from its own URL (/a/<token>/),
asks the server for the annotator's state and items, and shows one prompt with two videos played in sync.
Keys: ← left is better, → right is better, ↓ or space: tie, Backspace: back to the previous pair, P: play/pause.
A vote is sent as JSON; the page moves on only when the server answered that it is saved.
"""

from __future__ import annotations

from importlib import resources

PAGE_HTML: str = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")
