"""What the docs quote stays true of the files that define it.

- Table names: a study file's header comment names (`x` table) only tables the study renders
  (`sweeps.study.tables`), and so does the README's quickstart paragraph; docs/sweeps.md's study tables give each
  study file its tables.
- The default profile's figures (components/profiles/toy.gin): steps, prompts and rollouts per step, the schedule,
  the learning rate, the eval prompts and the held-out prompts of the wide evaluation, each read through gin and
  the profile's dataset as a trial reads them, never written here; every place in QUOTES that quotes one quotes it.
- The package's rooms: the README's repository map names every unit of tvrl_bench/, docs/architecture.md's
  layer table puts each unit in its layer of tests/test_layers.py's LAYERS, and its paragraph on training/'s layers
  names every part of TRAINING_LAYERS.
- docs/results.md opens with its table of answers: a row for each of the paper's tables and the objectives study.
- Package inventories: a package's `__init__` docstring that names half or more of its parts (modules `x.py`,
  subpackages `x/`) names them all, and every module it names exists in the package.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import gin
import pytest

from tests.sweeps.test_study_list import STUDIES, table_rows
from tests.test_layers import LAYER_OF, PACKAGE
from tvrl_bench import registry
from tvrl_bench.config import load_config

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PROFILE = "components/profiles/toy.gin"
TABLES = re.compile(r"^sweeps\.study\.tables\s*=\s*(\[.*?\])", re.MULTILINE | re.DOTALL)
NAMED_TABLE = re.compile(r"`(\w+)`\s+tables?\b")


def tables_of(study: Path) -> list[str]:
    found = TABLES.search(study.read_text(encoding="utf-8"))
    return ast.literal_eval(found.group(1)) if found else []


def header_comment(path: Path) -> str:
    """A gin file's comment lines before its first statement, without their '#'."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#"))
    return "\n".join(lines)


@pytest.mark.parametrize("study", STUDIES, ids=lambda p: p.relative_to(ROOT / "sweeps").with_suffix("").as_posix())
def test_a_study_header_names_only_the_tables_it_renders(study):
    named = NAMED_TABLE.findall(header_comment(study))
    assert set(named) <= set(tables_of(study)), (
        f"{study.relative_to(ROOT)}'s header names the table(s) {sorted(set(named) - set(tables_of(study)))}; "
        f"it renders {tables_of(study)}")


def test_the_readme_names_the_quickstart_tables():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    paragraph = text[text.index("The quickstart evaluates"):].split("\n\n", 1)[0]
    named = NAMED_TABLE.findall(paragraph)
    assert named and set(named) <= set(tables_of(ROOT / "sweeps" / "quickstart.gin")), named


@pytest.mark.parametrize("first_header", ["study", "experiment record"])
def test_docs_sweeps_gives_each_study_its_tables(first_header):
    rows = table_rows((ROOT / "docs" / "sweeps.md").read_text(encoding="utf-8"), first_header)
    assert rows
    wrong = [f"{row[first_header]}: page {row['table']}, file {tables_of(ROOT / row[first_header].strip('`'))}"
             for row in rows
             if re.findall(r"`(\w+)`", row["table"]) != tables_of(ROOT / row[first_header].strip("`"))]
    assert not wrong, "docs/sweeps.md's table column differs from sweeps.study.tables:\n" + "\n".join(wrong)


def bound(name: str, configurable: type) -> object:
    """A parameter as the parsed config gives it: bound, or the configurable's own default."""
    try:
        return gin.query_parameter(name)
    except ValueError:
        return inspect.signature(configurable).parameters[name.rsplit(".", 1)[1]].default


@cache
def default_figures() -> dict[str, float]:
    """The default profile's figures the docs quote, read as a trial reads them."""
    from tvrl_bench.training.schedule import Schedule
    from tvrl_bench.training.settings import TrialSettings

    load_config([DEFAULT_PROFILE])
    try:
        trial = {name: bound(f"training.trial.{name}", TrialSettings) for name in (
            "steps", "prompts_per_step", "group_size", "eval_prompts", "eval_every", "wide_eval_prompts")}
        num_steps = bound("training.schedule.num_steps", Schedule)
        first, last = bound("training.schedule.sde_window", Schedule)
        learning_rate = gin.query_parameter("training.optimizer.learning_rate")
        held_out, dropped = registry.build("DATASET").held_out(trial["wide_eval_prompts"])
    finally:
        gin.clear_config()
    return {"steps": trial["steps"], "prompts_per_step": trial["prompts_per_step"], "group_size": trial["group_size"],
            "rollouts": trial["prompts_per_step"] * trial["group_size"], "eval_prompts": trial["eval_prompts"],
            "eval_every": trial["eval_every"], "held_out": len(held_out), "dropped": dropped,
            "denoising_steps": num_steps, "sde_steps": last - first, "learning_rate": learning_rate}


