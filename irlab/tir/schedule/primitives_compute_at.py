"""compute_at and reverse_compute_at: move a block under a loop, covering the region that
the loop's consumers need (or its producers make)."""

from __future__ import annotations

from irlab.arith import Analyzer
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import Range
from irlab.tir.functor import substitute
from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.primitives_getters import (check_sole_writer, consumers, find_loop,
                                                   find_path, producers, replace, scope_of,
                                                   uses_var, walk)


def _free_vars(e):
    out = []
    from irlab.tir.functor import post_order_visit

    post_order_visit(e, lambda n: out.append(n) if isinstance(n, E.Var) else None)
    return out


def _affine_coefficients(expr, var_ids):
    """{id(var): int coefficient} when ``expr`` is syntactically affine in the vars of
    ``var_ids`` (they appear only under +, - and * by a constant), else None. The cheap
    answer to what ``_step`` otherwise learns by substituting and simplifying."""
    if isinstance(expr, E.Var):
        return {id(expr): 1} if id(expr) in var_ids else {}
    if isinstance(expr, E.IntImm):
        return {}
    if isinstance(expr, (E.Add, E.Sub)):
        a = _affine_coefficients(expr.a, var_ids)
        b = _affine_coefficients(expr.b, var_ids) if a is not None else None
        if b is None:
            return None
        sign = 1 if isinstance(expr, E.Add) else -1
        for key, coef in b.items():
            a[key] = a.get(key, 0) + sign * coef
        return a
    if isinstance(expr, E.Mul):
        for const, other in ((expr.b, expr.a), (expr.a, expr.b)):
            if isinstance(const, E.IntImm):
                coefs = _affine_coefficients(other, var_ids)
                return None if coefs is None else {k: c * const.value for k, c in coefs.items()}
    return {} if not any(id(v) in var_ids for v in _free_vars(expr)) else None


def _step(expr, v, analyzer):
    """The constant change of ``expr`` per step of ``v`` (None when it is not affine in
    ``v``), probed at v = 0, 1, 2."""
    at = [substitute(expr, {v: E.IntImm(v.dtype, k)}) for k in range(3)]  # v's own dtype
    c1 = analyzer.simplify(at[1] - at[0])
    c2 = analyzer.simplify(at[2] - at[1])
    if isinstance(c1, E.IntImm) and isinstance(c2, E.IntImm) and c1.value == c2.value:
        return c1.value
    return None


def _loop_ends(loop, analyzer):
    """The first and last values of ``loop``'s variable (in its dtype)."""
    v = loop.loop_var
    first = _in_dtype(loop.min, v.dtype)  # a loop may start at an int32 0 for an int64 var
    extent = _in_dtype(loop.extent, v.dtype)
    if isinstance(first, E.IntImm) and isinstance(extent, E.IntImm):
        return first, E.IntImm(v.dtype, first.value + extent.value - 1)
    return first, analyzer.simplify(first + extent - 1)


def _substitute_ends(expr, ends):
    """``expr`` with each loop var of ``ends`` replaced, outer loops first: at once when
    every value is a constant (the usual rectangular nest), else one loop at a time (a value
    may name an outer loop's var, replaced by then)."""
    if all(isinstance(value, E.IntImm) for _, value in ends):
        return substitute(expr, dict(ends)) if ends else expr
    for v, value in ends:
        expr = substitute(expr, {v: value})
    return expr


def bound_over_loops(expr, inner, analyzer):
    """[lo, hi] of ``expr`` as ``inner`` loops (For nodes) run; outer vars stay symbolic."""
    free = {id(v) for v in _free_vars(expr)}  # one walk, not one per inner loop
    coefs = _affine_coefficients(expr, free)  # the common case, without a simplify per loop
    lo_ends, hi_ends = [], []  # (loop var, the value giving the least / greatest index)
    for lp in inner:
        v = lp.loop_var
        if id(v) not in free:
            continue
        step = coefs.get(id(v), 0) if coefs is not None else _step(expr, v, analyzer)
        if step is None:
            break
        first, last = _loop_ends(lp, analyzer)
        lo_ends.append((v, first if step >= 0 else last))
        hi_ends.append((v, last if step >= 0 else first))
    else:
        return (analyzer.simplify(_substitute_ends(expr, lo_ends)),
                analyzer.simplify(_substitute_ends(expr, hi_ends)))
    divided = _bound_division(expr, inner, analyzer)
    if divided is not None:
        return divided
    inner_ids = {id(lp.loop_var) for lp in inner}
    if all(id(v) in inner_ids for v in _free_vars(expr)):  # non-affine but constant range
        b = analyzer.const_int_bound(expr)
        return E.IntImm(expr.dtype, b.min_value), E.IntImm(expr.dtype, b.max_value)
    raise ScheduleError(f"cannot bound the access index {expr}: it is not affine in the "
                        "loops under the target loop")


