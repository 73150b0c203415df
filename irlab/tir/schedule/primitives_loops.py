"""Loop transformations: split, fuse, reorder (functional: PrimFunc in, PrimFunc out)."""

from __future__ import annotations

from irlab.arith import Analyzer
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import Range
from irlab.tir.functor import substitute
from irlab.tir.op import floordiv, floormod
from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.primitives_getters import child_realizes, find_path, is_const, replace


def simplify_bindings(node, analyzer, predicates=True):
    """``node`` with block bindings (and predicates, unless ``predicates`` is False: split
    keeps them as substituted, as TVM does) simplified, knowing the loop ranges."""
    if isinstance(node, S.For):
        analyzer.bind(node.loop_var, Range.from_min_extent(node.min, node.extent),
                      allow_override=True)
        body = simplify_bindings(node.body, analyzer, predicates)
        return node.with_fields(body=body)
    if isinstance(node, S.SeqStmt):
        seq = tuple(simplify_bindings(s, analyzer, predicates) for s in node.seq)
        return node if all(a is b for a, b in zip(seq, node.seq)) else S.SeqStmt(seq)
    if isinstance(node, S.BlockRealize):
        values = tuple(analyzer.simplify(v) for v in node.iter_values)
        pred = analyzer.simplify(node.predicate) if predicates else node.predicate
        return S.BlockRealize(values, pred, node.block, node.span)
    if isinstance(node, (S.LetStmt, S.AttrStmt)):
        return node.with_fields(body=simplify_bindings(node.body, analyzer, predicates))
    return node


def _add_predicate(body, cond):
    """Every block realize directly under ``body`` runs only when ``cond`` holds."""
    for realize in child_realizes(_Wrap(body)):
        new_pred = cond if is_const(realize.predicate, 1) else E.And(realize.predicate, cond)
        new = realize.with_fields(predicate=new_pred)
        body = _replace_in(body, realize, new)
    return body


class _Wrap:
    _fields = ("body",)

    def __init__(self, body):
        self.body = body


def _replace_in(stmt, old, new):
    from irlab.tir.schedule.primitives_getters import _rebuild

    return _rebuild(stmt, old, new)


def _const_int(e, what):
    if not isinstance(e, E.IntImm):
        raise ScheduleError(f"{what} must be a constant, got {e}")
    return e.value


def _check_plain(loop, what):
    """Split and fuse rebuild loops as plain serial ones: a loop carrying annotations or a
    thread binding would lose them, so (as TVM) it is refused."""
    name = loop.loop_var.name_hint
    if loop.annotations:
        keys = sorted(k for k, _ in loop.annotations)
        raise ScheduleError(f"cannot {what} loop {name}: it has annotations {keys}")
    if loop.thread_binding is not None or loop.kind == S.ForKind.THREAD_BINDING:
        raise ScheduleError(f"cannot {what} loop {name}: it is bound to a thread")


