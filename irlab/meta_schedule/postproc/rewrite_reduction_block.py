"""``RewriteReductionBlock``: split each reduction's init out of its loop nest with
``decompose_reduction`` at the outermost loop driving the reduction, so the init runs once
per output element instead of as a branch in the innermost loop."""

from __future__ import annotations

from irlab.meta_schedule.postproc.postproc import Postproc
from irlab.tir import stmt as S
from irlab.tir.function import PrimFunc
from irlab.tir.schedule import primitives_getters as G


def _reduction_loop(realize, loops):
    """The outermost of ``loops`` bound to a reduction iterator of ``realize``."""
    for loop in loops:
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if iv.iter_type != S.IterVar.DataPar and G.uses_var(value, loop.loop_var):
                return loop
    return None


def _next_reduction(sch):
    """(block name, function name, loop var) of a block still holding its init."""
    for gv, func in sch.mod.functions.items():
        if not isinstance(func, PrimFunc):
            continue
        for node, _ in G.walk(func.body):
            if isinstance(node, S.BlockRealize) and node.block.init is not None:
                loop = _reduction_loop(node, G.loops_of(func, node))
                if loop is not None:
                    return node.block.name_hint, gv.name_hint, loop.loop_var
    return None


class RewriteReductionBlock(Postproc):
    """Decompose every reduction block whose reduction is driven by a loop."""

    def apply(self, sch) -> bool:
        done = set()
        while True:
            found = _next_reduction(sch)
            if found is None or found[:2] in done:
                return True
            done.add(found[:2])
            name, func_name, var = found
            block = sch.get_block(name, func_name)
            loop = next(lp for lp in sch.get_loops(block) if lp.var is var)
            sch.decompose_reduction(block, loop)
