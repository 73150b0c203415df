"""``ReplayTrace``: the baseline search, design-space traces replayed with fresh samples."""

from __future__ import annotations

from irlab.meta_schedule.search_strategy.search_strategy import (SearchStrategy,
                                                                   fresh_decisions,
                                                                   is_unmeasured, replay)


class ReplayTrace(SearchStrategy):
    """Each candidate: a random design space, every decision sampled anew (TVM's
    ``ReplayTrace``); no cost model. A draw the postprocessors refuse is retried up to
    ``max_fail_count`` times."""

    def __init__(self, max_fail_count=100):
        super().__init__()
        self.max_fail_count = int(max_fail_count)

    def clone(self):
        return ReplayTrace(self.max_fail_count)

    def generate_measure_candidates(self):
        st = self._state()
        if st.remaining <= 0:
            return None
        want = min(st.num_trials_per_iter, st.remaining)
        picked, seen, fails = [], set(), 0
        while len(picked) < want and fails < self.max_fail_count:
            space = st.spaces[self.rand.sample_int(0, len(st.spaces))]
            cand = replay(st, space, self.rand.fork_seed(), fresh_decisions)
            if cand is None or not is_unmeasured(st, cand, seen):
                fails += 1
                continue
            picked.append(cand)
        return picked or None
