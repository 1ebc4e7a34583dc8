"""Pairwise judgments and win rates: pairing two methods' final samples and judging them (pairs.py), judging them by
their wide-evaluation records instead (wide_pairs.py), the stored judgments (judgments.py: the record, its CSV and
SQLite file) and the win-rate table (table.py)."""
