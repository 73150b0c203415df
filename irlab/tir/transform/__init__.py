"""TIR passes (``tvm.tir.transform``): each factory returns a module pass named as TVM's
(``tir.LowerInitBlock``...), applying a function to every PrimFunc of the module.

``prim_func_pass`` makes such a pass from ``f(func, mod, ctx) -> func``; the lowering
pipeline built from these factories is in ``irlab.tir.transform.pipeline``, and user passes
join it through ``PassContext(config={"tir.add_lower_pass": [(phase, pass)]})`` or seed 000's
``PassContext.current().add_custom_pass`` + ``ApplyCustomPass`` (``user_passes``).
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.tir.function import PrimFunc
from irlab.transform import (Pass, PassContext, PassInfo, _wrap_pass, register_config,
                             register_pass_factory)
from irlab.tir.transform.user_passes import ApplyCustomPass

# valid PassContext config keys as soon as the package is imported (UnrollLoopConfig's fields)
register_config("tir.UnrollLoop", "tir.transform.UnrollLoopConfig")


class PrimFuncPass(Pass):
    """A pass given by ``f(func, mod, ctx) -> PrimFunc``, applied to each PrimFunc."""

    def __init__(self, pass_func, info: PassInfo):
        self.pass_func = pass_func
        self.info = info

    def transform_module(self, mod, ctx):
        updates = {}
        for gv, func in mod.items():
            if not isinstance(func, PrimFunc):
                continue
            new = self.pass_func(func, mod, ctx)
            if not isinstance(new, PrimFunc):
                raise IrlabError(f"pass {self.info.name} returned {type(new).__name__} for "
                                 f"@{gv.name_hint}, not a PrimFunc")
            if new is not func:
                updates[gv] = new
        if not updates:
            return mod  # unchanged: the same module, so instruments see "no change" cheaply
        out = mod.copy()
        for gv, func in updates.items():
            out.update_func(gv, func)
        return out


class UserPrimFuncPass(PrimFuncPass):
    """A ``prim_func_pass`` written by a user: each PrimFunc it changes must still be well
    formed, else ``WellFormedError`` names the pass (before a later pass trips on it)."""

    def transform_module(self, mod, ctx):
        from irlab.tir.transform.user_passes import check_changed_functions

        out = super().transform_module(mod, ctx)
        check_changed_functions(mod, out, self.info.name)
        return out


def prim_func_pass(pass_func=None, opt_level=None, name=None, required=None):
    """Decorate ``f(func, mod, ctx) -> func`` (or a class with ``transform_function``); the
    pass checks what it returns (a PrimFunc, well formed)."""
    return _wrap_pass(pass_func, opt_level, name, required, UserPrimFuncPass)


def LowerInitBlock():  # noqa: N802 (TVM's names)
    """Lower reduction blocks' ``init`` into a guarded statement of the body."""
    from irlab.tir.transform.lower_init_block import lower_init_block

    return PrimFuncPass(lower_init_block, PassInfo(0, "tir.LowerInitBlock"))


def PlanAndUpdateBufferAllocationLocation():  # noqa: N802
    """Move each block-allocated buffer down to the lowest common ancestor of its uses."""
    from irlab.tir.transform.plan_buffer_allocation import (
        plan_and_update_buffer_allocation_location)

    return PrimFuncPass(plan_and_update_buffer_allocation_location,
                        PassInfo(0, "tir.PlanAndUpdateBufferAllocationLocation"))


def ConvertBlocksToOpaque():  # noqa: N802
    """Replace block iter vars by their bound values (blocks become opaque)."""
    from irlab.tir.transform.convert_blocks_to_opaque import convert_blocks_to_opaque

    return PrimFuncPass(convert_blocks_to_opaque, PassInfo(0, "tir.ConvertBlocksToOpaque"))


def InsertBoundsChecks():  # noqa: N802
    """Verify each PrimFunc and check at run time the accesses not proven in bounds."""
    from irlab.tir.transform.insert_bounds_checks import insert_bounds_checks

    return PrimFuncPass(insert_bounds_checks, PassInfo(0, "tir.InsertBoundsChecks"))


