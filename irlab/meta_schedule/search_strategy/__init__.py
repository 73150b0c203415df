"""Search strategies (TVM's ``ms.search_strategy``): which candidates to measure next."""

from irlab.meta_schedule.search_strategy.evolutionary_search import EvolutionarySearch
from irlab.meta_schedule.search_strategy.measure_candidate import MeasureCandidate
from irlab.meta_schedule.search_strategy.replay_trace import ReplayTrace
from irlab.meta_schedule.search_strategy.search_strategy import SearchStrategy

__all__ = ["EvolutionarySearch", "MeasureCandidate", "ReplayTrace", "SearchStrategy"]
