"""relay.build's optimization pipeline, as one visible list (TVM's OptimizeImpl, v0.13).

``optimize(mod, target, params)`` runs it: everything up to FuseOps inside one Sequential named
"sequential" (each pass gated by the PassContext's opt level, disabled and required lists),
then the direct calls TVM makes after it (not gated, but instrumented). Instruments attached
to the context therefore see TVM's pass sequence, nested InferTypes included.
"""

from __future__ import annotations

from irlab.ir.module import IRModule
from irlab.transform import Sequential


def _skip_int32_casts(expr):
    """EliminateCommonSubexpr's fskip in relay.build: keep casts to int32 unmerged (TVM keeps
    them separate so that each use can fuse with its own consumer)."""
    from irlab.ir.op import Op
    from irlab.relay.expr import Call

    return (isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name == "cast"
            and expr.attrs.dtype == "int32")


def optimization_passes() -> list:
    """Steps 1-23 of reference §2.3, in order, each with why it is there."""
    from irlab.relay import transform as T

    return [
        T.RemoveUnusedFunctions(),       # 1 only what main reaches gets compiled
        T.ToBasicBlockNormalForm(),      # 2 lets only where scoping needs them
        T.QnnLegalizeSequence(),         # 3 "qnn.Legalize": QNN ops to plain ops
        T.Legalize(),                    # 4 target-specific op rewrites
        T.SimplifyInference(),           # 5 batch_norm/dropout/layer_norm to primitive ops
        T.EliminateCommonSubexpr(_skip_int32_casts),  # 6 merge identical calls
        T.CombineParallelConv2D(3),      # 7 (opt 4) merge sibling convs
        T.CombineParallelDense(3),       # 8 (opt 4) merge sibling denses
        T.CombineParallelBatchMatmul(3),  # 9 (opt 4) merge sibling batch_matmuls
        T.FoldConstant(),                # 10 evaluate constant sub-graphs
        T.FoldScaleAxis(),               # 11 fold BN scales into conv/dense weights
        T.SimplifyExpr(),                # 12 algebraic clean-ups
        T.CanonicalizeCast(),            # 13 move casts so they fuse
        T.CanonicalizeOps(),             # 14 bias_add -> expand_dims + add
        T.FlattenAtrousConv(),           # 15 dilated conv patterns
        T.InferType(),                   # 16 types for AlterOpLayout
        T.AlterOpLayout(),               # 17 target layouts (CPU: OIHW{n}o convs, NC{n}n denses)
        T.SimplifyExprPostAlterOp(),     # 18 clean up after layout changes
        T.FastMath(),                    # 19 (opt 4) fast approximations
        T.FoldConstant(),                # 20 fold what layout changes made constant
        T.SplitArgs(-1),                 # 21 argument-count limits (none on CPU)
        T.PlanDevices(),                 # 22 device placement (one device)
        T.FuseOps(),                     # 23 group ops into primitive functions
    ]


def post_fusion_passes() -> list:
    """The direct calls after the Sequential (24-28): not opt-gated, but instrumented."""
    from irlab.relay import transform as T

    return [T.InferType(), T.Inline(), T.InferType(), T.LabelOps(), T.AnnotateMemoryScope()]


def optimize(mod, target=None, params=None):
    """Run relay.build's optimization pipeline on ``mod``; returns ``(mod, params)`` as
    ``tvm.relay.optimize``. ``params`` are bound into ``@main`` as constants first. The passes
    run with ``target`` in scope (as TVM's OptimizeImpl: AlterOpLayout's hooks are per target);
    None keeps the current one."""
    import contextlib

    from irlab.relay.build_module import bind_params_by_name
    from irlab.relay.function import Function
    from irlab.target import as_target

    if not isinstance(mod, IRModule):
        if isinstance(mod, Function):
            mod = IRModule.from_expr(mod)
        else:
            raise TypeError(f"optimize expects an IRModule, got {type(mod).__name__}")
    if params:
        mod = mod.copy()
        mod["main"] = bind_params_by_name(mod["main"], params)
    with contextlib.nullcontext() if target is None else as_target(target):
        mod = Sequential(optimization_passes(), name="sequential")(mod)
        for pass_ in post_fusion_passes():
            mod = pass_(mod)
    return mod, dict(params or {})
