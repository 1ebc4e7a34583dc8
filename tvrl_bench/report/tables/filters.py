"""Param filters on a runs frame: which runs a filter accepts, the intersection of two filters, their text."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tvrl_bench.report.tables.definition_types import Filter


def match(frame: pd.DataFrame, flt: Filter) -> np.ndarray:
    """Boolean mask[len(frame)] of runs whose params take one of the accepted values for every filtered param."""
    mask = np.ones(len(frame), dtype=bool)
    for param, values in flt.items():
        column = f"params.{param}"
        if column not in frame.columns:
            return np.zeros(len(frame), dtype=bool)
        mask &= frame[column].isin(values).to_numpy()
    return mask


def intersect(a: Filter, b: Filter) -> Filter | None:
    """The filter accepting what both accept, or None when they contradict (disjoint values for a param)."""
    out = dict(a)
    for param, values in b.items():
        if param in out:
            common = tuple(v for v in out[param] if v in values)
            if not common:
                return None
            out[param] = common
        else:
            out[param] = values
    return out


def describe(flt: Filter) -> str:
    """'reward=videoalign, method=TVRL' (a list of values as 'a|b')."""
    return ", ".join(f"{k}={'|'.join(v)}" for k, v in flt.items()) or "(all runs)"