@dataclass(frozen=True)
class Quote:
    """Every match of `pattern` in `page` (whitespace collapsed; before `until`, when given) quotes the figures
    named in `figures`, one per group; `required`: the page must quote it at least once."""

    page: str
    pattern: str
    figures: tuple[str, ...]
    until: str | None = None
    required: bool = True


HELD_OUT = r"(\d+) held-out prompts"
QUOTES = [
    Quote("README.md", r"for (\d+) RL steps", ("steps",)),
    Quote("README.md", r"trains it for (\d+) steps", ("steps",)),
    Quote("README.md", r"evaluates every (\d+) steps", ("eval_every",)),
    Quote("README.md", HELD_OUT, ("held_out",)),
    Quote("sweeps/quickstart.gin", r"(\d+) RL steps", ("steps",)),
    Quote("sweeps/quickstart.gin", r"evaluated every (\d+) steps", ("eval_every",)),
    Quote("sweeps/quickstart.gin", HELD_OUT, ("held_out",)),
    *[Quote(p.relative_to(ROOT).as_posix(), HELD_OUT, ("held_out",), required=False)
      for p in STUDIES if p.parent.name == "sweeps" and p.name != "quickstart.gin"],
    Quote("docs/toy/rl.md", r"(\d+) steps x (\d+) prompts x (\d+) rollouts",
          ("steps", "prompts_per_step", "group_size")),
    Quote("docs/toy/rl.md", r"first (\d+) of (\d+) denoising steps, learning rate ([\d.e-]+)",
          ("sde_steps", "denoising_steps", "learning_rate")),
    Quote("docs/toy/rl.md", r"(\d+) fixed prompts every (\d+) steps; at the end (\d+) held-out prompts",
          ("eval_prompts", "eval_every", "held_out")),
    Quote("docs/toy/overview.md", r"(\d+) rollouts per optimizer step \((\d+) prompts x (\d+)\)",
          ("rollouts", "prompts_per_step", "group_size")),
    Quote("docs/toy/overview.md", r"learning rate ([\d.e-]+) \(", ("learning_rate",)),
    Quote("docs/toy/overview.md", r"(\d+) steps, evaluation every (\d+) steps on (\d+) fixed prompts and at the end on "
          r"(\d+) held-out prompts", ("steps", "eval_every", "eval_prompts", "held_out")),
    Quote("docs/results.md", HELD_OUT, ("held_out",), until="## The `toy_v3.gin` regime"),
    Quote("docs/results.md", r"(\d+) steps x (\d+) rollouts at ([\d.e-]+)\)", ("steps", "rollouts", "learning_rate")),
    Quote("docs/training.md", r"wide evaluation of (\d+) held-out prompts \((\d+) trained scenes left out\): \d+ of "
          r"(\d+) prompts", ("held_out", "dropped", "held_out")),
    Quote("docs/sweeps.md", r"keeps (\d+) unseen ones on the slot world", ("held_out",)),
    Quote("docs/training.md", r"the toy profile sets `learning_rate = ([\d.e-]+)`", ("learning_rate",)),
    Quote("docs/report.md", r"evaluation interval \((\d+) steps on the toy profile\)", ("eval_every",)),
    Quote("docs/toy/critics.md", r"the default trial's final policy, (\d+) steps", ("steps",)),
]


def quoted(quote: Quote) -> list[tuple[str, ...]]:
    """The groups of every match of the quote's pattern in its page."""
    text = (ROOT / quote.page).read_text(encoding="utf-8")
    if quote.until is not None:
        assert quote.until in text, f"{quote.page} has no '{quote.until}'"
        text = text[: text.index(quote.until)]
    if quote.page.endswith(".gin"):
        text = header_comment(ROOT / quote.page)
    return re.findall(quote.pattern, " ".join(text.split()))


@pytest.mark.parametrize("quote", QUOTES, ids=lambda q: f"{q.page}:{q.pattern[:30]}")
def test_the_docs_quote_the_default_profile(quote):
    figures = default_figures()
    found = [m if isinstance(m, tuple) else (m,) for m in quoted(quote)]
    assert found or not quote.required, f"{quote.page} no longer says /{quote.pattern}/: update QUOTES here"
    for groups in found:
        got = {name: float(text) for name, text in zip(quote.figures, groups)}
        want = {name: float(figures[name]) for name in quote.figures}
        assert got == want, f"{quote.page} quotes {got}; {DEFAULT_PROFILE} gives {want}"


def test_a_wrong_quote_is_caught(tmp_path, monkeypatch):
    """The quote checker is not vacuous: a page quoting 594 held-out prompts for the default fails."""
    (tmp_path / "page.md").write_text("scored on 594 held-out\n  prompts", encoding="utf-8")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    with pytest.raises(AssertionError, match="594"):
        test_the_docs_quote_the_default_profile(Quote("page.md", HELD_OUT, ("held_out",)))


