"""CPU schedule of the Winograd conv2d on ``NCHW{x}c`` data (``topi.nn.winograd``).

Three parallel loop nests, each transform's tile positions unrolled by LLVM (so that its
coefficients are constants) and its channel block vectorized:

* input transform: ``(tile, c.o)`` in parallel; per iteration the tile ``d``
  (``winograd_input_tile``), its rows ``B^T d`` (``winograd_input_rows``), each a 6 x 6 x 16
  scratch computed at that loop, and the ``(m + 2)^2`` vectors of ``B^T d B``;
* GEMMs: ``(eps, nu, k.o)`` in parallel, a register tile of ``p_bn`` tiles as broadcast scalars
  x ``k_blocks`` channel blocks as vectors (``winograd_gemm_tile``), reducing over the input
  channels, as the NCHWc conv's tile;
* output transform + epilogue: ``(n, k.o, tile row)`` in parallel; per tile the ``m x m``
  output vectors, ``A^T M`` (``winograd_output_rows``) computed at the tile.

A failed primitive falls back as the other conv schedules do (``guard_schedule``).
"""

from __future__ import annotations

from irlab.target.llvm_contract import UNROLL_COUNT_KEY
from irlab.tir.schedule import ScheduleError
from irlab.topi.utils import block_of, loop_extent
from irlab.topi.x86.conv2d import (PARALLEL_MIN_MACS, block_work, find_stage,
                                   finish_block_tile, guard_schedule, loops_under,
                                   tile_accumulators)
from irlab.topi.x86.register_tile import best_tile, vector_lanes


def _stage(outs, tag):
    found = find_stage(outs, lambda op: getattr(op, "tag", "") == tag)
    if found is None:
        raise ScheduleError(f"no {tag} stage under the outputs")
    return found


def winograd_gemm_tile(tiles, out_chunks, block, target, dtype="float32"):
    """``(p_bn, k_blocks)`` of the GEMMs' register tile: ``p_bn`` tiles (a divisor of
    ``tiles``) x ``k_blocks`` blocks of ``block`` output channels, all vector registers but
    four as accumulators (7 x 4 vectors with AVX-512's 32, 3 x 4 with AVX2's 16)."""
    lanes = vector_lanes(dtype, target)
    budget = max(1, target.num_vector_registers - 4)
    p_bn, cols = best_tile(tiles, out_chunks * block, lanes, 4 * lanes, budget)
    k_blocks = max(1, cols // block)
    while out_chunks % k_blocks:
        k_blocks -= 1
    return p_bn, k_blocks


@guard_schedule
def schedule_conv2d_NCHWc_winograd(attrs, sch, outs, conv, target):
    """Schedule ``conv2d_NCHWc_winograd`` (``conv``, its output stage) plus an inlined
    epilogue in ``sch``."""
    gemm_t = _stage(outs, "winograd_gemm")
    gemm = block_of(sch, gemm_t)
    parallel = block_work(sch, gemm) >= PARALLEL_MIN_MACS
    schedule_winograd_input(sch, block_of(sch, _stage(outs, "winograd_input_tile")),
                            block_of(sch, _stage(outs, "winograd_input_rows")),
                            block_of(sch, _stage(outs, "winograd_input")), parallel)
    schedule_winograd_gemm(sch, gemm, gemm_t, target)
    rows_t = _stage(outs, "winograd_output_rows")
    out = block_of(sch, outs[0])
    if outs[0].op is not conv.op:
        sch.compute_inline(block_of(sch, conv))
    schedule_winograd_output(sch, block_of(sch, rows_t), out, int(rows_t.shape[2]), parallel)


def _unroll_by_llvm(sch, loop):
    """Have LLVM unroll ``loop`` fully (a loop hint) rather than copy it in TIR: the
    transforms' coefficient Select chains then fold in LLVM, which does in a few ms what
    TIR's UnrollLoop + Simplify took ~0.2 s of Python per kernel for (ResNet-18's cold build
    5.6 s with the TIR copies, Xeon Emerald Rapids); the machine code is the same."""
    sch.annotate(loop, UNROLL_COUNT_KEY, loop_extent(sch, loop))


def schedule_winograd_input(sch, tile, rows, v, parallel):
    """``(tile, c.o)`` in parallel; the ``(m + 2)^2`` vectors of a tile unrolled, the tile
    ``d`` and its rows ``B^T d`` computed at that loop."""
    eps, nu, p, c, ci = sch.get_loops(v)
    sch.reorder(p, c, eps, nu, ci)
    outer = sch.fuse(p, c)
    if parallel:
        sch.parallel(outer)
    sch.vectorize(ci)
    sch.compute_at(rows, outer)
    sch.compute_at(tile, outer)
    for block in (tile, rows, v):
        first, second, lanes = loops_under(sch, block, outer)
        _unroll_by_llvm(sch, first)
        _unroll_by_llvm(sch, second)
        sch.vectorize(lanes)


def schedule_winograd_gemm(sch, gemm, gemm_t, target, p_bn=None, k_blocks=None):
    """``(eps, nu, k.o)`` in parallel, then the ``p_bn x k_blocks`` register tile.

    ``gemm_t``: the GEMM's output, a TE tensor or the block's buffer (its shape and dtype are
    read). The tile is ``winograd_gemm_tile``'s unless given: ints, or ExprRVs that a
    MetaSchedule rule sampled. The instructions are the same for every value, so a trace
    replays with other decisions."""
    eps, nu, p, k, ki, rc, ri = sch.get_loops(gemm)
    _, _, tiles, chunks, block = (int(d) for d in gemm_t.shape)
    if p_bn is None or k_blocks is None:
        p_bn, k_blocks = winograd_gemm_tile(tiles, chunks, block, target, gemm_t.dtype)
    po, pi = sch.split(p, [None, p_bn])
    ko, kin = sch.split(k, [None, k_blocks])
    _, init = tile_accumulators(sch, gemm, None, [eps, nu, ko, po, rc, ri, pi, kin, ki], ki, pi,
                                [eps, nu, ko], po, rc, target=target)
    finish_block_tile(sch, init, po, kin, ri)


def schedule_winograd_output(sch, rows, out, m, parallel):
    """``(n, k.o, tile row)`` in parallel; a tile's ``m x m`` output vectors unrolled, its
    rows ``A^T M`` computed at the tile."""
    n, k, y, x, ki = sch.get_loops(out)
    ty, i = sch.split(y, [None, m])
    tx, j = sch.split(x, [None, m])
    sch.reorder(n, k, ty, tx, i, j, ki)
    outer = sch.fuse(n, k, ty)
    if parallel:
        sch.parallel(outer)
    _unroll_by_llvm(sch, i)
    _unroll_by_llvm(sch, j)
    sch.vectorize(ki)
    sch.compute_at(rows, tx)
    first, second, lanes = loops_under(sch, rows, tx)
    _unroll_by_llvm(sch, first)
    _unroll_by_llvm(sch, second)
    sch.vectorize(lanes)


__all__ = ["schedule_conv2d_NCHWc_winograd", "schedule_winograd_input", "schedule_winograd_gemm",
           "schedule_winograd_output", "winograd_gemm_tile"]
