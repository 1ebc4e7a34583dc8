"""The README and docs/ hold together: every relative link (and image) in README.md, docs/ (its subfolders included)
and the README of diagnostics/ points at a file that exists, and every docs page is named in the README's
documentation index.

Links inside code (fenced blocks and inline code spans) are not links. A link's `#anchor` is dropped before the
file is looked up (anchors are not checked); links with a scheme (`http:`, `https:`, `mailto:`, ...) are not
checked."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").rglob("*.md"))
PAGES = [README, *DOCS, ROOT / "diagnostics" / "README.md"]
INDEX_HEADING = "## Documentation"

# [text](target) and ![alt](target), an optional "title" after the target, the target optionally in <...>;
# the text may hold one level of nested brackets.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
# [label]: target (a reference-style link's definition; it starts a paragraph)
LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
# <a href="..."> and <img src="..."> in raw HTML
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def _prose_lines(text: str):
    """(line number, line) for every line outside fenced code blocks, with inline code spans blanked."""
    fence = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            continue
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            continue
        yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def links_in(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every link and image in a piece of Markdown, in order."""
    found = []
    lines = text.splitlines()
    for number, line in _prose_lines(text):
        targets = [m.group(1) for m in INLINE_LINK.finditer(line)] + [m.group(1) for m in HTML_LINK.finditer(line)]
        # a definition cannot interrupt a paragraph ("[-2.15, +2.56]: safe" continuing one is text)
        definition = LINK_DEFINITION.match(line)
        if definition and (number == 1 or not lines[number - 2].strip()):
            targets.append(definition.group(1))
        found += [(number, t[1:-1] if t.startswith("<") and t.endswith(">") else t) for t in targets]
    return found


def links(page: Path) -> list[tuple[int, str]]:
    return links_in(page.read_text(encoding="utf-8"))


def resolve(page: Path, target: str) -> Path | None:
    """The file a relative link points at, or None for a link this test does not check (a scheme, an anchor alone)."""
    if SCHEME.match(target):
        return None
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not path:
        return None  # "#anchor": a place in the page itself
    return Path(os.path.normpath((ROOT / path.lstrip("/")) if path.startswith("/") else (page.parent / path)))


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def test_the_pages_are_found():
    assert README.is_file() and len(DOCS) >= 10


def test_the_link_finder_reads_markdown():
    """The parser finds inline links, images, titles, angle brackets, HTML and definitions, and skips code."""
    text = (
        "See [a](docs/a.md#x), ![img](docs/p.png \"title\") and [b](<docs/b c.md>).\n"
        "Not `[code](docs/no.md)`, nor [web](https://example.org) (that one is found, then skipped).\n"
        "```\n[fenced](docs/fenced.md)\n```\n"
        "<img src=\"docs/h.png\" alt=\"\">\n"
        "\n[ref]: docs/ref.md\n"
        "a paragraph\n[-2.15, +2.56]: safe, inside seed noise\n"
    )
    found = links_in(text)
    assert found == [(1, "docs/a.md#x"), (1, "docs/p.png"), (1, "docs/b c.md"), (2, "https://example.org"),
                     (6, "docs/h.png"), (8, "docs/ref.md")]
    assert resolve(README, "https://example.org") is None and resolve(README, "#set-up-and-run") is None
    assert resolve(README, "docs/a.md#x") == ROOT / "docs" / "a.md"
    assert resolve(DOCS[0], "../README.md") == README and resolve(README, "./docs/../README.md") == README


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_resolves(page):
    broken = []
    for number, target in links(page):
        path = resolve(page, target)
        if path is not None and not path.exists():
            where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            broken.append(f"{_name(page)}:{number}: ({target}): {where} does not exist")
    assert not broken, "broken links:\n" + "\n".join(broken)


def _index_section() -> str:
    text = README.read_text(encoding="utf-8")
    assert INDEX_HEADING + "\n" in text, f"README.md has no '{INDEX_HEADING}' section (the index of docs/)"
    section = text.split(INDEX_HEADING + "\n", 1)[1]
    following = re.search(r"^#{1,2} ", section, re.MULTILINE)
    return section[: following.start()] if following else section


@pytest.mark.parametrize("page", DOCS, ids=_name)
def test_every_docs_page_is_in_the_readme_index(page):
    indexed = {resolve(README, target) for _, target in links_in(_index_section())}
    assert page in indexed, (
        f"{_name(page)} is not linked from README.md's '{INDEX_HEADING}' section; add a line saying what it answers: "
        f"- [{_name(page)}]({_name(page)}): ..."
    )

