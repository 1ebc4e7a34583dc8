"""Reading a study's record (reports/records/STUDY.jsonl) and checking all of it before anything is written.

`read_record` parses the file and checks every line's shape and types: the header (format, study, the parent run's
tags, each a string, and the optional `critic_card`: records.py's card format, one string a column in each row, with
the `critic` and `policy` columns the study page reads), then each trial (key, run name, tags and params of strings
or numbers, metrics as `[value, step]`, and the optional `history` of curves as `[[step, value], ...]` in step
order, ending at the metric's final value). `check_record` checks what the runs say: one profile (the trials'
`profile` param and the header's `tvrl.profile`), and one configuration per arm and seed (sweeps/same_trials.py).
`check_joins` checks the record against the study already in the store: the same profile, and no finished run of an
arm and seed the record holds under another trial key. Each problem is one RecordError line naming the file and
line, and the fix.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from tvrl_bench import registry
from tvrl_bench.sweeps.same_trials import differing_setting, run_slot
from tvrl_bench.tracking.params import profile_name

FORMAT = 1  # `history` and `critic_card` (records.py) are optional keys of format 1: without them, loads as before
PARENT_TAGS = ("tvrl.profile", "tvrl.decide", "tvrl.tables")  # what the study's sweep, report and page read
WRITE_IT = "write the file with `tvrl-bench record save STUDY`"
CARD_KEY = "critic_card"  # the header's copy of the parent run's critic card (records.py)
CARD_COLUMNS = ("critic", "policy")  # what the study page reads of every card row (report/study_page/critic_cards.py)
KEY_LENGTH, VALUE_LENGTH = 250, 6000  # what a trial logs (tracking/params.py), so what a record of it holds


class RecordError(Exception):
    """A record file that cannot be read or a study with nothing to record: one line for the user."""


def read_record(path: Path) -> tuple[dict, list[dict]]:
    """(header, trial records) of a record file, every line checked; RecordError naming the file and line."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise RecordError(f"{path}: cannot read the record ({exc.strerror}); give a file written by "
                          "`tvrl-bench record save`") from None
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}:{number}: not a JSON line ({exc.msg}); the file is not a record written by "
                              "`tvrl-bench record save`") from None
    header = entries[0] if entries else None
    if not isinstance(header, dict) or header.get("format") != FORMAT or "study" not in header:
        raise RecordError(f"{path}:1: no record header (format {FORMAT}, study); {WRITE_IT}")
    _check_header(path, header)
    keys: dict[str, int] = {}
    for number, entry in enumerate(entries[1:], start=2):
        _check_trial(f"{path}:{number}", entry)
        if entry["key"] in keys:
            raise RecordError(f"{path}:{number}: trial key {entry['key']} is recorded twice (line {keys[entry['key']]} "
                              f"too); keep one of them, or {WRITE_IT}")
        keys[entry["key"]] = number
    return header, entries[1:]


def _check_header(path: Path, header: dict) -> None:
    if not isinstance(header["study"], str) or not header["study"].strip():
        raise RecordError(f"{path}:1: the header's study = {header['study']!r} must name the study (a string)")
    tags = header.get("parent_tags", {})
    if not isinstance(tags, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in tags.items()):
        raise RecordError(f"{path}:1: the header's parent_tags = {tags!r} must map tag names to strings; {WRITE_IT}")
    problem = card_problem(header[CARD_KEY]) if CARD_KEY in header else None
    if problem:
        raise RecordError(f"{path}:1: the header's {CARD_KEY} {problem}; {WRITE_IT}, or drop the key (the record "
                          "loads without the card)")


def card_problem(card) -> str | None:
    """What is wrong with a card as records.py keeps it (`{"columns": [name, ...], "rows": [[value, ...], ...]}`,
    every name and value a string, the names distinct and among them `critic` and `policy`, one value a column in
    each row), or None when nothing is."""
    if not isinstance(card, dict) or set(card) != {"columns", "rows"}:
        return f'= {_short(card)} must be {{"columns": [name, ...], "rows": [[value, ...], ...]}}'
    columns, rows = card["columns"], card["rows"]
    if not isinstance(columns, list) or not all(isinstance(c, str) and c for c in columns) or \
            len(set(columns)) != len(columns):
        return f"columns = {_short(columns)} must be distinct column names (strings)"
    missing = [c for c in CARD_COLUMNS if c not in columns]
    if missing:
        return f"columns = {_short(columns)} lack {' and '.join(missing)} (the study page reads both of every row)"
    if not isinstance(rows, list):
        return f"rows = {_short(rows)} must be a list of rows"
    for index, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(columns) or not all(isinstance(v, str) for v in row):
            return f"rows[{index}] = {_short(row)} must be {len(columns)} strings, one a column"
    return None


