"""A study's critic card in its record, so the study page shows it after `record load` on a new machine.

`tvrl-bench critic-card --study STUDY` logs the card as the CSV artifact `critic_card.csv` on the study's parent run
(report/study_page/critic_cards.py reads it there). `saved_card` reads that CSV into the record header's
`critic_card` key as `{"columns": [name, ...], "rows": [[value, ...], ...]}`: its header row and its rows, in the
CSV's order, every value the CSV's string (blank lines are skipped, as the page's reader skips them).
`log_card` writes it back as `critic_card.csv` on a parent run that holds no card, so the page's reader gets the
same rows; a card the store already holds (measured there, or loaded before) is kept, so a reload changes nothing.
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

from tvrl_bench.sweeps.record_check import RecordError, card_problem


def saved_card(client, study: str, run_id: str) -> dict | None:
    """The card on the study's parent run `run_id` as the record keeps it, or None when it logged none (or an
    empty CSV); RecordError when its CSV is not one value a column in each row."""
    from tvrl_bench.report.study_page.critic_cards import CARD_ARTIFACT, holds_card  # here: the page's package is heavy

    if not holds_card(client, run_id):
        return None
    with tempfile.TemporaryDirectory(prefix="tvrl-record-card-") as folder:
        path = Path(client.download_artifacts(run_id, CARD_ARTIFACT, folder))
        with path.open(newline="", encoding="utf-8") as f:
            table = [row for row in csv.reader(f) if row]
    if not table:
        return None
    card = {"columns": table[0], "rows": table[1:]}
    problem = card_problem(card)
    if problem:
        raise RecordError(f"study {study}'s {CARD_ARTIFACT} (parent run {run_id}): its {problem}; log the card "
                          f"again with `tvrl-bench critic-card --study {study}`, then save the record")
    return card


def log_card(client, run_id: str, card: dict) -> bool:
    """Log `card` (saved_card's form) as the parent run's critic_card.csv unless the run holds a card; True when
    it logged it."""
    from tvrl_bench.report.study_page.critic_cards import CARD_ARTIFACT, holds_card

    if holds_card(client, run_id):
        return False
    with tempfile.TemporaryDirectory(prefix="tvrl-record-card-") as folder:
        path = Path(folder) / CARD_ARTIFACT  # the name the page reads
        with path.open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([card["columns"], *card["rows"]])
        client.log_artifact(run_id, str(path))
    return True
