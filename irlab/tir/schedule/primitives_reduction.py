"""Reduction primitives: decompose_reduction."""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.functor import substitute
from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.primitives_getters import (find_loop, find_block, loops_of, replace,
                                                   uses_var)
from irlab.tir.schedule.primitives_inline import subst_region


def decompose_reduction(func, realize, loop):
    """Split the init of ``realize``'s block into a block ``<name>_init`` placed before
    ``loop``; returns (func, init block name)."""
    block = realize.block
    name, lname = block.name_hint, loop.loop_var.name_hint
    if block.init is None:
        raise ScheduleError(f"block {name} has no init: it is not a reduction block")
    loops = loops_of(func, realize)
    if not any(lp is loop for lp in loops):
        raise ScheduleError(f"loop {lname} is not an ancestor of block {name}")
    pos = next(i for i, lp in enumerate(loops) if lp is loop)
    pairs = list(zip(block.iter_vars, realize.iter_values))
    for lp in loops[:pos]:
        for iv, value in pairs:
            if iv.iter_type != S.IterVar.DataPar and uses_var(value, lp.loop_var):
                raise ScheduleError(f"loop {lp.loop_var.name_hint} above {lname} drives the "
                                    f"reduction iter {iv.var.name_hint} of block {name}: the "
                                    "init cannot be placed before it")
    _check_runs_once(realize, loops[pos:], loops[:pos], lname)
    init_name = name + "_init"
    try:
        find_block(func, init_name)
    except ScheduleError:
        pass
    else:
        raise ScheduleError(f"a block named {init_name} already exists")
    spatial = [(iv, v) for iv, v in pairs if iv.iter_type == S.IterVar.DataPar]
    copied = [lp for lp in loops[pos:]
              if any(uses_var(v, lp.loop_var) for _, v in spatial)]
    loop_map = {lp.loop_var: E.Var(lp.loop_var.name_hint + "_init", lp.loop_var.dtype)
                for lp in copied}
    for lp in loops[pos:]:
        if lp.loop_var not in loop_map and uses_var(realize.predicate, lp.loop_var):
            raise ScheduleError(f"the predicate of block {name} depends on loop "
                                f"{lp.loop_var.name_hint}, which the init would not have")
    var_map, new_ivs = {}, []
    for iv, _ in spatial:
        var = E.Var(iv.var.name_hint, iv.var.dtype)
        var_map[iv.var] = var
        new_ivs.append(S.IterVar(iv.dom, var, S.IterVar.DataPar))
    init_block = S.Block(new_ivs, (), tuple(subst_region(w, var_map) for w in block.writes),
                         init_name, substitute(block.init, var_map))
    stmt = S.BlockRealize([substitute(v, loop_map) for _, v in spatial],
                          substitute(realize.predicate, loop_map), init_block)
    for lp in reversed(copied):
        stmt = S.For(loop_map[lp.loop_var], lp.min, lp.extent, lp.kind, stmt,
                     lp.thread_binding)
    func = replace(func, block, _update_block(block))
    loop = find_loop(func, loop.loop_var)
    return replace(func, loop, S.SeqStmt([stmt, loop])), init_name


def _check_runs_once(realize, inner, outer, lname):
    """Under the decomposition loop every instance of the block must run once: a block that
    compute_at placed under a loop that does not drive it (or that recomputes overlapping
    regions) reran its init with each repetition; a single init placed before the loop would
    let the repeated updates accumulate. Counted: the loop iterations against the distinct
    iter values they can reach."""
    from irlab.arith import Analyzer
    from irlab.tir.buffer import Range

    analyzer = Analyzer()
    for lp in inner:
        analyzer.bind(lp.loop_var, Range.from_min_extent(lp.min, lp.extent))
    fixed = {lp.loop_var: lp.min for lp in outer}
    runs, reached = 1, 1
    for lp in inner:
        extent = analyzer.simplify(lp.extent)
        if not isinstance(extent, E.IntImm):
            return  # symbolic extents: nothing to count
        runs *= extent.value
    for value in realize.iter_values:
        if not any(uses_var(value, lp.loop_var) for lp in inner):
            continue
        bound = analyzer.const_int_bound(analyzer.simplify(substitute(value, fixed)))
        reached *= bound.max_value - bound.min_value + 1
    if runs > reached:
        raise ScheduleError(f"block {realize.block.name_hint} runs {runs} times under loop "
                            f"{lname} for {reached} distinct iter values: it is recomputed "
                            "there, and a single init before the loop would let the repeated "
                            "updates accumulate")