def CompactBufferAllocation():  # noqa: N802
    """Shrink block-local buffers to the region their block uses."""
    from irlab.tir.transform.compact_buffer_allocation import compact_buffer_allocation

    return PrimFuncPass(compact_buffer_allocation, PassInfo(0, "tir.CompactBufferAllocation"))


def LowerOpaqueBlock():  # noqa: N802
    """Remove opaque blocks: alloc_buffers become Allocate + DeclBuffer, predicates ifs."""
    from irlab.tir.transform.lower_opaque_block import lower_opaque_block

    return PrimFuncPass(lower_opaque_block, PassInfo(0, "tir.LowerOpaqueBlock"))


def FlattenBuffer():  # noqa: N802
    """Make buffer accesses one-dimensional."""
    from irlab.tir.transform.flatten_buffer import flatten_buffer

    return PrimFuncPass(flatten_buffer, PassInfo(0, "tir.FlattenBuffer"))


def LowerAllocateConst():  # noqa: N802
    """Constant allocations to allocations filled with their constants on entry."""
    from irlab.tir.transform.lower_allocate_const import lower_allocate_const

    return PrimFuncPass(lower_allocate_const, PassInfo(0, "tir.LowerAllocateConst"))


def Simplify():  # noqa: N802
    """Simplify expressions with the Analyzer; resolve constant branches."""
    from irlab.tir.transform.simplify import simplify

    return PrimFuncPass(simplify, PassInfo(0, "tir.Simplify"))


def RemoveNoOp():  # noqa: N802
    """Drop statements without effect."""
    from irlab.tir.transform.remove_no_op import remove_no_op

    return PrimFuncPass(remove_no_op, PassInfo(0, "tir.RemoveNoOp"))


def UnrollLoop():  # noqa: N802
    """Expand unrolled loops (and small loops under the ``tir.UnrollLoop`` config)."""
    from irlab.tir.transform.unroll_loop import unroll_loop

    return PrimFuncPass(unroll_loop, PassInfo(0, "tir.UnrollLoop"))


def VectorizeLoop(enable_vectorize=True):  # noqa: N802
    """Turn vectorized loops into vector statements (serial loops when disabled)."""
    from irlab.tir.transform.vectorize_loop import vectorize_loop

    def run(func, mod, ctx):
        return vectorize_loop(func, mod, ctx, enable=enable_vectorize)

    return PrimFuncPass(run, PassInfo(0, "tir.VectorizeLoop"))


def LowerIntrin():  # noqa: N802
    """Floor division/modulo to truncating forms (what C-like targets provide)."""
    from irlab.tir.transform.lower_intrin import lower_intrin

    return PrimFuncPass(lower_intrin, PassInfo(0, "tir.LowerIntrin"))


def ForceNarrowIndexToInt32():  # noqa: N802
    """Rewrite int64 indices (shapes, loops, constants) to int32 (int64 data is refused)."""
    from irlab.tir.transform.force_narrow_index import force_narrow_index_to_int32

    return PrimFuncPass(force_narrow_index_to_int32, PassInfo(0, "tir.NarrowDataType"))


for _f in (LowerInitBlock, ConvertBlocksToOpaque, CompactBufferAllocation, LowerOpaqueBlock,
           FlattenBuffer, LowerAllocateConst, Simplify, RemoveNoOp, UnrollLoop, VectorizeLoop,
           LowerIntrin, ForceNarrowIndexToInt32):
    register_pass_factory("tir." + _f.__name__, _f)

__all__ = ["PrimFuncPass", "UserPrimFuncPass", "prim_func_pass", "PassContext",
           "ApplyCustomPass", "LowerInitBlock",
           "PlanAndUpdateBufferAllocationLocation", "ConvertBlocksToOpaque",
           "CompactBufferAllocation", "LowerOpaqueBlock", "FlattenBuffer", "LowerAllocateConst",
           "Simplify", "RemoveNoOp", "UnrollLoop", "VectorizeLoop", "LowerIntrin",
           "InsertBoundsChecks", "ForceNarrowIndexToInt32"]