def _bound_division(expr, inner, analyzer):
    """[lo, hi] of ``a // c`` or ``a % c`` (``c`` a positive constant) from those of ``a``:
    floor division is monotone; a remainder keeps its order while ``a // c`` stays put and
    else spans [0, c - 1]; ``x + k``/``x - k`` (``k`` a constant) shift those of ``x``; a sum
    or difference of such terms (a Winograd tile's ``(y // m) * tiles_w + x // m``) and a
    term times a constant are bounded term by term. None for any other expression."""
    if isinstance(expr, (E.Add, E.Sub)) and isinstance(expr.b, E.IntImm):
        lo, hi = bound_over_loops(expr.a, inner, analyzer)
        op = E.Add if isinstance(expr, E.Add) else E.Sub
        return analyzer.simplify(op(lo, expr.b)), analyzer.simplify(op(hi, expr.b))
    if isinstance(expr, (E.Add, E.Sub)):  # interval sum: exact when the terms vary apart
        (alo, ahi), (blo, bhi) = (bound_over_loops(expr.a, inner, analyzer),
                                  bound_over_loops(expr.b, inner, analyzer))
        if isinstance(expr, E.Add):
            return analyzer.simplify(alo + blo), analyzer.simplify(ahi + bhi)
        return analyzer.simplify(alo - bhi), analyzer.simplify(ahi - blo)
    if isinstance(expr, E.Mul) and isinstance(expr.b, E.IntImm):
        lo, hi = bound_over_loops(expr.a, inner, analyzer)
        if expr.b.value < 0:
            lo, hi = hi, lo
        return analyzer.simplify(lo * expr.b), analyzer.simplify(hi * expr.b)
    if not isinstance(expr, (E.FloorDiv, E.FloorMod)) or not isinstance(expr.b, E.IntImm) \
            or expr.b.value <= 0:
        return None
    lo, hi = bound_over_loops(expr.a, inner, analyzer)
    c = expr.b
    if isinstance(expr, E.FloorDiv):
        return _floordiv(lo, c.value, analyzer), _floordiv(hi, c.value, analyzer)
    if isinstance(analyzer.simplify(E.FloorDiv(hi, c) - E.FloorDiv(lo, c)), E.IntImm) and \
            analyzer.simplify(E.FloorDiv(hi, c) - E.FloorDiv(lo, c)).value == 0:
        return analyzer.simplify(E.FloorMod(lo, c)), analyzer.simplify(E.FloorMod(hi, c))
    return E.IntImm(expr.dtype, 0), E.IntImm(expr.dtype, c.value - 1)


def _linear(e):
    """(x, a, b) with ``e == x * a + b`` (a, b ints), or None."""
    b = 0
    if isinstance(e, (E.Add, E.Sub)) and isinstance(e.b, E.IntImm):
        b = e.b.value if isinstance(e, E.Add) else -e.b.value
        e = e.a
    if isinstance(e, E.Mul) and isinstance(e.b, E.IntImm):
        return e.a, e.b.value, b
    return None


