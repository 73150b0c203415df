"""``MeasureCandidate``: a scheduled program the search picked, with its argument info."""

from __future__ import annotations


class MeasureCandidate:
    """``sch`` (a ``tir.Schedule`` whose trace holds the decisions) and ``args_info``."""

    def __init__(self, sch, args_info):
        self.sch = sch
        self.args_info = list(args_info)

    def __repr__(self):
        return f"MeasureCandidate({len(self.sch.trace.insts)} instructions)"
