"""The lowering pipeline: block-form TIR to flat loops over 1-D buffers (TVM's
``driver_api.cc`` CreatePassList, restricted to the passes irlab has).

``lower(mod_or_func)`` runs it as a ``Sequential`` under the current ``PassContext``, so
instruments (``IRSnapshot``, the pass stepper) see every TIR pass by name::

    with PassContext(instruments=[IRSnapshot()]) as ctx:
        lowered = irlab.lower(te.create_prim_func([A, B, D]))

User passes join it after a phase: ``PassContext(config={"tir.add_lower_pass": [(1, p)]})``
(TVM's key; see ``irlab.tir.transform.user_passes``), in ``tvm.build`` and ``relay.build``.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.module import IRModule
from irlab.tir import transform as T
from irlab.tir.function import PrimFunc
from irlab.tir.transform.user_passes import user_lower_passes
from irlab.transform import PassContext, Sequential


def lowering_passes(ctx: PassContext | None = None) -> list:
    """The pass list, in order; config (``tir.disable_vectorize``) is read from ``ctx``, and
    the user's ``tir.add_lower_pass`` passes go after their phase (0: before phase 1)."""
    ctx = ctx or PassContext.current()
    disable_vectorize = bool(ctx.config.get("tir.disable_vectorize", False))
    phases = [
        [],  # -- phase 0: nothing of irlab's; user passes see block-form TIR ---------------
        [  # -- phase 1: from blocks to plain loops --------------------------------------------
            T.LowerInitBlock(),          # reduction init -> `if k == 0: init` inside the block
            T.PlanAndUpdateBufferAllocationLocation(),  # buffers move down to where they are used
            T.ConvertBlocksToOpaque(),   # block iter vars -> the loop expressions bound to them
            T.CompactBufferAllocation(),  # block-local buffers shrink to the region used
            T.Simplify(),                # tidy the substituted indices while blocks still exist
            T.LowerOpaqueBlock(),        # blocks gone: Allocate/DeclBuffer, predicates as ifs
            T.FlattenBuffer(),           # n-D accesses -> 1-D row-major index arithmetic
            T.LowerAllocateConst(),      # T.allocate_const -> an allocation filled on entry
            T.Simplify(),                # the flattened indices, with the loop bounds known
        ],
        [  # -- phase 2: loop transformations ------------------------------------------------
            T.VectorizeLoop(not disable_vectorize),  # T.vectorized -> Ramp/Broadcast
            T.UnrollLoop(),              # T.unroll (and config auto_max_step) -> copies
        ],
        [  # -- phase 3: clean-up ----------------------------------------------------------
            T.Simplify(),                # constants the unrolled copies created
            T.RemoveNoOp(),              # empty loops, evaluate(0), x[i] = x[i]
            # T.LowerIntrin() belongs to TVM's build (per target), not to lower: see build
        ],
    ]
    user = user_lower_passes(ctx)
    return [p for phase, passes in enumerate(phases) for p in passes + user[phase]]


def lower(mod_or_func, name: str = "main") -> IRModule:
    """Lower a block-form PrimFunc (or every PrimFunc of a module) to flat TIR."""
    if isinstance(mod_or_func, PrimFunc):
        func = mod_or_func
        if func.attrs is None or "global_symbol" not in func.attrs:
            func = func.with_attr("global_symbol", name)
        mod = IRModule({name: func})
    elif isinstance(mod_or_func, IRModule):
        mod = mod_or_func
    else:
        raise IrlabError(f"lower takes a PrimFunc or an IRModule, got "
                         f"{type(mod_or_func).__name__}")
    ctx = PassContext.current()
    return Sequential(lowering_passes(ctx), name="tir.lower")(mod)


__all__ = ["lowering_passes", "lower"]
