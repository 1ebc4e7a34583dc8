"""The annotation page is package data (tvrl_bench/annotate/page.html), read once into `PAGE_HTML`."""

from __future__ import annotations

import fnmatch
import tomllib
from importlib import resources
from pathlib import Path

from tvrl_bench.annotate.page import PAGE_HTML

ROOT = Path(__file__).resolve().parents[2]


def test_the_page_is_the_html_file_beside_the_module():
    assert PAGE_HTML == resources.files("tvrl_bench.annotate").joinpath("page.html").read_text(encoding="utf-8")
    assert PAGE_HTML.startswith("<!DOCTYPE html>\n") and PAGE_HTML.endswith("</html>\n")
    assert "<script>" in PAGE_HTML and "<style>" in PAGE_HTML  # self-contained: inline CSS and JS
    assert 'src="http' not in PAGE_HTML and 'href="http' not in PAGE_HTML  # no external files


def test_pyproject_ships_the_page_as_package_data():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = setuptools["package-data"].get("tvrl_bench", [])
    assert any(fnmatch.fnmatch("annotate/page.html", pattern) for pattern in patterns), patterns
