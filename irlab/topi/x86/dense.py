"""CPU schedules of the matrix products (``dense``, ``matmul``, ``batch_matmul``).

The product stage reads its second operand packed into panels ``pack[.., jo, k, ji]`` of
``bn`` contiguous columns (``topi.nn.dense(..., bn=...)``). The output is computed in
``bm x bn`` register tiles sized from the target (``dense_tile``): loops ``batch, jo, io | k,
ii, ji`` with ``ji`` vectorized (``bn`` floats: ``bn / lanes`` vector registers per row) and
``ii`` unrolled, so the inner loop is ``bm`` broadcasts + ``bn / lanes`` loads + ``bm * bn /
lanes`` FMAs. The tile is accumulated in a small
buffer (``cache_write`` when the product is the function's output; otherwise the product
stage itself, moved under the epilogue's tile loop with ``compute_at`` so the epilogue --
bias add, relu... -- is applied to each tile while it is hot). Each panel of the packed operand
is packed inside the (parallel) column loop, just before its use. The column loop (fused with
the batch loop) runs in parallel when there is enough work.

At opt_level 3, AlterOpLayout turns a CPU ``nn.dense`` that this schedule would pack into
``nn.contrib_dense_pack`` with the weight in layout ``NC{bn}n`` (``dense_tile`` picks ``bn`` for
both), which FoldConstant packs once; ``schedule_dense_prepacked`` is the same tile without the
packing stage.

An output narrower than one vector (a classifier's 10 columns) is one partial vector per row.
Tiny M (<= 2 rows: a matrix-vector product, where packing would cost as much as the product)
and ``N`` wider than the lanes but not a multiple of them use the unpacked compute and
``schedule_dense_simple`` (vectorized dot products via ``rfactor``, several output columns
accumulated at once).
"""

from __future__ import annotations

from irlab.tir.schedule import ScheduleError
from irlab.topi.utils import block_of, const_shape, loop_extent
from irlab.topi.x86.injective import schedule_injective_block
from irlab.topi.x86.register_tile import accumulator_budget, vector_lanes

PRODUCT_TAGS = ("dense", "matmul", "batch_matmul")
# A product runs its outer loop in parallel from this many FLOPs per vector lane: 2 MFLOP with
# AVX-512's 16 float32 lanes, 1 MFLOP with AVX2's 8 -- ~10-15 us of one core's work either
# way, against a fan-out of ~1-2 us to the native pool's spinning workers (the compiled call
# owns the pool's dispatcher: no Python on the way). The MLP b32's 784x256 (12.8 MFLOP) and
# 256x256 (4.2 MFLOP) layers run in parallel, its 256x10 layer (0.16 MFLOP) serially.
PARALLEL_MIN_FLOPS_PER_LANE = 1 << 17


def parallel_min_flops(target, dtype="float32") -> int:
    """FLOPs from which a matrix product on ``target`` runs its outer loop in parallel."""
    return PARALLEL_MIN_FLOPS_PER_LANE * vector_lanes(dtype, target)


GEMV_MAX_ROWS = 2


