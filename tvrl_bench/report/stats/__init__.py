"""The statistics of the reports: spread over seeds, paired and Welch delta intervals, win-rate intervals
(intervals.py), and the probability of improvement and IQM with bootstrap intervals (improvement.py).

The intervals' functions are importable from here too: `from tvrl_bench.report.stats import paired_delta`.
"""

from tvrl_bench.report.stats.intervals import (DeltaStat, ValueStat, bootstrap_win_rate, clopper_pearson,
                                               minimum_detectable_delta, paired_delta, value_stat, welch_delta)

__all__ = ["DeltaStat", "ValueStat", "bootstrap_win_rate", "clopper_pearson", "minimum_detectable_delta",
           "paired_delta", "value_stat", "welch_delta"]
