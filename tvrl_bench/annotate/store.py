"""SQLite storage of blind studies, in the judgments file `tvrl-report` reads (default reports/judgments.sqlite).

Votes are `Judgment` records in its `judgments` table (judge "human:<annotator>"; one per annotator and pair, a new
vote replacing the old). Three more tables hold what a restarted server needs to continue where everyone was:

- `annotate_sessions`: one per (study, method A, method B), with the secret the opaque ids are made from;
- `annotate_annotators`: name and token of each annotator of a session;
- `annotate_assignments`: each annotator's order of the pairs (position) and which side A was shown on.

The file is in WAL mode with full syncs: a vote is on disk when `add_vote` returns.
"""

from __future__ import annotations

import datetime as dt
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from tvrl_bench.annotate.annotators import JUDGE_PREFIX, new_token
from tvrl_bench.report.winrate.judgments import CSV_COLUMNS, Judgment, JudgmentStore

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS annotate_sessions (
        id INTEGER PRIMARY KEY,
        study TEXT NOT NULL,
        method_a TEXT NOT NULL,
        method_b TEXT NOT NULL,
        secret TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (study, method_a, method_b)
    )""",
    """CREATE TABLE IF NOT EXISTS annotate_annotators (
        session_id INTEGER NOT NULL REFERENCES annotate_sessions (id),
        name TEXT NOT NULL,
        token TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, name)
    )""",
    """CREATE TABLE IF NOT EXISTS annotate_assignments (
        session_id INTEGER NOT NULL REFERENCES annotate_sessions (id),
        name TEXT NOT NULL,
        position INTEGER NOT NULL,
        pair_id TEXT NOT NULL,
        left_side TEXT NOT NULL CHECK (left_side IN ('a', 'b')),
        PRIMARY KEY (session_id, name, pair_id),
        UNIQUE (session_id, name, position)
    )""",
)


@dataclass(frozen=True)
class SessionRecord:
    id: int
    study: str
    method_a: str
    method_b: str
    secret: str


@dataclass(frozen=True)
class Assignment:
    """Where a pair sits in an annotator's list and which side method A is shown on ("a" = left)."""

    position: int
    pair_id: str
    left_side: str


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


class VoteStore:
    """The judgments file plus the annotation tables; safe to use from the server's worker threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.judgments = JudgmentStore(self.path, wal=True)  # creates the file and the judgments table, WAL on
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._conn.execute("PRAGMA synchronous=FULL")
        with self._conn:
            for statement in _SCHEMA:
                self._conn.execute(statement)

    def __enter__(self) -> "VoteStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()
        self.judgments.close()

    def journal_mode(self) -> str:
        with self._lock:
            return str(self._conn.execute("PRAGMA journal_mode").fetchone()[0])

    # ---- sessions and annotators --------------------------------------------------------------------------------

    def session(self, study: str, method_a: str, method_b: str) -> SessionRecord:
        """The session of (study, A, B), created with a fresh secret the first time."""
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR IGNORE INTO annotate_sessions (study, method_a, method_b, secret, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (study, method_a, method_b, secrets.token_hex(32), _now()),
            )
            row = self._conn.execute(
                "SELECT id, secret FROM annotate_sessions WHERE study = ? AND method_a = ? AND method_b = ?",
                (study, method_a, method_b),
            ).fetchone()
        return SessionRecord(int(row[0]), study, method_a, method_b, str(row[1]))

    def annotators(self, session_id: int) -> dict[str, str]:
        """{name: token} of a session's annotators, in the order they were added."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT name, token FROM annotate_annotators WHERE session_id = ? ORDER BY rowid", (session_id,)
            ).fetchall()
        return {name: token for name, token in rows}

    def add_annotator(self, session_id: int, name: str) -> str:
        """The token of annotator `name` (a new one the first time)."""
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR IGNORE INTO annotate_annotators (session_id, name, token, created_at) VALUES (?, ?, ?, ?)",
                (session_id, name, new_token(), _now()),
            )
            row = self._conn.execute(
                "SELECT token FROM annotate_annotators WHERE session_id = ? AND name = ?", (session_id, name)
            ).fetchone()
        return str(row[0])

    # ---- assignments ----------------------------------------------------------------------------------------------

    def assignments(self, session_id: int, name: str) -> list[Assignment]:
        """An annotator's assignments in position order."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT position, pair_id, left_side FROM annotate_assignments WHERE session_id = ? AND name = ? "
                "ORDER BY position",
                (session_id, name),
            ).fetchall()
        return [Assignment(int(pos), pair, side) for pos, pair, side in rows]

    def add_assignments(self, session_id: int, name: str, assignments: Iterable[Assignment]) -> None:
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT INTO annotate_assignments (session_id, name, position, pair_id, left_side) "
                "VALUES (?, ?, ?, ?, ?)",
                [(session_id, name, a.position, a.pair_id, a.left_side) for a in assignments],
            )

    # ---- votes --------------------------------------------------------------------------------------------------

    def add_vote(self, judgment: Judgment) -> None:
        """Store one vote (replacing that judge's earlier vote on the pair); committed and synced on return."""
        self.judgments.add([judgment])

    def verdicts(
        self, study: str, method_a: str, method_b: str, judge: str
    ) -> dict[tuple[str, str, int], tuple[str, str]]:
        """{(prompt, seed, sample): (left, verdict)} of one judge."""
        return self.judgments.verdicts(study, method_a, method_b, judge)

    def export_csv(self, path: str | Path, study: str, method_a: str | None = None, method_b: str | None = None) -> int:
        """Write the people's votes of `study` (judges "human:*"; of A against B when given) as a judgments CSV that
        `tvrl-report --import-judgments` reads (columns CSV_COLUMNS); returns the number of rows."""
        frame = self.judgments.frame(study)
        keep = frame["judge"].str.startswith(JUDGE_PREFIX)
        if method_a is not None:
            keep &= frame["method_a"] == method_a
        if method_b is not None:
            keep &= frame["method_b"] == method_b
        frame = frame[keep]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        frame[list(CSV_COLUMNS)].to_csv(path, index=False)
        return len(frame)