def _short(value) -> str:
    """repr(value), cut to 80 characters."""
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _check_trial(where: str, entry) -> None:
    """RecordError when a trial line's fields are missing or of the wrong type."""
    if not isinstance(entry, dict) or not {"key", "params", "metrics"} <= set(entry):
        raise RecordError(f"{where}: a trial record needs key, params and metrics; {WRITE_IT}")
    if not isinstance(entry["key"], str) or not entry["key"]:
        raise RecordError(f"{where}: key = {entry['key']!r} must be the trial key (a string); {WRITE_IT}")
    if not isinstance(entry.get("run_name", ""), (str, type(None))):
        raise RecordError(f"{where}: run_name = {entry['run_name']!r} must be a string; {WRITE_IT}")
    for field, kinds, what in (("tags", (str,), "strings"), ("params", (str, int, float), "strings or numbers")):
        values = entry.get(field, {})
        if not isinstance(values, dict):
            raise RecordError(f"{where}: {field} must map names to {what}, not {type(values).__name__}; {WRITE_IT}")
        for name, value in values.items():
            if not isinstance(value, kinds) or isinstance(value, bool):
                raise RecordError(f"{where}: {field}[{name!r}] = {value!r} must be one of {what}; {WRITE_IT}")
            if len(name) > KEY_LENGTH or len(str(value)) > VALUE_LENGTH:
                raise RecordError(f"{where}: {field}[{name[:40]!r}...] is longer than a run holds ({KEY_LENGTH} "
                                  f"characters a name, {VALUE_LENGTH} a value); {WRITE_IT}")
    if not isinstance(entry["metrics"], dict):
        raise RecordError(f"{where}: metrics must map names to [value, step]; {WRITE_IT}")
    for name, pair in entry["metrics"].items():
        ok = isinstance(pair, list) and len(pair) == 2 and _number(pair[0]) and _step(pair[1])
        if not ok:
            raise RecordError(f"{where}: metrics[{name!r}] = {pair!r} must be [value, step] (a number and a step 0 or "
                              f"more); {WRITE_IT}")
    _check_history(where, entry)


def _check_history(where: str, entry: dict) -> None:
    """RecordError unless `history` (optional) maps metric names to [[step, value], ...] in step order whose last
    point is the name's final value in `metrics` (its last point is logged as that final value, once)."""
    curves = entry.get("history", {})
    if not isinstance(curves, dict):
        raise RecordError(f"{where}: history must map metric names to [[step, value], ...], not "
                          f"{type(curves).__name__}; {WRITE_IT}")
    for name, points in curves.items():
        shown = _short(points)
        ok = isinstance(points, list) and points and all(
            isinstance(p, list) and len(p) == 2 and _step(p[0]) and _number(p[1]) for p in points)
        if not ok or any(a[0] > b[0] for a, b in zip(points, points[1:])):
            raise RecordError(f"{where}: history[{name!r}] = {shown} must be a list of [step, value] pairs (a step 0 "
                              f"or more and a number) in step order; {WRITE_IT}")
        final = entry["metrics"].get(name)
        if final is None or final[1] != points[-1][0] or not _same(final[0], points[-1][1]):
            raise RecordError(f"{where}: history[{name!r}] ends at {points[-1]!r} but metrics[{name!r}] = {final!r}: a "
                              f"curve's last point is the metric's final [value, step]; {WRITE_IT}")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)  # NaN and inf are what a run logged


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _step(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def record_profile(path: Path, header: dict, trials: list[dict]) -> str | None:
    """The one profile the record's runs ran (their `profile` param, else the header's); RecordError when they
    name two, or one the header's `tvrl.profile` is not."""
    named = {t["params"]["profile"]: n for n, t in enumerate(trials, start=2) if "profile" in t["params"]}
    recorded = header.get("parent_tags", {}).get("tvrl.profile")
    if recorded is not None:
        named.setdefault(profile_name([recorded]), 1)
    if len(named) > 1:
        listed = ", ".join(f"{name} (line {line})" for name, line in sorted(named.items(), key=lambda kv: kv[1]))
        raise RecordError(f"{path}: the record holds runs of {len(named)} profiles: {listed}; a table would average "
                          f"them as one seed: keep one profile's runs per record ({WRITE_IT} for each study)")
    return next(iter(named), None)


def check_record(path: Path, header: dict, trials: list[dict]) -> str | None:
    """The record's profile (record_profile), after checking it holds one configuration per arm and seed."""
    profile = record_profile(path, header, trials)
    seen: dict[tuple, tuple[int, dict]] = {}
    for number, trial in enumerate(trials, start=2):
        slot = run_slot(trial["params"], registry.axes())
        if slot in seen and trial["key"] != seen[slot][1]["key"]:
            other = seen[slot]
            raise RecordError(f"{path}:{number}: this trial and line {other[0]}'s are the same arm and seed under two "
                              f"trial keys ({differing_setting(other[1]['params'], trial['params']) or 'another config'}"
                              f"); a table would average them as one seed: keep one of them")
        seen.setdefault(slot, (number, trial))
    return profile


def check_joins(path: Path, trials: list[dict], profile: str | None, found) -> None:
    """RecordError when the store's study (`found`: a sweeps/state.py StudyTracker, or None) holds finished runs of
    another profile, or of an arm and seed the record holds under another trial key."""
    if found is None:
        return
    runs = found.runs()
    finished = [run for key in runs.by_key if (run := runs.latest_finished(key)) is not None]
    study = found.study
    recorded = found.client.get_run(found.parent_run_id).data.tags.get("tvrl.profile")
    theirs = {run.data.params["profile"] for run in finished if "profile" in run.data.params}
    if recorded and finished:
        theirs.add(profile_name([recorded]))
    if profile is not None and theirs - {profile}:
        raise RecordError(f"{path}: the record's runs ran the profile {profile}, and study {study} in the store holds "
                          f"runs of {', '.join(sorted(theirs - {profile}))}: a table would average them as one seed; "
                          "load it into another store (--tracking-uri)")
    slots = {run_slot(run.data.params, registry.axes()): run for run in finished}
    for number, trial in enumerate(trials, start=2):
        run = slots.get(run_slot(trial["params"], registry.axes()))
        if run is not None and run.data.tags.get("tvrl.trial_key") != trial["key"]:
            setting = differing_setting(run.data.params, trial["params"]) or "another configuration"
            raise RecordError(f"{path}:{number}: study {study} in the store holds this trial's arm and seed under "
                              f"another trial key ({setting}): a table would average them as one seed; load the "
                              "record into another store (--tracking-uri)")
