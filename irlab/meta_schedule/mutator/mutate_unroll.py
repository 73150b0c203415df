"""``MutateUnroll``: resample the unroll depth a ParallelizeVectorizeUnroll rule chose."""

from __future__ import annotations

from irlab.meta_schedule import block_analysis as BA
from irlab.meta_schedule.mutator.mutator import Mutator, as_engine


def _unroll_samples(trace) -> list:
    """The sample_categorical instructions whose value an unroll mark takes."""
    feeding = set()
    for inst in trace.insts:
        if inst.kind == "annotate" and inst.value("ann_key") in (BA.UNROLL_EXPLICIT,
                                                                  BA.UNROLL_IMPLICIT):
            feeding.add(id(inst.value("ann_val")))
    return [inst for inst in trace.insts if inst.kind == "sample_categorical"
            and inst.outputs and id(inst.outputs[0]) in feeding and inst in trace.decisions]


class MutateUnroll(Mutator):
    """Pick an unroll sample and a different candidate, drawn with the sample's
    probabilities."""

    def apply(self, trace, rand_state=None):
        rand = as_engine(rand_state, self._rand)
        candidates = _unroll_samples(trace)
        if not candidates:
            return None
        inst = candidates[rand.sample_int(0, len(candidates))]
        old = trace.decisions[inst]
        probs = [p if i != old else 0.0 for i, p in enumerate(inst.value("probs"))]
        if sum(probs) <= 0:
            return None
        return trace.with_decision(inst, rand.choice(probs), remove_postproc=True)
