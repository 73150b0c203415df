"""``MeasureCandidate``: a scheduled program the search picked, with its argument info."""

from __future__ import annotations


class MeasureCandidate:
    """``sch`` (a ``tir.Schedule`` whose trace holds the decisions) and ``args_info``;
    ``predicted_score``: the cost model's last score of it (None: never scored), which
    tuning monitors compare with the measured time."""

    def __init__(self, sch, args_info):
        self.sch = sch
        self.args_info = list(args_info)
        self.predicted_score = None
        self.program_key = None  # search_strategy.program_key, computed on first use

    def __repr__(self):
        return f"MeasureCandidate({len(self.sch.trace.insts)} instructions)"
