"""MLflow's own UI in headless Chromium: `mlflow ui` on a study's database, opened at the links `tvrl-sweep` printed.

`printed_links` reads the links and the `mlflow ui` command from a sweep's output; `MlflowUi` runs that command on
a free loopback port; `StudyPage` opens a link and reads what a person sees: the runs table's rows and cells, and
in the chart view the run colours of the curves drawn in one metric's chart (each run's curve is drawn in the
colour its row shows).

Run as a script, it makes the README's screenshots from any study's sweep output:

    tvrl-sweep sweeps/quickstart.gin | tee sweep.txt
    python -m tests.tracking.mlflow_ui sweep.txt docs/       # docs/mlflow_runs.png, docs/mlflow_charts.png
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import requests

from tests.annotate.helpers import free_port
from tests.annotate.test_browser import CHROMIUM_FLAGS, chromium_executable
from tests.support import console_script

VIEWPORT = {"width": 1600, "height": 1000}
CARD = "[data-testid=experiment-view-compare-runs-card]"


@dataclass(frozen=True)
class Links:
    runs: str
    charts: str
    serve: str | None  # the `mlflow ui ...` command printed with them


def printed_links(output: str) -> Links:
    """The links block a sweep ends with: `MLflow UI (after `CMD`):`, then `  runs URL` and `  charts URL`."""
    head = re.search(r"^MLflow UI \((?:after `(?P<serve>[^`]+)`|on the tracking server)\):$", output, re.M)
    runs = re.search(r"^  runs   (\S+)$", output, re.M)
    charts = re.search(r"^  charts (\S+)$", output, re.M)
    assert head and runs and charts, f"no MLflow links at the end of the sweep's output:\n{output[-2000:]}"
    return Links(runs.group(1), charts.group(1), head.group("serve"))


def on_port(url: str, origin: str) -> str:
    """`url` with its scheme, host and port replaced by `origin` (the path, query and fragment kept)."""
    parts = urlsplit(url)
    return origin + url[len(f"{parts.scheme}://{parts.netloc}"):]


class MlflowUi:
    """The printed `mlflow ui` command, run with one worker on a free loopback port in `cwd` until `stop`."""

    def __init__(self, serve: str, cwd: Path, log: Path) -> None:
        args = shlex.split(serve)
        assert args[:2] == ["mlflow", "ui"], serve
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.log = log
        # one worker: the default four would start four copies of the server on the machine's cores
        command = [console_script("mlflow"), *args[1:], "--host", "127.0.0.1", "--port", str(self.port), "--workers", "1"]
        self.process = subprocess.Popen(command, cwd=cwd, stdout=log.open("w"), stderr=subprocess.STDOUT)
        self._wait()

    def _wait(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"mlflow ui exited {self.process.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                if requests.get(f"{self.origin}/health", timeout=2).ok:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise AssertionError(f"mlflow ui did not answer in {timeout:.0f} s:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class StudyPage:
    """One browser page on MLflow's experiment page."""

    def __init__(self, browser) -> None:
        self.page = browser.new_page(viewport=VIEWPORT)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def open(self, url: str, wait_for: str = ".ag-row") -> None:
        self.page.goto(url)
        self.page.wait_for_selector(wait_for, timeout=60_000)
        self.close_assistant()

    def close_assistant(self) -> None:
        """Close the MLflow Assistant panel, which opens by itself on a browser's first visit to a local server."""
        close = self.page.locator("[data-component-id='mlflow.assistant.chat_panel.close']")
        if close.count() and close.first.is_visible():
            close.first.click()

    def header_columns(self) -> list[str]:
        return self.page.eval_on_selector_all(".ag-header-cell", "cells => cells.map(c => c.getAttribute('col-id'))")

    def rows(self) -> dict[str, dict[str, str]]:
        """{run id: {column id: the cell's text}} of the rows the table shows, and each row's colour under
        `color` (ag-grid draws a row's pinned and scrolling parts as two elements with the same row-id)."""
        return self.page.evaluate("""() => {
            const rows = {};
            for (const row of document.querySelectorAll('.ag-row[row-id]')) {
                const cells = rows[row.getAttribute('row-id')] ||= {};
                for (const cell of row.querySelectorAll('[col-id]')) cells[cell.getAttribute('col-id')] = cell.innerText.trim();
                const color = row.querySelector('[data-testid=experiment-view-table-run-color] input');
                if (color) cells.color = color.value.toLowerCase();
            }
            return rows;
        }""")

    def js_number(self, value: float) -> str:
        """How the page's JavaScript writes `value` (the table shows metric values so)."""
        return self.page.evaluate("v => String(v)", value)

    def click_chart_view(self) -> None:
        self.page.locator("label:has(input[value=CHART])").click()
        self.page.wait_for_selector(CARD, timeout=60_000)

    def curve_colors(self, metric: str) -> set[str]:
        """Colours (#rrggbb) of the curves, lines through at least two points, in the chart of `metric`."""
        self.page.get_by_placeholder("Search metric charts").fill(metric)
        card = self.page.locator(CARD).filter(has=self.page.get_by_text(metric, exact=True))
        card.first.locator("g.trace path.js-line").first.wait_for(timeout=60_000)
        colors = card.first.evaluate("""card => Array.from(card.querySelectorAll('g.trace path.js-line'))
            .filter(p => ((p.getAttribute('d') || '').match(/L/g) || []).length >= 1)
            .map(p => getComputedStyle(p).stroke)""")
        self.page.get_by_placeholder("Search metric charts").fill("")
        return {_hex(c) for c in colors}

    def screenshot(self, path: Path) -> None:
        self.page.screenshot(path=str(path))


def _hex(css_color: str) -> str:
    r, g, b = (int(v) for v in re.findall(r"\d+", css_color)[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def launch(playwright):
    return playwright.chromium.launch(executable_path=chromium_executable(), args=CHROMIUM_FLAGS)


def screenshots(output: str, out_dir: Path, cwd: Path) -> list[Path]:
    """The runs table and the chart view at the links of a sweep's `output`, saved in `out_dir`."""
    from playwright.sync_api import sync_playwright

    links = printed_links(output)
    ui = MlflowUi(links.serve, cwd, out_dir / "mlflow_ui.log") if links.serve else None
    origin = ui.origin if ui else None
    written = [out_dir / "mlflow_runs.png", out_dir / "mlflow_charts.png"]
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = StudyPage(browser)
            page.open(on_port(links.runs, origin) if origin else links.runs)
            page.screenshot(written[0])
            page.open(on_port(links.charts, origin) if origin else links.charts, wait_for=f"{CARD} g.trace")
            page.page.wait_for_timeout(1500)
            page.screenshot(written[1])
            browser.close()
    finally:
        if ui:
            ui.stop()
    (out_dir / "mlflow_ui.log").unlink(missing_ok=True)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Screenshots of a study in MLflow's UI, from tvrl-sweep's output")
    parser.add_argument("output", type=Path, help="a file holding the sweep's output (its last lines: the links)")
    parser.add_argument("out_dir", type=Path, help="folder for mlflow_runs.png and mlflow_charts.png")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="folder the sweep ran in (default: here)")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for path in screenshots(args.output.read_text(), args.out_dir, args.cwd):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