def unit_names() -> dict[str, str]:
    """{unit: 'name/' for a subpackage, 'name.py' for a module} for every unit of tvrl_bench."""
    return {unit: f"{unit}/" if (PACKAGE / unit).is_dir() else f"{unit}.py" for unit in LAYER_OF}


PATH_NAME = re.compile(r"(?<![\w/.])([a-z_0-9]+(?:/|\.py))(?!\w)")


def test_the_readme_map_names_every_unit():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    entry = text[text.index("\ntvrl_bench/ ") + 1: text.index("\ncomponents/ ")].split(None, 1)[1]
    named = set(PATH_NAME.findall(entry))
    expected = set(unit_names().values()) | {"assets/"}
    assert named == expected, f"README's map of tvrl_bench/: missing {sorted(expected - named)}, " \
                              f"not units {sorted(named - expected)}"


def layer_table(text: str) -> dict[str, int]:
    """{unit name as written ('config/', 'registry.py'): layer} from the '| layer | unit | job |' table."""
    layers, layer = {}, None
    for row in table_rows(text, "layer"):
        if row["layer"]:
            layer = int(row["layer"].split()[0])
        for name in re.findall(r"`([^`]+)`", row["unit"]):
            layers[name] = layer
    return layers


def test_architecture_puts_each_unit_in_its_layer():
    page = layer_table((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    expected = {name: LAYER_OF[unit] for unit, name in unit_names().items()}
    assert page == expected, (f"docs/architecture.md's layers differ from tests/test_layers.py's: page "
                              f"{ {k: v for k, v in page.items() if expected.get(k) != v} }, "
                              f"LAYERS { {k: v for k, v in expected.items() if page.get(k) != v} }")


def inventory_problems(package: Path) -> list[str]:
    """What a package's `__init__` docstring gets wrong as an inventory (nothing when it names under half its
    parts: then it is no inventory)."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    parts = {f"{p.stem}.py" for p in package.glob("*.py") if p.stem != "__init__"}
    parts |= {f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()}
    named = set(PATH_NAME.findall(doc))
    if 2 * len(named & parts) < len(parts):
        return []
    anywhere = {p.name for p in package.rglob("*.py")}
    return [f"does not name {part}" for part in sorted(parts - named)] + [
        f"names {name}, which is not in the package" for name in sorted(named - parts)
        if name.endswith(".py") and name not in anywhere]


PACKAGES = sorted(p.parent for p in PACKAGE.rglob("__init__.py"))


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.relative_to(PACKAGE.parent).as_posix())
def test_a_package_inventory_names_every_part(package):
    problems = inventory_problems(package)
    assert not problems, f"{package.relative_to(PACKAGE.parent)}/__init__.py's docstring: " + "; ".join(problems)


def test_the_inventory_checker_sees_a_missing_and_a_ghost_module(tmp_path):
    package = tmp_path / "decisions"
    package.mkdir()
    (package / "__init__.py").write_text('"""sequential.py the test; design.py the design; planner.py plans."""\n')
    for name in ("sequential", "design", "outcome"):
        (package / f"{name}.py").write_text("")
    assert inventory_problems(package) == ["does not name outcome.py", "names planner.py, which is not in the package"]


def test_results_opens_with_one_table_answering_each_paper_table_and_the_objectives_study():
    """docs/results.md's first block under its title is the table of answers: a row for each of the paper's four
    tables and for the objectives study, each with the toy's answer, the paper's and whether they agree."""
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    first = text.split("\n\n")[1]
    rows = table_rows(first, first.split("|")[1].strip())
    assert rows and all(line.startswith("|") for line in first.splitlines()), "results.md must open with its table"
    assert [row[next(iter(row))].split(":")[0] for row in rows] == ["Table 1", "Table 2", "Table 3", "Table 4",
                                                                   "Objectives"]
    assert all(all(cell for cell in row.values()) for row in rows), "every row answers every column"


def test_architecture_names_every_part_of_training():
    """The paragraph on training/'s own layers names every part of TRAINING_LAYERS (a module `x.py`, a subpackage
    `x/`), and nothing else of training/."""
    from tests.test_layers import TRAINING_LAYER_OF

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    paragraph = text[text.index("`training/` is layered the same way inside"):].split("\n\n", 1)[0]
    named = {name.removesuffix(".py").removesuffix("/") for name in re.findall(r"`([a-z_]+(?:\.py|/))`", paragraph)}
    assert named - {"training"} == set(TRAINING_LAYER_OF), (
        f"docs/architecture.md's training/ layers: missing {sorted(set(TRAINING_LAYER_OF) - named)}, "
        f"not parts {sorted(named - set(TRAINING_LAYER_OF) - {'training'})}")
