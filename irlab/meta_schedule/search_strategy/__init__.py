"""Search strategies (TVM's ``ms.search_strategy``): which candidates to measure next."""

from irlab.meta_schedule.search_strategy.measure_candidate import MeasureCandidate

__all__ = ["MeasureCandidate"]
