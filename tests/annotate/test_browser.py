"""The real page in headless Chromium: two annotators vote with clicks and keys, the server restarts mid-way.

The server is the `tvrl-bench annotate` console script in a subprocess; the browser is Debian's chromium driven by
Playwright. Which method is on which side is found from the video bytes the page plays (the toy study's file
hashes), so the expected judgments and win-rate numbers are computed here without asking the server.
A screenshot of the page is written to $TVRL_TEST_ARTIFACTS (else the test's tmp folder) as annotate.png.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
import requests

from tests.annotate.helpers import CliServer, free_port, listening_addresses, sha256, winrate_row
from tests.report.helpers import read_rendered
from tests.support import console_script

pytestmark = pytest.mark.integration

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
KEYS = {"left": "ArrowLeft", "right": "ArrowRight", "tie": "ArrowDown"}


def chromium_executable() -> str:
    """Debian's Chromium, installed with apt-get when it is missing and the tests run as root (a fresh machine
    then passes the README's test command as it is); else the test fails saying how to provide one."""
    path = os.environ.get("TVRL_CHROMIUM", "/usr/bin/chromium")
    if not Path(path).is_file() and "TVRL_CHROMIUM" not in os.environ:
        install_chromium()
    if not Path(path).is_file():
        pytest.fail(
            f"the browser test needs Chromium and found none at {path}: install Debian's package with "
            "`apt-get install -y chromium` (the test does it itself when run as root), or set TVRL_CHROMIUM to a "
            "Chromium binary",
            pytrace=False,
        )
    return path


def install_chromium() -> None:
    """`apt-get install chromium` where that is possible (root, apt-get present); quiet, bounded in time."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200, check=False)
        if done.returncode != 0:
            print(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
            return


def artifacts_dir(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("TVRL_TEST_ARTIFACTS") or tmp_path / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Annotator:
    """One person's page. `shown` tells which method is on each side from the bytes of the videos it plays."""

    def __init__(self, context, name: str, link: str, videos: dict[str, tuple[str, str, str]]) -> None:
        self.page = context.new_page()
        self.name = name
        self.link = link
        self.videos = videos
        self.final: dict[tuple[str, str], tuple[str, str]] = {}  # (prompt, seed) -> (verdict for TVRL, left method)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def open(self, link: str | None = None) -> None:
        self.link = link or self.link
        self.page.goto(self.link)
        self.wait_for_pair()

    def wait_for_pair(self, previous: str = "", finished_ok: bool = True) -> None:
        """Until the page shows a new pair with both videos loaded (or the finished screen, when `finished_ok`)."""
        self.page.wait_for_function(
            """([previous, finishedOk]) => {
                if (document.body.classList.contains('finished')) return finishedOk;
                const l = document.getElementById('left'), r = document.getElementById('right');
                return l.src && l.src !== previous && l.readyState >= 2 && r.readyState >= 2
                    && !document.getElementById('choose-left').disabled;
            }""",
            arg=[previous, finished_ok],
            timeout=15_000,
        )

    def progress(self) -> str:
        return self.page.inner_text("#progress-text")

    def finished(self) -> bool:
        return bool(self.page.evaluate("document.body.classList.contains('finished')"))

    def shown(self) -> tuple[str, str, str, str]:
        """(left method, right method, prompt, seed) of the pair on screen, from the videos' bytes."""
        found = []
        for side in ("left", "right"):
            src = self.page.eval_on_selector(f"#{side}", "v => v.src")
            found.append(self.videos[sha256(requests.get(src, timeout=10).content)])
        (left, prompt, seed), (right, prompt_r, seed_r) = found
        assert (prompt, seed) == (prompt_r, seed_r), "both sides must show the same prompt and seed"
        assert self.page.inner_text("#prompt") == prompt
        return left, right, prompt, seed

    def vote(self, choice: str, how: str) -> tuple[str, str]:
        """Vote `choice` (left / right / tie) with `how`: "click" (its button), "key" (← → ↓) or "space" (tie)."""
        left, right, prompt, seed = self.shown()
        src = self.page.eval_on_selector("#left", "v => v.src")
        if how == "click":
            self.page.click(f"#choose-{choice}")
        else:
            assert how == "key" or choice == "tie"
            self.page.keyboard.press(KEYS[choice] if how == "key" else " ")
        self.wait_for_pair(previous=src)
        winner = {"left": left, "right": right}.get(choice)
        verdict = "tie" if winner is None else ("win" if winner == "TVRL" else "loss")
        self.final[(prompt, seed)] = (verdict, left)
        return prompt, seed

    def prefer(self, method: str) -> str:
        """The side showing `method` now."""
        left, _, _, _ = self.shown()
        return "left" if left == method else "right"

    def back(self, how: str) -> None:
        src = self.page.eval_on_selector("#left", "v => v.src") if not self.finished() else ""
        if how == "click":
            self.page.click("#back")
        else:
            self.page.keyboard.press("Backspace")
        self.wait_for_pair(previous=src, finished_ok=False)

    def chosen(self) -> list[str]:
        return self.page.eval_on_selector_all("button.chosen", "bs => bs.map(b => b.dataset.choice)")