def _update_block(block):
    """``block`` without its init. It now reads the value the init block left, so (as in TVM)
    the regions it writes come first in its reads: dependence analysis (``consumers``) must
    see the update as a reader of the init's output."""
    read_buffers = {id(r.buffer) for r in block.reads}
    reads = tuple(w for w in block.writes if id(w.buffer) not in read_buffers) + block.reads
    return block.with_fields(init=None, reads=reads)


_COMBINERS = (E.Add, E.Mul, E.Max, E.Min)


def _reduction_update(block):
    """(store, combiner class, rhs) of ``buf[idx] = op(buf[idx], rhs)``."""
    store = block.body
    ok = isinstance(store, S.BufferStore) and isinstance(store.value, _COMBINERS)
    if ok:
        lhs = store.value.a
        ok = (isinstance(lhs, E.BufferLoad) and lhs.buffer is store.buffer
              and all(x is y for x, y in zip(lhs.indices, store.indices)))
    if not ok or block.init is None or len(block.writes) != 1:
        raise ScheduleError(f"block {block.name_hint} is not a reduction of the form "
                            "buf[idx] = op(buf[idx], value) with an init")
    return store, type(store.value), store.value.b


def rfactor(func, loop, factor_axis):
    """Factor the reduction over ``loop`` into a block ``<name>_rf`` writing an rf buffer,
    and a write-back block reducing it; returns (func, rf block name)."""
    from irlab.tir.buffer import BufferRegion, Range, decl_buffer
    from irlab.tir.schedule.primitives_getters import child_realizes, scope_of

    lname = loop.loop_var.name_hint
    realizes = child_realizes(loop)
    if len(realizes) != 1:
        raise ScheduleError(f"rfactor needs exactly one block under loop {lname}, "
                            f"found {len(realizes)}")
    realize = realizes[0]
    block = realize.block
    store, combiner, rhs = _reduction_update(block)
    pairs = list(zip(block.iter_vars, realize.iter_values))
    spatial = [(iv, v) for iv, v in pairs if iv.iter_type == S.IterVar.DataPar]
    reduce = [(iv, v) for iv, v in pairs if iv.iter_type != S.IterVar.DataPar]
    if not any(uses_var(v, loop.loop_var) for _, v in reduce):
        raise ScheduleError(f"loop {lname} does not drive a reduction iter of block "
                            f"{block.name_hint}")
    if any(uses_var(v, loop.loop_var) for _, v in spatial):
        raise ScheduleError(f"loop {lname} also drives a spatial iter of {block.name_hint}")
    loops = loops_of(func, realize)
    top = loops[0]
    if child_realizes(top) != [realize] or any(not isinstance(lp.body, (S.For, S.BlockRealize))
                                              for lp in loops):
        raise ScheduleError(f"the loops of block {block.name_hint} must hold only that block")
    scope = scope_of(func, realize)
    if scope is None:
        raise ScheduleError("rfactor needs a scope block to allocate the rf buffer")
    buf = store.buffer
    ndim = len(buf.shape)
    axis = factor_axis + ndim + 1 if factor_axis < 0 else factor_axis
    if not 0 <= axis <= ndim:
        raise ScheduleError(f"factor_axis {factor_axis} is out of range for the "
                            f"{ndim}-d buffer {buf.name}")
    red_loops = [lp for lp in loops if any(uses_var(v, lp.loop_var) for _, v in reduce)]
    if any(any(uses_var(v, lp.loop_var) for _, v in spatial) for lp in red_loops):
        raise ScheduleError(f"a loop drives both spatial and reduction iters of "
                            f"{block.name_hint}")
    # rf block: one new iter per reduction loop (spatial for ``loop``), reduce iters inlined.
    new_iv, loop_to_iv = [], {}
    for lp in red_loops:
        kind = S.IterVar.DataPar if lp is loop else S.IterVar.CommReduce
        var = E.Var("v" + lp.loop_var.name_hint, lp.loop_var.dtype)
        new_iv.append((S.IterVar(Range.from_min_extent(lp.min, lp.extent), var, kind),
                       lp.loop_var))
        loop_to_iv[lp.loop_var] = var
    red_map = {iv.var: substitute(v, loop_to_iv) for iv, v in reduce}
    rf_var = loop_to_iv[loop.loop_var]
    shape = list(buf.shape)
    shape.insert(axis, loop.extent)
    rf_buf = decl_buffer(shape, buf.dtype, buf.name + "_rf", scope=buf.scope)

    def rf_index(indices, var):
        idx = list(indices)
        idx.insert(axis, var)
        return idx

    rf_idx = rf_index(store.indices, rf_var)
    rf_rhs = substitute(rhs, red_map)
    rf_store = S.BufferStore(rf_buf, combiner(E.BufferLoad(rf_buf, rf_idx), rf_rhs), rf_idx)
    rf_init = S.BufferStore(rf_buf, block.init.value, rf_idx) \
        if isinstance(block.init, S.BufferStore) else None
    if rf_init is None:
        raise ScheduleError(f"the init of block {block.name_hint} is not a single store")
    point = tuple(Range.from_min_extent(i, 1) for i in rf_idx)
    # TVM's order: the rf iter first, then the spatial iters, then the other reduce iters.
    new_iv.sort(key=lambda p: p[1] is not loop.loop_var)
    ivs = [new_iv[0][0]] + [iv for iv, _ in spatial] + [iv for iv, _ in new_iv[1:]]
    values = [new_iv[0][1]] + [v for _, v in spatial] + [lv for _, lv in new_iv[1:]]
    rf_name = block.name_hint + "_rf"
    rf_block = S.Block(ivs, tuple(subst_region(r, red_map) for r in block.reads),
                       (BufferRegion(rf_buf, point),), rf_name, rf_store, rf_init)
    rf_nest = S.BlockRealize(values, realize.predicate, rf_block)
    for lp in reversed(loops):
        rf_nest = lp.with_fields(body=rf_nest)
    # write-back block: fresh spatial vars, one reduce iter over the rf axis.
    wb_loops = [lp for lp in loops
                if lp is loop or any(uses_var(v, lp.loop_var) for _, v in spatial)]
    lmap = {lp.loop_var: E.Var(lp.loop_var.name_hint, lp.loop_var.dtype) for lp in wb_loops}
    vmap = {iv.var: E.Var(iv.var.name_hint, iv.var.dtype) for iv, _ in spatial}
    wb_rf = E.Var(rf_var.name_hint, rf_var.dtype)
    wb_ivs = [S.IterVar(iv.dom, vmap[iv.var], S.IterVar.DataPar) for iv, _ in spatial]
    wb_ivs.append(S.IterVar(Range.from_min_extent(loop.min, loop.extent), wb_rf,
                            S.IterVar.CommReduce))
    wb_values = [substitute(v, lmap) for _, v in spatial] + [lmap[loop.loop_var]]
    out_idx = [substitute(i, vmap) for i in store.indices]
    wb_store = S.BufferStore(buf, combiner(E.BufferLoad(buf, out_idx),
                                           E.BufferLoad(rf_buf, rf_index(out_idx, wb_rf))),
                             out_idx)
    wb_block = S.Block(wb_ivs, (BufferRegion(rf_buf, tuple(Range.from_min_extent(i, 1)
                                                           for i in rf_index(out_idx, wb_rf))),),
                       tuple(subst_region(w, vmap) for w in block.writes), block.name_hint,
                       wb_store, substitute(block.init, vmap))
    wb_nest = S.BlockRealize(wb_values, E.IntImm("bool", 1), wb_block)
    for lp in reversed(wb_loops):
        wb_nest = S.For(lmap[lp.loop_var], lp.min, lp.extent, S.ForKind.SERIAL, wb_nest)
    func = replace(func, top, S.SeqStmt([rf_nest, wb_nest]))
    scope = find_block(func, scope.name_hint).block
    func = replace(func, scope, scope.with_fields(alloc_buffers=scope.alloc_buffers
                                                  + (rf_buf,)))
    return func, rf_name