def split(func, loop, factors, preserve_unit_iters=True):
    """Split ``loop`` into ``len(factors)`` nested loops; returns (func, new loop vars)."""
    name = loop.loop_var.name_hint
    _check_plain(loop, "split")
    factors = list(factors)
    if len(factors) < 2:
        raise ScheduleError(f"split of loop {name} needs at least 2 factors, got {factors}")
    if sum(f is None for f in factors) > 1:
        raise ScheduleError(f"split of loop {name}: at most one factor can be None, "
                            f"got {factors}")
    extent = _const_int(loop.extent, f"the extent of loop {name}")
    known = 1
    for f in factors:
        if f is None:
            continue
        if isinstance(f, E.IntImm):
            f = f.value
        if not isinstance(f, int) or f <= 0:
            raise ScheduleError(f"split of loop {name}: factors must be positive integers "
                                f"or None, got {factors}")
        known *= f
    factors = [(-(-extent // known) if f is None else int(f)) for f in factors]
    total = 1
    for f in factors:
        total *= f
    if total < extent:
        raise ScheduleError(f"split of loop {name} (extent {extent}): the factors {factors} "
                            f"cover only {total} iterations")
    dtype = loop.loop_var.dtype
    new_vars = [E.Var(f"{name}_{k}", dtype) for k in range(len(factors))]
    fused, stride = None, 1
    for var, f in reversed(list(zip(new_vars, factors))):
        if f == 1 and not preserve_unit_iters:
            continue
        term = var if stride == 1 else var * E.IntImm(dtype, stride)
        fused = term if fused is None else term + fused
        stride *= f
    fused = fused if fused is not None else E.IntImm(dtype, 0)
    value = fused if is_const(loop.min, 0) else loop.min + fused
    body = substitute(loop.body, {loop.loop_var: value})
    if total != extent:  # TVM's guard: the vars nested as written, ((i0 * 2 + i1) * 3 + i2)
        horner = None
        for var, f in zip(new_vars, factors):
            if f == 1 and not preserve_unit_iters:
                continue
            horner = var if horner is None else horner * E.IntImm(dtype, f) + var
        horner = horner if horner is not None else E.IntImm(dtype, 0)
        body = _add_predicate(body, E.LT(horner, E.IntImm(dtype, extent)))
    analyzer = Analyzer()
    for var, f in zip(new_vars, factors):
        analyzer.bind(var, Range(0, f))
    body = simplify_bindings(body, analyzer, predicates=False)
    for var, f in reversed(list(zip(new_vars, factors))):
        body = S.For(var, 0, f, S.ForKind.SERIAL, body)
    return replace(func, loop, body), new_vars


def add_unit_loop(func, node):
    """Wrap ``node`` (a BlockRealize or a For) in ``for u in range(1)``; returns (func, u)."""
    var = E.Var("u", "int32")
    return replace(func, node, S.For(var, 0, 1, S.ForKind.SERIAL, node)), var


def fuse(func, loops, preserve_unit_iters=True):
    """Fuse directly nested ``loops`` into one; returns (func, fused var)."""
    if not loops:
        raise ScheduleError("fuse needs at least one loop")
    for outer, inner in zip(loops, loops[1:]):
        if outer.body is not inner:
            raise ScheduleError(f"cannot fuse: loop {inner.loop_var.name_hint} is not the only "
                                f"statement directly inside loop {outer.loop_var.name_hint}")
    if len({id(lp) for lp in loops}) != len(loops):
        raise ScheduleError("cannot fuse a loop with itself")
    for lp in loops:
        _check_plain(lp, "fuse")
    dtype = loops[0].loop_var.dtype
    fused = E.Var("_".join(lp.loop_var.name_hint for lp in loops) + "_fused", dtype)
    extent = None
    mapping, inner_prod = {}, None
    for lp in reversed(loops):
        unit = is_const(lp.extent, 1)
        if unit and not preserve_unit_iters:
            value = E.IntImm(dtype, 0)
        else:
            # TVM's form: (fused % (inner * extent)) // inner; the outermost fused // inner
            outer_prod = lp.extent if inner_prod is None else inner_prod * lp.extent
            value = fused if lp is loops[0] else floormod(fused, outer_prod)
            value = value if inner_prod is None else floordiv(value, inner_prod)
            inner_prod = outer_prod
        mapping[lp.loop_var] = value if is_const(lp.min, 0) else lp.min + value
    extent = inner_prod if inner_prod is not None else E.IntImm(dtype, 1)
    analyzer = Analyzer()
    extent = analyzer.simplify(extent)
    analyzer.bind(fused, Range(0, extent))
    body = substitute(loops[-1].body, mapping)
    body = simplify_bindings(body, analyzer)
    new = S.For(fused, 0, extent, S.ForKind.SERIAL, body)
    return replace(func, loops[0], new), fused


def reorder(func, loops):
    """Put ``loops`` (on one chain of single-child loops) in the given order."""
    if len({id(lp) for lp in loops}) != len(loops):
        raise ScheduleError("reorder: a loop is given twice: "
                            + ", ".join(lp.loop_var.name_hint for lp in loops))
    if len(loops) <= 1:
        return func
    paths = {id(lp): find_path(func, lp) for lp in loops}
    order = sorted(loops, key=lambda lp: len(paths[id(lp)]))
    top, bottom = order[0], order[-1]
    chain = [top]
    node = top
    while node is not bottom:
        child = node.body
        if not isinstance(child, S.For):
            names = ", ".join(lp.loop_var.name_hint for lp in loops)
            raise ScheduleError(f"reorder: loops {names} are not a chain of directly nested "
                                f"loops (loop {node.loop_var.name_hint} has a "
                                f"{type(child).__name__} as its body)")
        chain.append(child)
        node = child
    if any(all(lp is not c for c in chain) for lp in loops):
        raise ScheduleError("reorder: the loops are not nested in one another")
    wanted = iter(loops)
    new_chain = [next(wanted) if any(c is lp for lp in loops) else c for c in chain]
    body = bottom.body
    for lp in reversed(new_chain):
        body = lp.with_fields(body=body)
    return replace(func, top, body)

