"""The one error a report raises for what the user asked: a study, a table definition, a file that cannot be made."""

from __future__ import annotations


class ReportError(ValueError):
    """The report cannot be made as asked (no such study, a bad table definition, ...); the message says why."""