def _floordiv(e, c, analyzer):
    """``e // c`` simplified where the loop ranges make ``x * a + b`` divide evenly:
    ``(c_o * 360 + 359) // 16`` is ``c_o * 22 + 22`` for c_o in [0, 2); ``(i * 8 + 7) // 16``
    is ``i // 2``."""
    e = analyzer.simplify(e)
    lin = _linear(e)
    if lin is not None:
        x, a, b = lin
        q, r = divmod(a, c)
        rest = analyzer.const_int_bound(analyzer.simplify(x * r + b)) if r else None
        lo_hi = (b, b) if rest is None else (rest.min_value, rest.max_value)
        if max(map(abs, lo_hi)) < 2 ** 40 and lo_hi[0] // c == lo_hi[1] // c:
            return analyzer.simplify(x * q + E.IntImm(e.dtype, lo_hi[0] // c))
        if 0 < a and c % a == 0 and 0 <= b < a:
            return analyzer.simplify(E.FloorDiv(x, E.IntImm(e.dtype, c // a)))
    return analyzer.simplify(E.FloorDiv(e, E.IntImm(e.dtype, c)))


def _union(a, b, analyzer, pick_min):
    diff = analyzer.simplify(a - b)
    if not isinstance(diff, E.IntImm):
        raise ScheduleError(f"cannot take the union of the regions starting at {a} and {b}")
    return (a if diff.value <= 0 else b) if pick_min else (a if diff.value >= 0 else b)


def _accessed_region(func, loop, realizes, buffer, kind, analyzer):
    """Per dimension [lo, hi] of ``buffer`` accessed (``kind``: reads/writes) by
    ``realizes`` as the loops under ``loop`` run."""
    region = None
    shared = _relaxed_thread_loops(find_path(func, loop) + (loop,), buffer.scope)
    for realize in realizes:
        path = find_path(func, realize)
        start = next(i for i, n in enumerate(path) if n is loop)
        inner = shared + [n for n in path[start + 1:] if isinstance(n, S.For)]
        bind = dict(zip([iv.var for iv in realize.block.iter_vars], realize.iter_values))
        for acc in getattr(realize.block, kind):
            if acc.buffer is not buffer:
                continue
            dims = []
            for r in acc.region:
                lo_e = substitute(r.min, bind)
                hi_e = substitute(r.min + r.extent - 1, bind)
                dims.append((bound_over_loops(lo_e, inner, analyzer)[0],
                             bound_over_loops(hi_e, inner, analyzer)[1]))
            if region is None:
                region = dims
            else:
                region = [(_union(a[0], b[0], analyzer, True), _union(a[1], b[1], analyzer, False))
                          for a, b in zip(region, dims)]
    return region


# Storage ranks and the thread ranks whose threads all see one copy of such a buffer: a
# shared buffer is filled for every threadIdx/vthread of a block (TVM's
# CanRelaxStorageUnderThread); global and local buffers are not relaxed.
_STORAGE_RANK = {"shared": 1, "warp": 2, "local": 3}


def _thread_rank(tag):
    if tag.startswith(("vthread", "cthread")) or tag.startswith("threadIdx"):
        return 1
    return 0 if tag.startswith("blockIdx") else None


def _relaxed_thread_loops(outer, scope):
    """The thread-bound loops among ``outer`` that a buffer of storage ``scope`` is shared
    across: the region computed under the target loop must cover all their threads."""
    rank = _STORAGE_RANK.get(str(scope).split(".", 1)[0])
    if rank is None:
        return []
    out = []
    for n in outer:
        if not isinstance(n, S.For) or n.kind != S.ForKind.THREAD_BINDING \
                or n.thread_binding is None:
            continue
        thread = _thread_rank(n.thread_binding.thread_tag)
        if thread is not None and rank <= thread:
            out.append(n)
    return out


def _order(func):
    return {id(n): i for i, (n, _) in enumerate(walk(func.body))}


def _new_nest(block, access, region, preserve_unit_loops, analyzer):
    """Loops and a realize running ``block`` over ``region`` of its access ``access``."""
    ranges = _iter_var_ranges(block, access, region, analyzer)
    loops, values, preds = [], [], []
    for iv in block.iter_vars:
        dom_lo = _in_dtype(iv.dom.min, iv.var.dtype)
        dom_hi = analyzer.simplify(dom_lo + _in_dtype(iv.dom.extent, iv.var.dtype) - 1)
        covered = ranges.get(id(iv.var))
        lo, hi = (dom_lo, dom_hi) if covered is None else _within(covered, dom_lo, dom_hi)
        extent = analyzer.simplify(hi - lo + 1)  # symbolic when the shape is (n, m)
        unit = isinstance(extent, E.IntImm) and extent.value == 1
        if unit and not preserve_unit_loops:
            value = lo
        else:
            ax = E.Var(f"ax{len(loops)}", iv.var.dtype)
            loops.append((ax, extent))
            analyzer.bind(ax, Range.from_min_extent(0, extent))
            value = ax if _is_zero(lo) else lo + ax  # TVM leaves min + ax unsimplified
        if covered is not None:
            # a unit loop's variable is its (zero) start in the guard, as TVM simplifies it
            guard = lo if unit else value
            if not analyzer.can_prove(E.GE(lo, dom_lo)):
                preds.append(E.LE(dom_lo, guard))  # TVM's simplifier writes ``a >= b`` so
            if not analyzer.can_prove(E.LE(hi, dom_hi)):
                # TVM's form: an exclusive upper bound, ``value < max + 1``
                preds.append(E.LT(guard, analyzer.simplify(dom_hi + 1)))
        values.append(value)
    pred = E.IntImm("bool", 1)
    for p in preds:
        p = _lower_bound_form(analyzer.simplify(p))
        pred = p if isinstance(pred, E.IntImm) else E.And(pred, p)
    stmt = S.BlockRealize(values, pred, block)
    for ax, extent in reversed(loops):
        stmt = S.For(ax, 0, extent, S.ForKind.SERIAL, stmt)
    return stmt


def _iter_var_ranges(block, access, region, analyzer):
    """{id(iter var): (lo, hi)} that makes ``access`` cover ``region`` (per dimension [lo, hi]).

    A dimension indexed by a constant needs no iter var; one indexed ``c * v + b`` is inverted
    when it is a unit access with ``c = +-1`` or a tile of ``c`` elements (``v*16 : v*16+16``).
    """
    iter_ids = {id(iv.var) for iv in block.iter_vars}
    doms = {id(iv.var): iv.dom for iv in block.iter_vars}
    dims_of = {}  # id(var) -> (var, [(range, lo, hi) of each dimension it indexes])
    for r, (lo, hi) in zip(access.region, region):
        free = {id(v): v for v in _free_vars(r.min)}
        if not free and isinstance(r.extent, E.IntImm):
            continue
        var = next(iter(free.values())) if len(free) == 1 else None
        if var is None or id(var) not in iter_ids:
            _not_invertible(block, access)
        dims_of.setdefault(id(var), (var, []))[1].append((r, lo, hi))
    ranges = {}
    for vid, (var, dims) in dims_of.items():
        inverted = _invert(*dims[0][:1], var, *dims[0][1:], analyzer) if len(dims) == 1 \
            else None
        if inverted is None:
            inverted = _invert_split(var, dims, doms[vid], analyzer)
        if inverted is None:
            _not_invertible(block, access)
        ranges[vid] = inverted
    return ranges


def _not_invertible(block, access):
    raise ScheduleError(f"block {block.name_hint} must access {access.buffer.name} at "
                        f"distinct iter vars (c * v + b, or v // c and v % c) to be moved, not "
                        f"{access.region}")


def _invert_split(var, dims, dom, analyzer):
    """(v_lo, v_hi) for a var read through several dimensions (``v // 16, v % 16``): each
    ``c * v + b`` or ``v // c`` bounds ``v``; a dimension covered whole (``v % 16`` over
    [0, 15]) bounds nothing; the bounds meet where they are comparable. None otherwise."""
    local = Analyzer()
    local.bind(var, dom)
    bounds = []
    for r, lo, hi in dims:
        if not (isinstance(r.extent, E.IntImm) and r.extent.value == 1):
            return None
        full = local.const_int_bound(r.min)
        if isinstance(lo, E.IntImm) and isinstance(hi, E.IntImm) and \
                lo.value <= full.min_value and hi.value >= full.max_value:
            continue
        inv = _invert(r, var, lo, hi, analyzer)
        e = r.min
        if inv is None and isinstance(e, E.FloorDiv) and e.a is var and \
                isinstance(e.b, E.IntImm) and e.b.value > 0:
            c = e.b
            inv = (analyzer.simplify(lo * c), analyzer.simplify(hi * c + (c.value - 1)))
        if inv is None:
            return None
        bounds.append(inv)
    if not bounds:
        return dom.min, analyzer.simplify(dom.min + dom.extent - 1)
    lo, hi = bounds[0]
    for b_lo, b_hi in bounds[1:]:
        try:
            lo = _union(lo, b_lo, analyzer, False)  # the larger start
            hi = _union(hi, b_hi, analyzer, True)  # the smaller end
        except ScheduleError:
            return None
    return lo, hi


def _invert(rng, var, lo, hi, analyzer):
    """(v_lo, v_hi) with ``rng`` (``c * var + b``, extent e) covering [lo, hi], or None."""
    at = [substitute(rng.min, {var: E.IntImm(var.dtype, k)}) for k in range(3)]
    base = analyzer.simplify(at[0])
    coef = analyzer.simplify(at[1] - base)
    coef2 = analyzer.simplify(at[2] - base)
    if not (isinstance(coef, E.IntImm) and isinstance(coef2, E.IntImm)
            and coef2.value == 2 * coef.value and isinstance(rng.extent, E.IntImm)):
        return None
    c, extent = coef.value, rng.extent.value
    if c == -1 and extent == 1:
        return _reflect(base, hi, analyzer), _reflect(base, lo, analyzer)
    if c >= 1 and extent in (1, c):
        if c == 1:
            return analyzer.simplify(lo - base), analyzer.simplify(hi - base)
        return (analyzer.simplify(E.FloorDiv(lo - base, E.IntImm(lo.dtype, c))),
                analyzer.simplify(E.FloorDiv(hi - base, E.IntImm(hi.dtype, c))))
    return None


def _within(covered, dom_lo, dom_hi):
    """The covered [lo, hi] cut to the iter var's domain where all are constants: the
    block never runs outside its domain, so no loop iteration (or guard) is spent there."""
    lo, hi = covered
    if all(isinstance(x, E.IntImm) for x in (lo, hi, dom_lo, dom_hi)):
        lo = lo if lo.value >= dom_lo.value else dom_lo
        hi = hi if hi.value <= dom_hi.value else dom_hi
    return lo, hi


def _reflect(base, x, analyzer):
    """``base - x`` as TVM's simplifier leaves it when both are atoms (``9 - i``); the
    canonical form (``i * -1 + 9``) otherwise."""
    if isinstance(base, E.IntImm) and isinstance(x, E.Var):
        return E.Sub(base, x)
    return analyzer.simplify(base - x)


def _move(func, realize, loop, preserve_unit_loops, index, reverse):
    block = realize.block
    name, lname = block.name_hint, loop.loop_var.name_hint
    if any(n is loop for n in find_path(func, realize)):
        raise ScheduleError(f"block {name} is already under loop {lname} (the loop is an "
                            f"ancestor of block {name})")
    if scope_of(func, realize) is not scope_of(func, loop):
        raise ScheduleError(f"block {name} and loop {lname} are in different block scopes "
                            f"(they must be in the same block scope)")
    if not is_trivial_pred(realize.predicate):
        raise ScheduleError(f"block {name} has a predicate; it cannot be moved")
    order = _order(func)
    under = {id(n) for n, _ in walk(loop.body)}
    others = producers(func, realize) if reverse else consumers(func, realize)
    role = "producer" if reverse else "consumer"
    if not others:
        raise ScheduleError(f"block {name} has no {role} to be computed at"
                            + ("" if reverse else " (it is an output block)"))
    for o in others:
        if id(o) not in under:
            raise ScheduleError(f"the {role} {o.block.name_hint} of block {name} is not under "
                                f"loop {lname}: moving {name} requires all the {role}s "
                                f"to be under the loop")
    _check_recomputable(func, realize)
    if reverse:
        _check_producers_final(func, others, loop, name)
    else:
        _check_not_output(func, realize)
    if reverse and order[id(realize)] < order[id(loop)]:
        raise ScheduleError(f"block {name} comes before loop {lname}")
    if not reverse and order[id(realize)] > order[id(loop)]:
        raise ScheduleError(f"block {name} comes after loop {lname}")
    accesses = block.reads if reverse else block.writes
    kind = "writes" if reverse else "reads"
    candidates = [a for a in accesses
                  if any(x.buffer is a.buffer for o in others for x in getattr(o.block, kind))]
    if len({id(a.buffer) for a in candidates}) != 1:
        raise ScheduleError(f"block {name} must exchange exactly one buffer with its "
                            f"{role}s under loop {lname}")
    access = candidates[0]
    analyzer = Analyzer()
    for n in find_path(func, loop) + (loop,):
        if isinstance(n, S.For):
            analyzer.bind(n.loop_var, Range.from_min_extent(n.min, n.extent))
    region = _accessed_region(func, loop, others, access.buffer, kind, analyzer)
    nest = _new_nest(block, access, region, preserve_unit_loops, analyzer)
    producer_names = {r.block.name_hint for r in producers(func, realize)}
    consumer_names = {r.block.name_hint for r in consumers(func, realize)}
    func = replace(func, realize, None)
    loop = find_loop(func, loop.loop_var)
    children = list(loop.body.seq) if isinstance(loop.body, S.SeqStmt) else [loop.body]
    first, last = _dependence_split(children, producer_names, consumer_names)
    if first <= last:
        raise ScheduleError(f"under loop {lname}, a consumer of block {name} comes before one "
                            "of its producers: there is no place to put it")
    if index is None or index < 0:
        pos = last + 1 if reverse else first
    else:
        if index > len(children):
            raise ScheduleError(f"index {index} is past the {len(children)} statements of "
                                f"loop {lname}")
        if not last < index <= first:
            raise ScheduleError(f"index {index} would put block {name} before a producer or "
                                f"after a consumer under loop {lname} (valid: {last + 1}.."
                                f"{first})")
        pos = index
    body = S.SeqStmt.flatten(*(children[:pos] + [nest] + children[pos:]))
    return replace(func, loop, loop.with_fields(body=body))


def _dependence_split(children, producer_names, consumer_names):
    """(index of the first child holding a consumer, index of the last child holding a
    producer), len(children) and -1 when there is none: valid insertion points lie between."""
    first, last = len(children), -1
    for i, child in enumerate(children):
        names = {n.block.name_hint for n, _ in walk(child) if isinstance(n, S.BlockRealize)}
        if names & consumer_names:
            first = min(first, i)
        if names & producer_names:
            last = i
    return first, last


def _check_not_output(func, realize):
    """compute_at recomputes only what the consumers under the loop read: a block writing a
    parameter buffer (an output) would leave the rest of it unwritten."""
    params = {id(b) for b in func.buffer_map.values()}
    for w in realize.block.writes:
        if id(w.buffer) in params:
            raise ScheduleError(f"block {realize.block.name_hint} writes the output "
                                f"{w.buffer.name}: compute_at would compute only the part its "
                                "consumers read")


def _check_recomputable(func, realize):
    """The moved block must be, as TVM requires, a complete or reduction block: the only writer
    of what it writes in its scope, and (unless its init resets it) not reading it. Only such a
    block can run once per iteration of the target loop over a part of its region and leave
    the same values: another writer (a decomposed reduction's init or update) would be
    reordered against it, and an in-place update would accumulate once more per iteration."""
    check_sole_writer(func, realize, "moved")
    block = realize.block
    name = block.name_hint
    written = {id(w.buffer) for w in block.writes}
    if block.init is None:
        for r in block.reads:
            if id(r.buffer) in written:
                raise ScheduleError(f"block {name} reads {r.buffer.name}, which it writes "
                                    "(with no init): it cannot be recomputed under a loop")


def _check_producers_final(func, producer_realizes, loop, name):
    """reverse_compute_at: the producers' values must be final at the end of an iteration of
    ``loop``: no reduction iter of a producer may be driven by ``loop`` or a loop around it
    (the consumer would read a partial reduction)."""
    outer = [n.loop_var for n in find_path(func, loop) + (loop,) if isinstance(n, S.For)]
    for p in producer_realizes:
        for iv, value in zip(p.block.iter_vars, p.iter_values):
            if iv.iter_type == S.IterVar.DataPar:
                continue
            for var in outer:
                if uses_var(value, var):
                    raise ScheduleError(f"loop {var.name_hint} drives the reduction iter "
                                        f"{iv.var.name_hint} of the producer "
                                        f"{p.block.name_hint}: block {name} would read a "
                                        f"partial reduction under loop {loop.loop_var.name_hint}")


def is_trivial_pred(pred):
    return isinstance(pred, E.IntImm) and pred.value == 1


def compute_at(func, realize, loop, preserve_unit_loops=False, index=-1):
    """Move the producer ``realize`` under ``loop``, computing what the consumers there read."""
    return _move(func, realize, loop, preserve_unit_loops, index, reverse=False)


def reverse_compute_at(func, realize, loop, preserve_unit_loops=False, index=-1):
    """Move the consumer ``realize`` under ``loop``, consuming what the producers there write."""
    return _move(func, realize, loop, preserve_unit_loops, index, reverse=True)


def _is_zero(expr) -> bool:
    return isinstance(expr, E.IntImm) and expr.value == 0


def _lower_bound_form(pred):
    """``x > c`` / ``x >= y`` as ``c + 1 <= x`` / ``y <= x``: how TVM's simplifier writes a
    lower bound, so predicates print (and compare) as TVM's compute_at writes them."""
    if isinstance(pred, E.GT) and isinstance(pred.b, E.IntImm):
        return E.LE(E.IntImm(pred.b.dtype, pred.b.value + 1), pred.a)
    if isinstance(pred, E.GE):
        return E.LE(pred.b, pred.a)
    return pred


def _in_dtype(expr, dtype):
    if expr.dtype == dtype:
        return expr
    return E.IntImm(dtype, expr.value) if isinstance(expr, E.IntImm) else E.Cast(dtype, expr)
