"""``estimate_flops``: floating-point operations of a PrimFunc (TVM's estimate_tir_flops),
for GFLOPS figures in the tuning progress."""

from __future__ import annotations

import math

from irlab.tir import stmt as S


def estimate_flops(mod) -> float:
    """Float adds, multiplies, divides and math calls, each counted once per execution of
    the store that holds it (loop extents multiplied; conditions ignored)."""
    from irlab.meta_schedule.feature_extractor.per_store_feature import (count_ops,
                                                                         lowered_funcs)

    total = 0.0

    def walk(s, executions):
        nonlocal total
        if isinstance(s, S.For):
            extent = getattr(s.extent, "value", 1)
            walk(s.body, executions * max(extent, 1))
        elif isinstance(s, S.BufferStore):
            counts = count_ops(s.value)
            total += executions * sum(counts[k] for k in ("float_add_sub", "float_mul",
                                                          "float_div_mod", "float_math"))
        elif isinstance(s, S.SeqStmt):
            for child in s.seq:
                walk(child, executions)
        elif isinstance(s, S.IfThenElse):
            walk(s.then_case, executions)
            if s.else_case is not None:
                walk(s.else_case, executions)
        elif hasattr(s, "body") and isinstance(getattr(s, "body"), S.Stmt):
            walk(s.body, executions)

    for func in lowered_funcs(mod):
        walk(func.body, 1)
    return float(total) if math.isfinite(total) else 0.0