@pytest.mark.timeout(2400)  # a fresh machine installs Chromium first
def test_two_annotators_vote_in_chromium_through_a_restart(toy_study, tmp_path):
    from playwright.sync_api import sync_playwright

    executable = chromium_executable()
    store = tmp_path / "judgments.sqlite"
    port = free_port()
    args = ["--study", toy_study.study, "--a", "TVRL", "--b", "GRPO", "--tracking-uri", toy_study.uri,
            "--store", str(store), "--port", str(port)]
    server = CliServer(args + ["--annotators", "alice", "bob"], tmp_path).launch()
    received: list[tuple[str, dict, bytes]] = []

    def record(response) -> None:
        try:
            body = response.body()
        except Exception:  # a response cut by the server stopping has no body
            body = b""
        received.append((response.url, dict(response.headers), body))

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS, headless=True)
            server.wait()  # the browser started while the server read the study
            assert set(server.links) == {"alice", "bob"} and server.base_url == f"http://127.0.0.1:{port}"
            assert listening_addresses(port) == {"127.0.0.1"}  # loopback only without --host
            first_links = dict(server.links)
            contexts = [browser.new_context(viewport={"width": 1280, "height": 860}) for _ in range(2)]
            for context in contexts:
                context.on("response", record)
            alice = Annotator(contexts[0], "alice", server.links["alice"], toy_study.videos)
            bob = Annotator(contexts[1], "bob", server.links["bob"], toy_study.videos)
            alice.open()
            bob.open()
            assert alice.progress() == "0 / 6" and bob.progress() == "0 / 6"

            # both videos play together; P pauses both, the slider moves both, P plays both again
            alice.page.wait_for_timeout(600)
            playing = alice.page.evaluate("[left.paused, right.paused, Math.abs(left.currentTime - right.currentTime)]")
            assert playing[0] is False and playing[1] is False and playing[2] < 0.125  # within half a frame (4 fps)
            alice.page.keyboard.press("p")
            alice.page.evaluate("() => { const s = document.getElementById('seek'); s.value = '0.5';"
                                " s.dispatchEvent(new Event('input')); }")
            alice.page.wait_for_timeout(100)
            paused = alice.page.evaluate("[left.paused, right.paused, left.currentTime, right.currentTime, "
                                         "left.duration]")
            assert paused[0] and paused[1] and abs(paused[2] - paused[3]) < 1e-6 and paused[2] == pytest.approx(
                paused[4] / 2, abs=0.05)
            alice.page.keyboard.press("p")
            assert alice.page.evaluate("[left.paused, right.paused]") == [False, False]

            # alice: the better video (TVRL's) by click; then GRPO's by key, goes back and changes it; then a tie
            alice.vote(alice.prefer("TVRL"), "click")
            alice.vote(alice.prefer("GRPO"), "key")
            assert alice.progress() == "2 / 6"
            alice.back("key")
            assert alice.chosen() == [alice.prefer("GRPO")] and alice.progress() == "2 / 6"
            alice.vote(alice.prefer("TVRL"), "click")
            assert alice.progress() == "2 / 6"
            alice.vote("tie", "key")
            assert alice.progress() == "3 / 6"
            # bob: always the left video, once a tie with the space bar
            bob.vote("left", "key")
            bob.vote("tie", "space")
            assert bob.progress() == "2 / 6"

            # the server stops: a vote cannot be saved, and the page says so and stays on the pair
            assert server.stop() == 0
            before = alice.page.inner_text("#prompt")
            alice.page.keyboard.press("ArrowLeft")
            alice.page.wait_for_function("document.getElementById('status').className === 'error'")
            assert "Not saved" in alice.page.inner_text("#status") and alice.progress() == "3 / 6"
            assert alice.page.inner_text("#prompt") == before

            # restart without --annotators: the same links, everyone continues where they were
            server = CliServer(args, tmp_path).start()
            assert server.links == first_links
            alice.open()
            bob.open()
            assert alice.progress() == "3 / 6" and bob.progress() == "2 / 6"
            assert "Welcome back" in alice.page.inner_text("#status")
            assert alice.shown()[2:] not in alice.final  # a pair not judged yet
            alice.page.wait_for_timeout(700)
            screenshot = artifacts_dir(tmp_path) / "annotate.png"
            alice.page.screenshot(path=str(screenshot))
            assert screenshot.stat().st_size > 10_000

            alice.vote(alice.prefer("TVRL"), "key")
            alice.vote(alice.prefer("GRPO"), "click")
            alice.vote(alice.prefer("TVRL"), "click")
            assert alice.finished() and alice.progress() == "6 / 6"
            alice.back("click")  # change the last vote from the finished screen
            assert not alice.finished() and len(alice.chosen()) == 1
            alice.vote("tie", "click")
            assert alice.finished()
            bob.vote("right", "click")
            for _ in range(2):
                bob.vote("left", "key")
            bob.vote("tie", "key")
            assert bob.finished() and bob.progress() == "6 / 6"
            assert alice.errors == [] and bob.errors == []
            browser.close()
    finally:
        rc = server.stop()
    assert rc == 0

    # every vote in SQLite exactly once per annotator and pair, as cast
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        rows = conn.execute("SELECT judge, prompt, seed, sample, verdict, left_method, method_a, method_b "
                            "FROM judgments WHERE study = ?", (toy_study.study,)).fetchall()
    assert len(rows) == 12
    for who in (alice, bob):
        mine = {(p, s): (v, left) for j, p, s, k, v, left, a, b in rows if j == f"human:{who.name}"}
        assert len(mine) == 6 and mine == who.final
    assert {(a, b) for *_, a, b in rows} == {("TVRL", "GRPO")}

    # nothing the browser received names a method, a run or a credit preset
    assert len(received) > 20
    forbidden = [w.lower() for w in toy_study.forbidden()]
    leaks = [(w, url) for url, headers, body in received for w in forbidden
             if w in url.lower() or w in repr(headers).lower() or w.encode() in body.lower()]
    assert leaks == []

    # tvrl-report renders the win-rate table from these votes
    out = tmp_path / "reports"
    done = subprocess.run([console_script("tvrl-report"), "--study", toy_study.study, "--tracking-uri",
                           toy_study.uri, "--out", str(out), "--judgments", str(store), "--tables", "winrate",
                           "--format", "md", "--no-plots", "--no-log"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    header, table = read_rendered(out / toy_study.study, "winrate", "md")
    votes = [(seed, verdict) for who in (alice, bob) for (prompt, seed), (verdict, _) in who.final.items()]
    expected = winrate_row(votes)
    assert len(table) == 1 and table[0][0] == "TVRL vs GRPO"
    cells = dict(zip(header, table[0]))
    assert {k: cells[k] for k in expected} == expected
