"""``RewriteLayout``: lay each layout-free buffer (a weight) out in the order the tiled loop
nest reads it (TVM's ``ms.postproc.RewriteLayout``).

A PrimFunc lists its layout-free parameters in the ``layout_free_buffers`` attribute
(indices into ``params``; ``te.create_prim_func`` sets it from TOPI's
``layout_free_placeholders``). They are constants at build time, so their layout is free:
after tiling, the weight ``W[j, k]`` of a dense whose loops are ``j0, k0, j1, k1, j2``
(``j = j0*8 + j1*4 + j2``) is read fastest as ``W'[j0, k0, j1, k1, j2]``. The postprocessor
finds that order from the affine indices of the only block reading the buffer, stages the
parameter through a copy (``cache_read``) annotated ``meta_schedule.layout_rewrite_preproc``
and lays the copy out in that order (``transform_layout``), so the function keeps its
signature and computes the same values (the runner's check holds; the copy is timed). A
Relay build with the record drops the copy (``tir.transform``'s
``remove_weight_layout_rewrite_block``) and transforms the constant weight once instead.

A buffer read by several blocks, through non-affine indices (after ``fuse``), or through a
split that does not divide its extent is left as it is.
"""

from __future__ import annotations

from irlab.arith import Analyzer
from irlab.meta_schedule.postproc.postproc import Postproc
from irlab.tir.buffer import Range
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.functor import substitute
from irlab.tir.schedule import primitives_getters as G
from irlab.tir.transform.remove_weight_layout_rewrite_block import PREPROC_ATTR

LAYOUT_FREE_ATTR = "layout_free_buffers"


def _linear(e):
    """``{Var: coefficient}, constant`` of an affine index, None when not affine."""
    if isinstance(e, E.IntImm):
        return {}, e.value
    if isinstance(e, E.Var):
        return {e: 1}, 0
    if isinstance(e, E.Cast):
        return _linear(e.value)
    if isinstance(e, (E.Add, E.Sub)):
        a, b = _linear(e.a), _linear(e.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(e, E.Add) else -1
        coefs = dict(a[0])
        for v, c in b[0].items():
            coefs[v] = coefs.get(v, 0) + sign * c
        return coefs, a[1] + sign * b[1]
    if isinstance(e, E.Mul):
        a, b = _linear(e.a), _linear(e.b)
        if a is None or b is None or (a[0] and b[0]):
            return None
        (coefs, base), scale = (a, b[1]) if a[0] else (b, a[1])
        return {v: c * scale for v, c in coefs.items()}, base * scale
    return None


def _reader(func, buffer):
    """The only BlockRealize reading ``buffer``, or None."""
    readers = [n for n, _ in G.walk(func.body) if isinstance(n, S.BlockRealize)
               and any(r.buffer is buffer for r in n.block.reads)]
    return readers[0] if len(readers) == 1 else None


def _dim_loops(func, realize, buffer):
    """Per loop around ``realize`` (outer to inner) reading ``buffer``: ``(dim, stride,
    extent)``; None when an index is not a mixed-radix sum of whole loops."""
    region = next(r for r in realize.block.reads if r.buffer is buffer)
    if any(not G.is_const(rng.extent, 1) for rng in region.region):
        return None
    bind = {iv.var: value for iv, value in zip(realize.block.iter_vars, realize.iter_values)}
    loops = G.loops_of(func, realize)
    extents = {}
    for loop in loops:
        if not isinstance(loop.extent, E.IntImm) or not G.is_const(loop.min, 0):
            return None
        extents[loop.loop_var] = loop.extent.value
    analyzer = Analyzer()
    for var, extent in extents.items():
        analyzer.bind(var, Range.from_min_extent(0, extent))
    used = {}
    for dim, rng in enumerate(region.region):
        form = _linear(analyzer.simplify(substitute(rng.min, bind)))
        if form is None or form[1] != 0:
            return None
        for var, coef in form[0].items():
            if var not in extents or var in used or coef <= 0:
                return None
            if extents[var] > 1:
                used[var] = (dim, coef, extents[var])
    if not _exact_radix(used.values(), buffer.shape):
        return None
    return [used[lp.loop_var] for lp in loops if lp.loop_var in used]


def _exact_radix(parts, shape):
    """Each dimension is covered exactly: strides 1, n0, n0*n1, ... up to its extent."""
    for dim, size in enumerate(shape):
        stride = 1
        for _, coef, extent in sorted(p for p in parts if p[0] == dim):
            if coef != stride:
                return False
            stride *= extent
        if stride != int(size):
            return False
    return True


def _index_map_text(order, shape):
    """``lambda d0, d1, ...: (...)`` taking the old indices to the loop order's."""
    names = [f"d{i}" for i in range(len(shape))]
    outs = []
    for dim, coef, extent in order:
        term = names[dim] if coef == 1 else f"{names[dim]} // {coef}"
        if coef * extent != int(shape[dim]):
            term = f"{term} % {extent}" if coef == 1 else f"({term}) % {extent}"
        outs.append(term)
    for dim, size in enumerate(shape):  # a dimension no loop reads (extent 1)
        if not any(o[0] == dim for o in order):
            outs.append(names[dim])
    return f"lambda {', '.join(names)}: ({', '.join(outs)},)"


def _is_identity(order, shape):
    dims = [d for d, _, _ in order]
    return dims == sorted(dims) and len(dims) == len(set(dims)) and \
        all(e == int(shape[d]) for d, _, e in order)


class RewriteLayout(Postproc):
    """Rewrite each ``layout_free_buffers`` parameter into its tiled read order, through a
    copy block annotated ``meta_schedule.layout_rewrite_preproc`` (the function keeps its
    signature; the Relay build drops the copy and transforms the constant instead)."""

    def apply(self, sch) -> bool:
        for gv, func in list(sch.mod.functions.items()):
            for index in (func.attrs or {}).get(LAYOUT_FREE_ATTR, ()) or ():
                self._rewrite(sch, gv.name_hint, int(index))
        return True

    @staticmethod
    def _rewrite(sch, func_name, index):
        func = sch.mod[func_name]
        buffer = func.buffer_map[func.params[index]]
        realize = _reader(func, buffer)
        if realize is None:
            return
        order = _dim_loops(func, realize, buffer)
        if order is None or _is_identity(order, buffer.shape):
            return
        read_index = next(i for i, r in enumerate(realize.block.reads) if r.buffer is buffer)
        block = sch.get_block(realize.block.name_hint, func_name)
        copy = sch.cache_read(block, read_index, "global")
        sch.annotate(copy, PREPROC_ATTR, 1)
        sch.transform_layout(copy, ("write", 0), _index_map_text(order, buffer.shape))
