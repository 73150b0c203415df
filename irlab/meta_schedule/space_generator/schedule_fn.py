"""``ScheduleFn``: a design space written as a Python function of a Schedule (TVM's
``ms.space_generator.ScheduleFn``); its ``sample_*`` calls are the tunable decisions."""

from __future__ import annotations

from irlab.meta_schedule.space_generator.space_generator import SpaceGenerator
from irlab.tir.schedule import Schedule


class ScheduleFn(SpaceGenerator):
    """``sch_fn(sch)`` schedules ``sch`` in place (returning None) or returns a Schedule or
    a list of them."""

    def __init__(self, sch_fn, sch_rules=(), postprocs=(), mutator_probs=None):
        super().__init__(list(sch_rules), list(postprocs), dict(mutator_probs or {}))
        self.sch_fn = sch_fn

    def __repr__(self):
        return f"ScheduleFn({getattr(self.sch_fn, '__name__', self.sch_fn)})"

    def generate_design_space(self, mod) -> list:
        from irlab.meta_schedule.tune_context import normalize_mod

        sch = Schedule(normalize_mod(mod), seed=self._rand.fork_seed())
        result = self.sch_fn(sch)
        if result is None:
            return [sch]
        if isinstance(result, Schedule):
            return [result]
        result = list(result)
        if not all(isinstance(s, Schedule) for s in result):
            raise TypeError(f"ScheduleFn {self!r} must return None, a Schedule or a list of "
                            f"Schedules, got {result!r}")
        return result