def dense_tile(m: int, n: int, target, dtype="float32"):
    """(bm, bn) register tile for an ``m x n`` output on ``target``, or None when m is tiny or
    n is wider than the vector lanes but not a multiple of them: ``bn`` the widest multiple of
    the lanes (up to a quarter of the accumulator budget, in 4, 2 or 1 vectors) dividing n, or
    n itself when narrower than one vector; ``bm`` as many rows as the rest of the budget
    allows (at most 8) -- 4 x 64 floats with AVX-512, 4 x 16 with AVX2."""
    if m <= GEMV_MAX_ROWS:
        return None
    lanes = vector_lanes(dtype, target)
    budget = accumulator_budget(target)
    widest = max(1, budget // 4)
    if n < lanes:
        # a narrow output (a classifier's 10 columns): one partial vector per row, so the
        # rows' FMAs run side by side instead of each column's dot product alone
        vectors, bn = 1, n
    else:
        vectors = next((v for v in (4, 2, 1) if v <= widest and n % (v * lanes) == 0), None)
        if vectors is None:
            return None
        bn = vectors * lanes
    limit = min(8, budget // vectors)
    bm = next(b for b in range(min(limit, m), 0, -1) if m % b == 0)
    return bm, bn


def find_product(outs):
    """The product tensor under ``outs`` (walking the epilogue's inputs)."""
    seen = set()
    stack = list(outs)
    while stack:
        t = stack.pop()
        if id(t.op) in seen:
            continue
        seen.add(id(t.op))
        if getattr(t.op, "tag", "") in PRODUCT_TAGS:
            return t
        stack.extend(getattr(t.op, "input_tensors", []))
    return None


def _flops(prod):
    shape = const_shape(prod)
    k = prod.op.body[0].axis[0].dom.extent if hasattr(prod.op.body[0], "axis") else None
    total = 2
    for d in shape:
        total *= d
    try:
        total *= int(k.value)
    except AttributeError:
        pass
    return total



def schedule_dense(sch, outs, target):
    """The packed register-tile schedule (or the simple one when the product is unpacked)."""
    prod = find_product(outs)
    if prod is None:
        return
    pack = next((t for t in prod.op.input_tensors if t.op.tag.endswith("_pack")), None)
    if pack is None:
        schedule_dense_simple(sch, outs, target)
        return
    outer = _register_tile(sch, outs, prod, const_shape(pack)[-1], target)
    if outer is None:
        schedule_dense_simple(sch, outs, target)
        return
    packb = block_of(sch, pack)
    sch.compute_at(packb, outer)
    _schedule_pack(sch, packb)


def schedule_dense_prepacked(sch, outs, target):
    """``nn.contrib_dense_pack``: the register tile of ``schedule_dense`` reading the weight
    already packed (``NC{n}n``: by AlterOpLayout + FoldConstant, or a ``layout_transform``
    kernel of its own), so there is no packing stage."""
    prod = find_product(outs)
    if prod is None:
        return
    weight = prod.op.input_tensors[-1]
    if _register_tile(sch, outs, prod, const_shape(weight)[-1], target) is None:
        schedule_dense_simple(sch, outs, target)


def _register_tile(sch, outs, prod, bn, target):
    """Schedule the product ``prod`` (reading panels of ``bn`` columns) and its epilogue in
    ``bm x bn`` register tiles; the outer (parallel) loop, or None when the tile does not apply
    (nothing scheduled then)."""
    out = outs[0]
    others = list(outs[1:])
    shape = const_shape(prod)
    if const_shape(out) != shape or len(shape) < 2:
        return None
    tile = dense_tile(shape[-2], shape[-1], target, prod.dtype)
    if tile is None or tile[1] != bn:
        return None
    bm = tile[0]
    pblock = block_of(sch, prod)
    if out.op is prod.op:
        *batch, i, j, k = sch.get_loops(pblock)
        io, ii = sch.split(i, [None, bm])
        jo, ji = sch.split(j, [None, bn])
        sch.reorder(*batch, jo, io, k, ii, ji)
        local = sch.cache_write(pblock, 0, "local")
        sch.reverse_compute_at(local, io)
        sch.decompose_reduction(pblock, k)
        sch.vectorize(ji)
        if bm > 1:
            sch.unroll(ii)
        sch.vectorize(sch.get_loops(local)[-1])
    else:
        oblock = block_of(sch, out)
        *batch, i, j = sch.get_loops(oblock)
        io, ii = sch.split(i, [None, bm])
        jo, ji = sch.split(j, [None, bn])
        sch.reorder(*batch, jo, io, ii, ji)
        sch.compute_at(pblock, io, preserve_unit_loops=True)
        *_, pi, pj, pk = sch.get_loops(pblock)
        sch.reorder(pk, pi, pj)
        sch.decompose_reduction(pblock, pk)
        sch.vectorize(pj)
        if bm > 1:
            sch.unroll(pi)
        sch.vectorize(ji)
    outer = sch.fuse(*batch, jo) if batch else jo
    if _flops(prod) >= parallel_min_flops(target, prod.dtype) and \
            (loop_extent(sch, outer) or 0) >= 2:
        sch.parallel(outer)
    for t in others:
        schedule_injective_block(sch, block_of(sch, t), target, t.dtype)
    return outer


PACK_MODE = "blocked"


def _schedule_pack(sch, packb):
    """The panel copy ``pack[k, ji] = B[j0 + ji, k]`` is a transpose: in 16 x bn blocks, read
    16 contiguous k of one row of B at a time (the writes stay in L1)."""
    k, ji = sch.get_loops(packb)[-2:]
    kext = loop_extent(sch, k) or 1
    kb = next((b for b in (16, 8, 4) if kext % b == 0), None)
    if PACK_MODE == "vector" or kb is None:
        sch.vectorize(ji)
        return
    ko, ki = sch.split(k, [None, kb])
    sch.reorder(ko, ji, ki)
    sch.unroll(ki)


def _columns_in_flight(n: int, target) -> int:
    """How many output columns the simple schedule accumulates at once: the largest divisor of
    ``n`` up to the accumulator budget, so that many independent FMA chains overlap."""
    limit = accumulator_budget(target)
    return next(b for b in range(min(limit, n), 0, -1) if n % b == 0)


def schedule_dense_simple(sch, outs, target):
    """The unpacked product as vectorized dot products: the reduction over ``k`` is split by
    the vector width and factored (``rfactor``) into a vector of partial sums per output
    element, accumulated in registers, then summed; output rows (fused with the columns) run
    in parallel when large enough. Used for tiny M (a GEMV: packing would cost as much as the
    product) and for N not a multiple of the vector lanes. The epilogue is scheduled as injective stages."""
    prod = find_product(outs)
    for t in outs:
        if prod is None or t.op is not prod.op:
            schedule_injective_block(sch, block_of(sch, t), target, t.dtype)
    if prod is None:
        return
    for t in prod.op.input_tensors:
        if t.op.tag.endswith("_pack"):
            schedule_injective_block(sch, block_of(sch, t), target, t.dtype)
    pblock = block_of(sch, prod)
    loops = sch.get_loops(pblock)
    ndata = len(prod.shape)
    k = loops[ndata]
    kext = loop_extent(sch, k) or 1
    kb = next((b for b in (16, 8) if kext % b == 0 and kext > b), None)
    data_loops = loops[:ndata]
    if kb is not None:
        try:
            _, ki = sch.split(k, [None, kb])
            rf = sch.rfactor(ki, ndata)
            wb_loops = sch.get_loops(pblock)
            jb = _columns_in_flight(loop_extent(sch, wb_loops[ndata - 1]) or 1, target)
            if jb > 1:
                _, wji = sch.split(wb_loops[ndata - 1], [None, jb])
                sch.compute_at(rf, sch.get_loops(pblock)[ndata - 1])
                # the rf block's loops come in its iteration order: ki (spatial), ji, ko
                rki, rji, rko = sch.get_loops(rf)[-3:]
                sch.reorder(rko, rji, rki)
                init = sch.decompose_reduction(rf, rko)
                sch.unroll(rji)
                sch.unroll(sch.get_loops(init)[-2])
                sch.unroll(wji)
                # constant indices everywhere: the partial sums stay in vector registers
                sch.unroll(sch.get_loops(pblock)[-1])
            else:
                sch.compute_at(rf, wb_loops[ndata - 1])
                # compute_at makes the loops in the rf block's iteration order: ki (spatial), ko
                rki, rko = sch.get_loops(rf)[-2:]
                sch.reorder(rko, rki)
                init = sch.decompose_reduction(rf, rko)
            sch.vectorize(rki)
            sch.vectorize(sch.get_loops(init)[-1])
            data_loops = sch.get_loops(pblock)[:ndata]
        except ScheduleError:
            data_loops = sch.get_loops(pblock)[:ndata]
    row = sch.fuse(*data_loops) if len(data_loops) > 1 else data_loops[0]
    if _flops(prod) >= parallel_min_flops(target, prod.dtype) and \
            (loop_extent(sch, row) or 0) >= 2:
        try:
            sch.parallel(row)
        except ScheduleError:
            pass


schedule_batch_matmul = schedule_dense
schedule_matmul = schedule_dense

__all__ = ["schedule_dense", "schedule_dense_prepacked", "schedule_dense_simple",
           "schedule_batch_matmul", "schedule_matmul", "dense_tile", "find_product",
           "parallel_min_flops"]
