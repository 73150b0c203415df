"""``MutateComputeLocation``: move a block sampled by ``sample_compute_location`` to
another valid location (TVM's mutator of the same name): the trace is replayed on the task's
workload to know the candidate locations at that point."""

from __future__ import annotations

from irlab.meta_schedule.mutator.mutator import Mutator, as_engine
from irlab.tir.schedule import Schedule, ScheduleError
from irlab.tir.schedule import primitives_getters as G
from irlab.tir.schedule.sampling import compute_locations


class MutateComputeLocation(Mutator):
    """Needs the workload: initialize it with a TuneContext (or set ``mod``)."""

    def __init__(self):
        super().__init__()
        self.mod = None

    def _initialize_with_tune_context(self, context) -> None:
        super()._initialize_with_tune_context(context)
        self.mod = context.mod

    def _candidates(self, trace, rand) -> list:
        """(instruction, other location indices) for each compute-location sample."""
        if self.mod is None:
            raise ValueError("MutateComputeLocation needs the workload: initialize it with "
                             "a TuneContext")
        sch = Schedule(self.mod, seed=rand.fork_seed())
        found = []

        def provider(inst, args, kwargs, decision):
            if inst.kind == "sample_compute_location":
                block = kwargs["block"]
                func = sch.mod[block.func_name]
                indices = [i for i, _ in compute_locations(func, G.find_block(func,
                                                                              block.name))]
                others = [i for i in indices if i != decision]
                if others:
                    found.append((inst, others))
            return decision

        trace.apply_to_schedule(sch, remove_postproc=True, decision_provider=provider)
        return found

    def apply(self, trace, rand_state=None):
        rand = as_engine(rand_state, self._rand)
        try:
            candidates = self._candidates(trace, rand)
        except ScheduleError:
            return None
        if not candidates:
            return None
        inst, others = candidates[rand.sample_int(0, len(candidates))]
        return trace.with_decision(inst, others[rand.sample_int(0, len(others))],
                                   remove_postproc=True)
