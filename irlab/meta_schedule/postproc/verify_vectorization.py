"""``VerifyVectorization``: reject schedules whose vectorized loops would not become vector
code. irlab's VectorizeLoop keeps a loop it cannot express on vectors as a scalar loop (same
values, no speed); such a candidate only wastes a measurement, so it is dropped here."""

from __future__ import annotations

from irlab.meta_schedule.postproc.postproc import Postproc
from irlab.tir import stmt as S
from irlab.tir.function import PrimFunc
from irlab.tir.schedule import primitives_getters as G


def _vectorized_loops(func) -> list:
    return [node for node, _ in G.walk(func.body)
            if isinstance(node, S.For) and node.kind == S.ForKind.VECTORIZED]


def _looks_vectorizable(loop, max_lanes) -> bool:
    """The cheap check: a constant extent within ``max_lanes`` and, inside, one block
    without loops or branches that writes at an index moving with the loop."""
    if not G.is_const(loop.extent) or loop.extent.value > max_lanes:
        return False
    realize = loop.body
    if not isinstance(realize, S.BlockRealize):
        return False
    if any(isinstance(n, (S.For, S.IfThenElse)) for n, _ in G.walk(realize.block.body)):
        return False
    moving = {id(iv.var) for iv, value in zip(realize.block.iter_vars, realize.iter_values)
              if G.uses_var(value, loop.loop_var)}
    return any(G.uses_var(rng.min, v) for w in realize.block.writes for rng in w.region
               for v in [iv.var for iv in realize.block.iter_vars if id(iv.var) in moving])


class VerifyVectorization(Postproc):
    """By default the cheap structural check of each vectorized loop; with ``lower=True``
    each function is also lowered and no vectorized loop may survive as a loop (a loop that
    vectorizes disappears into Ramp/Broadcast code): exact, but a lowering per candidate."""

    def __init__(self, max_lanes=64, lower=False):
        self.max_lanes = int(max_lanes)
        self.lower = bool(lower)

    def apply(self, sch) -> bool:
        for gv, func in sch.mod.functions.items():
            if not isinstance(func, PrimFunc):
                continue
            loops = _vectorized_loops(func)
            if not all(_looks_vectorizable(lp, self.max_lanes) for lp in loops):
                return False
            if loops and self.lower and not self._survives_lowering(func, gv.name_hint, loops):
                return False
        return True

    @staticmethod
    def _survives_lowering(func, name, loops) -> bool:
        from irlab.tir.transform.pipeline import lower

        wanted = {id(lp.loop_var) for lp in loops}
        lowered = lower(func, name)[name]
        return not any(isinstance(n, S.For) and id(n.loop_var) in wanted
                       for n, _ in G.walk(lowered.body))
