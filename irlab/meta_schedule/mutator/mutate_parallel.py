"""``MutateParallel``: change the parallel extent a ParallelizeVectorizeUnroll rule marked
(TVM's mutator of the same name), so the search can try fusing fewer or more outer loops."""

from __future__ import annotations

from irlab.meta_schedule import block_analysis as BA
from irlab.meta_schedule.mutator.mutator import Mutator, as_engine
from irlab.meta_schedule.schedule_rule.schedule_rule import target_cores_and_lanes
from irlab.tir.schedule import Instruction, Trace


class MutateParallel(Mutator):
    """Replace the value of a ``meta_schedule.parallel`` mark by another multiple of the
    core count up to ``max_jobs_per_core`` x cores."""

    def __init__(self, max_jobs_per_core=16):
        super().__init__()
        self.max_jobs_per_core = int(max_jobs_per_core)
        self.cores = 1

    def _initialize_with_tune_context(self, context) -> None:
        super()._initialize_with_tune_context(context)
        self.cores, _ = target_cores_and_lanes(context)

    def _extents(self) -> list:
        jobs, out = 1, []
        while jobs <= self.max_jobs_per_core:
            out.append(jobs * self.cores)
            jobs *= 2
        return out

    def apply(self, trace, rand_state=None):
        rand = as_engine(rand_state, self._rand)
        insts = []
        for inst in trace.insts:
            if inst.kind == "enter_postproc":
                break
            insts.append(inst)
        marks = [i for i, inst in enumerate(insts) if inst.kind == "annotate"
                 and inst.value("ann_key") == BA.PARALLEL]
        if not marks:
            return None
        index = marks[rand.sample_int(0, len(marks))]
        old = insts[index]
        choices = [e for e in self._extents() if e != old.value("ann_val")]
        if not choices:
            return None
        value = choices[rand.sample_int(0, len(choices))]
        attrs = [(k, value if k == "ann_val" else v) for k, v in old.attrs]
        new = Instruction(old.kind, list(old.inputs), attrs, old.outputs)
        insts[index] = new
        alive = set(insts)
        return Trace(insts, {i: d for i, d in trace.decisions.items() if i in alive})
