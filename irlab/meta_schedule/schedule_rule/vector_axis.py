"""Which loop of a block to vectorize: the data-parallel loop that walks a read buffer's
contiguous (last) axis, in whole vectors. MultiLevelTiling makes it the innermost loop of
the register tile and lays the accumulators out with it last.

For an NCHW conv2d whose weight AlterOpLayout packed as ``OIHW{n}o`` the loops are
``n, oc, oh, ow, rc, ry, rx``; the weight is read at ``[oc // n, rc, ry, rx, oc % n]``, so
``oc`` walks its last axis at unit stride and (64, 128... channels) in whole vectors, while
``ow`` (56, 28, 14, 7 columns; strided in the input for stride 2) rarely fills one. The
default loop order would vectorize ``ow``, the last spatial loop; TOPI's x86 schedule
vectorizes ``oc`` with the input as broadcast scalars, and so does the design space now.
When ``ow`` fills whole vectors too (56 columns, 8 lanes of AVX2) both walk one read buffer
contiguously; ``oc`` reads the weight at its own index (``oc % n``), ``ow`` the input at a
window offset (``ow + rx``: unaligned loads, strided with stride 2), and the plain index wins.
"""

from __future__ import annotations

from irlab.meta_schedule import block_analysis as BA
from irlab.tir import expr as E


def unit_stride(index, var) -> bool:
    """Whether ``index`` moves by exactly one when ``var`` does (within a tile): ``var``,
    ``var + e`` with ``e`` free of ``var``, or ``var % c`` of such an index."""
    if isinstance(index, E.Var):
        return index is var
    if isinstance(index, E.Add):
        a_has = id(var) in BA.var_ids(index.a)
        b_has = id(var) in BA.var_ids(index.b)
        if a_has == b_has:
            return False
        return unit_stride(index.a if a_has else index.b, var)
    if isinstance(index, (E.FloorMod, E.Mod)):
        return isinstance(index.b, E.IntImm) and id(var) not in BA.var_ids(index.b) \
            and unit_stride(index.a, var)
    return False


def plain_index(index, var) -> bool:
    """Whether ``index`` is ``var`` itself or ``var % c``: no offset added (a window's
    ``ow + rx`` is not), so its vectors start aligned with the tile."""
    if isinstance(index, (E.FloorMod, E.Mod)):
        return isinstance(index.b, E.IntImm) and plain_index(index.a, var)
    return index is var


def _read_scores(block, iter_var) -> tuple:
    """(how many read buffers, not the written one, ``iter_var`` walks contiguously; how
    many of those at a plain index)."""
    written = block.writes[0].buffer
    walked = plain = 0
    for region in block.reads:
        if region.buffer is written or not region.region:
            continue
        last = region.region[-1].min
        if unit_stride(last, iter_var):
            walked += 1
            plain += plain_index(last, iter_var)
    return walked, plain


def bound_iter_var(realize, loop):
    """The block iterator ``loop`` binds (trivial bindings), or None."""
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if value is loop.loop_var:
            return iv.var
    return None


def choose_vector_loop(realize, loops, lanes):
    """The index in ``loops`` of the loop to vectorize when it is not the last data-parallel
    loop already (None: keep the default order). The candidates are data-parallel loops a
    multiple of ``lanes`` long walking a read buffer's last axis; the most such buffers
    wins, then the most walked at a plain index (``plain_index``), then the later loop.
    ``loops`` bind the block's iterators trivially."""
    if lanes <= 1:
        return None
    block = realize.block
    best, best_key = None, None
    spatial = [i for i, lp in enumerate(loops) if BA.loop_iter_type(lp) == BA.DATA_PAR]
    for i in spatial:
        extent = BA.const_extent(loops[i])
        iter_var = bound_iter_var(realize, loops[i])
        if extent is None or extent % lanes or iter_var is None:
            continue
        walked, plain = _read_scores(block, iter_var)
        if walked and (best_key is None or (walked, plain, i) > best_key):
            best, best_key = i, (walked, plain, i)
    if best is None or best == spatial[-1]:
        return None
    return best


def written_dim(block, iter_var):
    """The axis of the block's written buffer that ``iter_var`` indexes (None: none)."""
    for dim, rng in enumerate(block.writes[0].region):
        if rng.min is iter_var:
            return dim
    return None


def move_last_map(ndim, dim) -> str:
    """An index map (text) moving axis ``dim`` of an ``ndim``-d buffer last."""
    names = [f"i{k}" for k in range(ndim)]
    order = names[:dim] + names[dim + 1:] + [names[dim]]
    return f"lambda {', '.join(names)}: ({', '.join(order)},)"
