"""Pairwise judgments and win rates: pairing two methods' final samples and judging them (pairs.py), the stored
judgments (judgments.py: the record, its CSV and SQLite file) and the win-rate table (table.py)."""
