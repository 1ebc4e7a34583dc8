"""The study page of a small real sweep, opened from disk in headless Chromium (Debian's, driven by Playwright, as
the annotation page's browser test): its table, the flagged reward-hacking line of a run made to hack, the final
videos of every method playing, and the credit maps of both routers.

The sweep is `tvrl-sweep` itself (two workers) on the shipped v1 toy base, with a profile of its own: the base model
and two trained methods, one per router, 3 seeds (9 trials), 4 steps at a learning rate of 1e-2 (100 x the toy
profile's), which the `toy_pattern` critic (a bright top-left corner, which no prompt asks for) turns into reward
hacking with window credit: its critic reward rises over the base's while the exact evaluator's score collapses.
toy_oracle's method (uniform credit) is compared with its own step-0 evaluation (the base was scored by
toy_pattern) and not flagged. About a minute on two cores. A screenshot of the page is written to
$TVRL_TEST_ARTIFACTS (else the test's tmp folder) as study_page.png.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.annotate.test_browser import CHROMIUM_FLAGS, artifacts_dir, chromium_executable
from tests.reliability.helpers import run
from tests.training.conftest import FAST

pytestmark = pytest.mark.integration

HACKER = "toy_pattern-window3"
CONTROL = "toy_oracle-uniform"  # an honest critic, the other router


# The study's own profile (the toy_v1.gin regime, written out so the test does not follow the default
# profile's changes): the v1 base, SAGE, GRPO's objective, the exact toy evaluator and dataset.
PROFILE = """
include 'components/policies/toy.gin'
include 'components/samplers/sage.gin'
include 'components/rewards/toy_oracle.gin'
include 'components/credit/window3.gin'
include 'components/objectives/grpo.gin'
include 'components/evaluators/toy.gin'
include 'components/datasets/toy.gin'
policies.toy.base = 'v1'
training.trial.schedule = @training.schedule()
training.schedule.shift = 1.0
training.schedule.sde_window = (0, 2)
training.schedule.train_fraction = 1.0
training.schedule.shuffle = False
training.trial.keep_rollout_graph = True
training.trial.max_grad_norm = 1.0
training.trial.checkpoint_every = 10
"""


def write_study(folder: Path) -> Path:
    (folder / "page_profile.gin").write_text(PROFILE)
    bindings = [*FAST, "training.trial.steps = 4", "training.optimizer.learning_rate = 1e-2",
                "training.trial.eval_every = 2", "training.trial.log_media_every = 2", "training.trial.eval_prompts = 6"]
    lines = ["sweeps.study.name = 'page'", f"sweeps.study.profile = '{folder / 'page_profile.gin'}'",
             "sweeps.study.axes = {'credit': ['window3', 'uniform'], 'reward': ['toy_pattern', 'toy_oracle']}",
             "sweeps.study.exclude = [{'credit': 'uniform', 'reward': 'toy_pattern'}, "
             "{'credit': 'window3', 'reward': 'toy_oracle'}]",
             "sweeps.study.seeds = [0, 1, 2]", "sweeps.study.base = True", "sweeps.study.tables = ['credit']",
             "sweeps.study.bindings = [", *[f"    {b!r}," for b in bindings], "]"]
    path = folder / "page.gin"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("page_sweep")
    study = write_study(folder)
    uri, out = f"sqlite:///{folder / 'mlflow.db'}", folder / "out"
    result = run(folder, "tvrl-sweep", str(study), "--tracking-uri", uri, "--out", str(out), "--no-progress",
                 "--workers", "2")
    assert result.returncode == 0, result.stderr[-3000:]
    return result, out / "reports" / "page"


def test_the_sweep_ends_with_the_page_and_the_flag_before_the_mlflow_links(swept):
    result, folder = swept
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  study page: "))
    assert lines[at] == f"  study page: {folder / 'index.html'} (final scores from eval/*)"
    assert lines[at + 1].startswith(f"  reward hacking? {HACKER}: critic gain +")
    assert lines[at + 2].startswith("MLflow UI")  # the links stay last
    rows = {r["method"]: r for r in csv.DictReader(open(folder / "page_hacking.csv", newline=""))}
    assert set(rows) == {CONTROL, HACKER}
    assert rows[HACKER]["flagged"] == "1" and float(rows[HACKER]["gap_ci_low"]) > 0
    assert rows[HACKER]["baseline"] == "the base model"
    assert rows[CONTROL]["baseline"] == "its own step-0 evaluation"
    assert rows[CONTROL]["flagged"] == "0"


@pytest.mark.timeout(2400)  # a fresh machine installs Chromium first
def test_the_page_opens_from_disk_in_chromium(swept, tmp_path):
    from playwright.sync_api import sync_playwright

    _, folder = swept
    executable = chromium_executable()
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto((folder / "index.html").as_uri())

            # the table, with its one-line answer
            rows = page.eval_on_selector_all("#table-credit table tbody tr", "rs => rs.map(r => r.cells[0].innerText)")
            assert rows == ["Uniform (GRPO)", "3×3 window (default)"]
            assert page.inner_text("#table-credit .answer")

            # the flagged line, on top and in the panel
            flags = page.eval_on_selector_all(".hacking-flag", "ps => ps.map(p => p.innerText)")
            assert len(flags) == 1 and flags[0].startswith(f"⚠ reward hacking? {HACKER}: critic gain +")
            assert page.inner_text(f'#hacking-table tr.flagged[data-method="{HACKER}"] .verdict').startswith("flagged: reward hacking")

            # every method's video of the first prompt plays (Chromium autoplays muted videos once they are on screen)
            page.locator("#videos .prompt").first.scroll_into_view_if_needed()
            page.wait_for_function(
                """() => [...document.querySelectorAll('#videos .prompt')[0].querySelectorAll('video')]
                        .filter(v => v.readyState >= 2 && !v.paused).length >= 3""", timeout=15_000)
            first = page.evaluate("""() => [...document.querySelectorAll('#videos .prompt')[0]
                .querySelectorAll('figure.sample')].map(f => [f.dataset.method, f.querySelector('video').currentTime])""")
            page.wait_for_timeout(700)
            later = page.evaluate("""() => [...document.querySelectorAll('#videos .prompt')[0]
                .querySelectorAll('figure.sample')].map(f => [f.dataset.method, f.querySelector('video').currentTime,
                                                             f.querySelector('video').videoWidth])""")
            methods = [m for m, _ in first]
            assert methods == ["base", CONTROL, HACKER]
            moved = [m for (m, t0), (_, t1, width) in zip(first, later) if t1 != t0 and width > 0]
            assert len(moved) >= 2, (first, later)
            verdicts = page.evaluate("""() => [...document.querySelectorAll('#videos .prompt')[0]
                .querySelectorAll('figure.sample')].map(f => f.querySelectorAll('ul.verdicts li').length)""")
            assert len(verdicts) == 3 and min(verdicts) >= 1  # the evaluator's verdict per check under each video

            # one credit map per trained method, both routers, every image decoded
            maps = page.evaluate("""() => [...document.querySelectorAll('figure.credit-map')].map(f => [
                f.dataset.method, f.querySelector('figcaption').innerText, f.querySelector('img').complete,
                f.querySelector('img').naturalWidth])""")
            assert [m[0] for m in maps] == [CONTROL, HACKER]
            assert all(complete and width > 100 for _, _, complete, width in maps)
            assert any("router uniform" in caption for _, caption, _, _ in maps)
            assert any("router window3" in caption for _, caption, _, _ in maps)

            # the probability of improvement table
            assert page.eval_on_selector_all("#improvement-table tbody tr", "rs => rs.length") == 3  # the pairs
            page.screenshot(path=str(artifacts_dir(tmp_path) / "study_page.png"), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert all(url.startswith(("file:", "data:")) for url in requests)  # nothing from a server
