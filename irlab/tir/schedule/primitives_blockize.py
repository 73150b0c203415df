"""blockize: wrap the loops under a loop and their block into an outer block ``<name>_o``."""

from __future__ import annotations

from irlab.arith import Analyzer
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import Range
from irlab.tir.functor import substitute
from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.primitives_compute_at import bound_over_loops
from irlab.tir.schedule.primitives_getters import (child_realizes, find_block, loops_of,
                                                   replace, uses_var)


def _divide(value, inner_vars, outer_vars, analyzer):
    """``value`` as ``outer * extent + inner`` with inner in [0, extent): (outer, inner,
    extent), or None when the bindings do not split that way."""
    o = analyzer.simplify(substitute(value, {v: 0 for v in inner_vars}))
    i = analyzer.simplify(substitute(value, {v: 0 for v in outer_vars}))
    i = analyzer.simplify(i - substitute(o, {v: 0 for v in outer_vars}))
    if not isinstance(analyzer.simplify(o + i - value), E.IntImm) or \
            analyzer.simplify(o + i - value).value != 0:
        return None
    b = analyzer.const_int_bound(i)
    if b.min_value != 0:
        return None
    extent = b.max_value + 1
    if not isinstance(analyzer.simplify(E.FloorMod(o, E.IntImm(o.dtype, extent))), E.IntImm):
        return None
    return analyzer.simplify(E.FloorDiv(o, E.IntImm(o.dtype, extent))), i, extent


def blockize(func, loop, preserve_unit_iters=True):
    """``func`` with the subtree under ``loop`` wrapped in an outer block; returns
    (func, outer block name)."""
    lname = loop.loop_var.name_hint
    realizes = child_realizes(loop)
    if len(realizes) != 1:
        raise ScheduleError(f"blockize needs exactly one block under loop {lname}, "
                            f"found {len(realizes)}")
    realize = realizes[0]
    block = realize.block
    loops = loops_of(func, realize)
    pos = next(k for k, lp in enumerate(loops) if lp is loop)
    inner_loops, outer_loops = loops[pos:], loops[:pos]
    for lp in inner_loops:
        if not isinstance(lp.body, (S.For, S.BlockRealize)):
            raise ScheduleError(f"loop {lp.loop_var.name_hint} under {lname} holds more than "
                                "one statement")
    if uses_var(realize.predicate, loop.loop_var) or any(
            uses_var(realize.predicate, lp.loop_var) for lp in inner_loops):
        raise ScheduleError(f"block {block.name_hint} has a predicate on the inner loops")
    analyzer = Analyzer()
    for lp in loops:
        analyzer.bind(lp.loop_var, Range.from_min_extent(lp.min, lp.extent))
    inner_vars = [lp.loop_var for lp in inner_loops]
    outer_vars = [lp.loop_var for lp in outer_loops]
    outer_ivs, outer_values, inner_values, sub, fake = [], [], [], {}, []
    for iv, value in zip(block.iter_vars, realize.iter_values):
        split = _divide(value, inner_vars, outer_vars, analyzer)
        dom_ext = iv.dom.extent
        if split is None or not isinstance(dom_ext, E.IntImm) or \
                not (isinstance(iv.dom.min, E.IntImm) and iv.dom.min.value == 0) or \
                dom_ext.value % split[2]:
            raise ScheduleError(f"the binding {iv.var.name_hint} = {value} of block "
                                f"{block.name_hint} cannot be divided at loop {lname}")
        outer, inner, extent = split
        n_outer = dom_ext.value // extent
        if n_outer == 1 and not preserve_unit_iters:
            o_expr = E.IntImm(iv.var.dtype, 0)
        else:
            var = E.Var(iv.var.name_hint + "_o", iv.var.dtype)
            outer_ivs.append(S.IterVar(Range.from_min_extent(0, n_outer), var, iv.iter_type))
            outer_values.append(outer)
            o_expr = var
        base = o_expr * E.IntImm(iv.var.dtype, extent) if extent != 1 else o_expr
        inner_values.append(analyzer.simplify(base + inner) if extent != 1 else o_expr)
        t = E.Var(iv.var.name_hint + "_t", iv.var.dtype)
        fake.append(S.For(t, 0, extent, S.ForKind.SERIAL, S.Evaluate(0)))
        sub[iv.var] = base + t if extent != 1 else base

    def region(r):
        dims = []
        for x in r.region:
            lo = bound_over_loops(substitute(x.min, sub), fake, analyzer)[0]
            hi = bound_over_loops(substitute(x.min + x.extent - 1, sub), fake, analyzer)[1]
            dims.append(Range.from_min_extent(lo, analyzer.simplify(hi - lo + 1)))
        return r.with_fields(region=tuple(dims))

    inner = S.BlockRealize(inner_values, realize.predicate, block)
    for lp in reversed(inner_loops):
        inner = lp.with_fields(body=inner)
    name = block.name_hint + "_o"
    try:
        find_block(func, name)
    except ScheduleError:
        pass
    else:
        raise ScheduleError(f"a block named {name} already exists")
    outer_block = S.Block(outer_ivs, tuple(region(r) for r in block.reads),
                          tuple(region(w) for w in block.writes), name, inner)
    outer = S.BlockRealize(outer_values, E.IntImm("bool", 1), outer_block)
    return replace(func, loop, outer), name
