"""``DisallowDynamicLoop``: reject schedules with a loop of non-constant extent."""

from __future__ import annotations

from irlab.meta_schedule.postproc.postproc import Postproc
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.function import PrimFunc
from irlab.tir.schedule import primitives_getters as G


class DisallowDynamicLoop(Postproc):
    """False when any loop of any PrimFunc has a symbolic extent."""

    def apply(self, sch) -> bool:
        for func in sch.mod.functions.values():
            if not isinstance(func, PrimFunc):
                continue
            for node, _ in G.walk(func.body):
                if isinstance(node, S.For) and not isinstance(node.extent, E.IntImm):
                    return False
        return True
