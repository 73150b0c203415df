"""The x86 Winograd conv's stages as MetaSchedule custom rules (TVM's
``meta_schedule.cpu.conv2d_nchw_winograd_data_pack`` / ``_inverse``, for irlab's
``NCHW{x}c`` Winograd, ``topi.nn.winograd``).

The generic rules schedule a Winograd kernel badly: they leave the transforms as whole-array
passes whose coefficient Select chains run at every element (the transforms only become
constants once a schedule unrolls the tile positions), and tile the GEMMs with 4 accumulators.
Those candidates ran ~2x slower than TOPI's schedule (ResNet-18, Xeon Emerald Rapids). So,
as TVM does for its Winograd, the stages carry custom rules:

* ``data_pack`` (``winograd_input``): TOPI's input transform, the tile and its rows computed
  per tile (``schedule_winograd_input``); no decision.
* ``bgemm`` (``winograd_gemm``): TOPI's GEMM schedule with its register tile sampled: ``p_bn``
  tiles (a divisor of the tile count, at most the accumulator budget) x ``k_blocks`` output
  channel blocks (a divisor of the block count, at most 4), each a ``sample_categorical``
  whose default decision is TOPI's tile (``winograd_gemm_tile``). The search measures TOPI's
  point first and explores the tiles around it per layer and per machine.
* ``inverse`` (``conv2d_winograd``): the epilogue blocks after it inlined into one output
  stage, then TOPI's output transform on it (``schedule_winograd_output``); no decision.
"""

from __future__ import annotations

from irlab.runtime.registry import register_func
from irlab.target import Target
from irlab.topi.nn.winograd import BGEMM_RULE, DATA_PACK_RULE, INVERSE_RULE
from irlab.topi.x86.conv2d import PARALLEL_MIN_MACS
from irlab.topi.x86.conv2d_winograd import (schedule_winograd_gemm, schedule_winograd_input,
                                            schedule_winograd_output, winograd_gemm_tile)
from irlab.tir.schedule import ScheduleError

MAX_K_BLOCKS = 4  # output channel blocks (vectors) per register tile, as winograd_gemm_tile


def _only(blocks, what, block):
    if len(blocks) != 1:
        raise ScheduleError(f"Winograd rule: block {block.name!r} has {len(blocks)} {what}, "
                            f"expected one")
    return blocks[0]


def _iterations(sch, block) -> int:
    """The iteration count of ``block`` (its iterators' extents; adds nothing to the trace)."""
    total = 1
    for iv in sch.get(block).iter_vars:
        total *= int(iv.dom.extent)
    return total


def _parallel(sch, gemm) -> bool:
    """Whether the transforms run in parallel: TOPI's test, on the GEMM's multiply-adds."""
    return _iterations(sch, gemm) >= PARALLEL_MIN_MACS


def _choices(n, limit, default) -> list:
    """``default`` and the divisors of ``n`` from 2 up to ``limit``. Never 1 beside others:
    a tile 1 wide loses a unit loop in the write-back's nest, so a trace recorded with
    another width would not replay on it (a default of 1 is then the only choice)."""
    if default == 1:
        return [1]
    return sorted({d for d in range(2, min(n, limit) + 1) if n % d == 0} | {default})


def gemm_tile_candidates(tiles, chunks, block, target, dtype="float32"):
    """(p_bn candidates, k_blocks candidates, TOPI's (p_bn, k_blocks)): the divisors of the
    tile count up to the target's accumulator budget (all vector registers but four), of the
    output channel blocks up to ``MAX_K_BLOCKS`` (none of 1: ``_choices``); TOPI's choice is
    always among them."""
    default = winograd_gemm_tile(tiles, chunks, block, target, dtype)
    budget = max(1, target.num_vector_registers - 4)
    return (_choices(tiles, budget, default[0]), _choices(chunks, MAX_K_BLOCKS, default[1]),
            default)


@register_func(f"meta_schedule.cpu.{DATA_PACK_RULE}")
def data_pack(sch, block):
    """The input transform at ``block`` (``winograd_input``), its tile and rows per tile."""
    rows = _only(sch.get_producers(block), "producers", block)
    tile = _only(sch.get_producers(rows), "producers", rows)
    gemm = _only(sch.get_consumers(block), "consumers", block)
    schedule_winograd_input(sch, tile, rows, block, _parallel(sch, gemm))
    return [sch]


@register_func(f"meta_schedule.cpu.{BGEMM_RULE}")
def bgemm(sch, block):
    """The GEMMs at ``block`` (``winograd_gemm``) with a sampled register tile."""
    target = Target.current(allow_none=False)
    buffer = sch.get(block).writes[0].buffer
    _, _, tiles, chunks, lanes_block = (int(d) for d in buffer.shape)
    p_choices, k_choices, (p_bn, k_blocks) = gemm_tile_candidates(
        tiles, chunks, lanes_block, target, buffer.dtype)
    p_rv = sch.sample_categorical(p_choices, [1.0 / len(p_choices)] * len(p_choices),
                                  decision=p_choices.index(p_bn))
    k_rv = sch.sample_categorical(k_choices, [1.0 / len(k_choices)] * len(k_choices),
                                  decision=k_choices.index(k_blocks))
    schedule_winograd_gemm(sch, block, buffer, target, p_bn=p_rv, k_blocks=k_rv)
    return [sch]


@register_func(f"meta_schedule.cpu.{INVERSE_RULE}")
def inverse(sch, block):
    """The output transform at ``block`` (``conv2d_winograd``): the elementwise blocks after
    it (bias, residual, ReLU) inlined, so that the last one is the output stage that TOPI's
    schedule computes a tile at a time."""
    rows = _only(sch.get_producers(block), "producers", block)
    gemm = _only(sch.get_producers(rows), "producers", rows)
    m = int(sch.get(rows).writes[0].buffer.shape[2])
    out = block
    while True:
        consumers = sch.get_consumers(out)
        if len(consumers) != 1:
            break
        sch.compute_inline(out)
        out = consumers[0]
    schedule_winograd_output(sch, rows, out, m, _parallel(sch, gemm))
    return [sch]
