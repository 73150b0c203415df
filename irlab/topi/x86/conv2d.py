"""CPU schedules of conv2d / conv2d_transpose: register-tiled direct convolution, and
im2col + GEMM for small images.

Every schedule works on the blocks LowerTE made from the fused function: ``pad_temp`` (the
padded input, when there is padding), ``conv2d`` (the reduction) and the function's output
(the conv itself, or an epilogue such as ``relu(conv + bias + residual)`` whose injective
producers LowerTE already inlined into it). The accumulators of a tile are a ``local`` cache
(``cache_write``, laid out with the vector lanes last) written back at the tile loop; the
epilogue is reverse-inlined into that write-back, so no full-size conv buffer remains.

* NCHW/OIHW (``schedule_conv2d_nchw`` picks one):
  - packed (output channels a multiple of the vector width, >= PACK_MIN_PIXELS pixels): the
    weight is packed per call into ``[oc.o, ic, kh, kw, oc.i]`` panels (``cache_read`` +
    ``transform_layout``); tile = ``ow_bn`` columns x ``oc_bn`` channels, channels as vector
    lanes, the input as broadcast scalars. Loops ``(n, oc.o, oh) parallel, ow.o, ic, kh, kw,
    ow.i unrolled, oc.i vectorized``. At opt_level 3 AlterOpLayout gives such convolutions an
    ``OIHW{oc_bn}o`` kernel instead (``nchw_packed_tile`` picks the block for both), which
    FoldConstant packs once: ``schedule_conv2d_nchw_prepacked`` is the same tile without the
    packing stage.
  - direct: tile = ``oc_bn`` channels x ``ow_bn`` columns, columns as vector lanes, the weight
    as broadcast scalars (small channel counts).
  - im2col + GEMM (``schedule_conv2d_nchw_im2col``, a different compute chosen by the strategy
    below IM2COL_MAX_PIXELS output pixels): the im2col matrix built as GEMM panels, 4 x 64
    register tiles reading the OIHW weight as it is.
* NCHWc (``schedule_conv2d_NCHWc``, the default for x86 convs at opt_level 3): tile =
  ``ow_bn`` columns x ``oc_blocks`` channel blocks, each block's channels the vector lanes;
  the output is written in whole vectors, no transpose (``nchwc_tile`` picks the tile).
* NHWC/HWIO: tile = ``ow_bn`` columns x ``oc_bn`` channels, channels as vector lanes
  (contiguous in HWIO weights and in the output): the GEMM micro-kernel of bench_gemm.py.
* depthwise: NCHW vectorizes the columns, NHWC the channels.
* padding: ``pad_temp`` is its own vectorized stage at the root.
* small convolutions (< PARALLEL_MIN_MACS) run serially: a fan-out would cost more than it saves.
"""

from __future__ import annotations

from irlab.target.llvm_contract import UNROLL_COUNT_KEY
from irlab.tir.schedule import ScheduleError
from irlab.topi.utils import block_of, loop_extent
from irlab.topi.x86.injective import PARALLEL_MIN_ELEMENTS, schedule_injective_block
from irlab.topi.x86.register_tile import accumulator_budget, best_tile, vector_lanes

# Below this many multiply-adds (~30 us on one AVX2 core) a parallel loop's fan-out to the
# native thread pool (~1-2 us while its workers spin, tens of us when they sleep) saves too
# little: run serially.
PARALLEL_MIN_MACS = 1 << 20


def block_work(sch, block):
    total = 1
    for loop in sch.get_loops(block):
        total *= loop_extent(sch, loop)
    return total


def find_stage(outs, predicate):
    """The first TE tensor under ``outs`` (outputs included) whose op satisfies predicate."""
    seen, stack = set(), list(outs)
    while stack:
        t = stack.pop(0)
        if id(t.op) in seen:
            continue
        seen.add(id(t.op))
        if predicate(t.op):
            return t
        stack.extend(getattr(t.op, "input_tensors", []))
    return None



def largest_divisor(n, limit, prefer_multiple=1):
    """The largest divisor of n that is <= limit, preferring multiples of prefer_multiple."""
    best = 1
    for d in range(min(n, limit), 0, -1):
        if n % d == 0:
            if d % prefer_multiple == 0:
                return d
            best = max(best, d)
    return best


def nchw_tile(n_oc, n_ow, target, dtype="float32"):
    """(oc_bn, ow_bn) of the NCHW tile (the output columns are the vector lanes, at most one
    vector: LLVM splits a <28 x float> badly, 9 vs 44 GFLOPS on 64x56x56 3x3)."""
    lanes = vector_lanes(dtype, target)
    return best_tile(n_oc, n_ow, lanes, lanes, accumulator_budget(target))


def nhwc_tile(n_ow, n_oc, target, dtype="float32"):
    """(ow_bn, oc_bn) of the NHWC tile (the output channels are the vector lanes)."""
    lanes = vector_lanes(dtype, target)
    return best_tile(n_ow, n_oc, lanes, 4 * lanes, accumulator_budget(target))


def schedule_pad(sch, outs, target):
    """Schedule the padding stages under ``outs`` (tag ``pad``): see _schedule_pad_block."""
    for t in _stages(outs):
        if t.op.tag and "pad" in t.op.tag.split(","):
            source = t.op.input_tensors[0] if t.op.input_tensors else None
            inner_unpadded = source is not None and len(source.shape) == len(t.shape) and \
                int(source.shape[-1]) == int(t.shape[-1])
            try:
                _schedule_pad_block(sch, block_of(sch, t), target, inner_unpadded)
            except ScheduleError:
                pass


def _schedule_pad_block(sch, block, target, inner_unpadded=False):
    """The rows of the padded tensor (all axes but the innermost, fused) in parallel, each
    row a plain loop: vectorized, the clamped and selected loads become gathers (10x slower
    than the scalar loops LLVM optimizes itself: 1.2 ms vs 0.1 ms for 64x114x114). Rows, not
    channels: the 3 channels of an RGB image split 2:1 between two threads.

    ``inner_unpadded``: the innermost axis has no padding (NCHW16c's c, NHWC's C), so a row
    is the last two axes, its inner axis vectorized -- contiguous loads, one padding test per
    vector. Fusing all but the innermost would compute the clamped indices (a division and a
    modulo per fused axis) for every 16 elements: 0.2 ms of ResNet-18's 64x56x56 3x3 conv
    (1.65 ms) went to its NCHW16c padding that way. An ``NCHW{x}c`` tensor is split between
    the threads by rows (``n, h`` fused, the channel blocks inside), as the convolution after
    it splits its output rows: each thread then reads mostly the rows it padded itself, from
    its own cache (by channel blocks, half of every row band was in the other core's L2)."""
    loops = sch.get_loops(block)
    total = 1
    for loop in loops:
        total *= loop_extent(sch, loop)
    if len(loops) < 2 or total < PARALLEL_MIN_ELEMENTS * 4:
        return
    if inner_unpadded and len(loops) == 5:  # NCHW{x}c: bands of rows, as the conv reads them
        n, c, h, w, lanes = loops
        sch.reorder(n, h, c, w, lanes)
        outer = sch.fuse(n, h)
        sch.vectorize(lanes)
    elif inner_unpadded and len(loops) >= 3:
        outer = sch.fuse(*loops[:-2]) if len(loops) > 3 else loops[0]
        sch.vectorize(loops[-1])
    else:
        outer = sch.fuse(*loops[:-1]) if len(loops) > 2 else loops[0]
    if loop_extent(sch, outer) > 1:
        sch.parallel(outer)


def _stages(outs):
    seen, stack, out = set(), list(outs), []
    while stack:
        t = stack.pop(0)
        if id(t.op) in seen:
            continue
        seen.add(id(t.op))
        out.append(t)
        stack.extend(getattr(t.op, "input_tensors", []))
    return out


def _epilogue(sch, outs, conv):
    """The output block when it is not the conv itself (else None)."""
    out = outs[0]
    if out.op is conv.op:
        return None
    return block_of(sch, out)


def tile_accumulators(sch, conv_block, out_block, order, vec_loop, unroll_loop, parallel_loops,
                      tile_loop, reduce_first, local_layout=None, target=None,
                      unroll_write_back=False):
    """reorder + register-tile accumulator + write-back (+ epilogue) at ``tile_loop``.
    ``local_layout``: an index map for the accumulator buffer, so that the vector lanes are
    its last (contiguous) axis. ``unroll_write_back``: unroll the write-back's outer loop, so
    LLVM keeps the accumulators in registers and turns the lanes the write-back gathers from
    them into shuffles (else they go through memory, lane by lane)."""
    work = block_work(sch, conv_block)
    sch.reorder(*order)
    cl = sch.cache_write(conv_block, 0, "local")
    if local_layout is not None:
        sch.transform_layout(conv_block, ("write", 0), local_layout)
    separate_epilogue = False
    if out_block is not None:
        try:
            sch.reverse_compute_inline(out_block)
        except ScheduleError:  # e.g. an epilogue reading the conv at other indices
            separate_epilogue = True
    sch.reverse_compute_at(cl, tile_loop)
    init = sch.decompose_reduction(conv_block, reduce_first)
    if vec_loop is not None:
        sch.vectorize(vec_loop)
    if unroll_loop is not None:
        sch.unroll(unroll_loop)
    fused = sch.fuse(*parallel_loops) if len(parallel_loops) > 1 else parallel_loops[0]
    if work >= PARALLEL_MIN_MACS:
        sch.parallel(fused)
    wb_loops = sch.get_loops(cl)
    try:
        sch.vectorize(wb_loops[-1])
    except ScheduleError:
        pass
    if unroll_write_back and len(wb_loops) > 1:
        sch.unroll(wb_loops[-2])
    if separate_epilogue:
        schedule_injective_block(sch, out_block, target, "float32")
    return cl, init


def loops_under(sch, block, loop):
    """The loops of ``block`` nested inside ``loop``, outermost first."""
    var = sch.get(loop).loop_var
    loops = sch.get_loops(block)
    at = next(k for k, rv in enumerate(loops) if sch.get(rv).loop_var is var)
    return loops[at + 1:]


def _fallback(sch, outs, conv, target):
    """Parallel outer loop, and the epilogue as a vectorized injective stage."""
    schedule_pad(sch, outs, target)
    block = block_of(sch, conv)
    loops = sch.get_loops(block)
    try:
        sch.parallel(loops[0] if loop_extent(sch, loops[0]) > 1 else sch.fuse(loops[0], loops[1]))
    except ScheduleError:
        pass
    out_block = _epilogue(sch, outs, conv)
    if out_block is not None:
        schedule_injective_block(sch, out_block, target, outs[0].dtype)


def _is_conv(op):
    return getattr(op, "tag", "").startswith("conv2d")


def guard_schedule(schedule):
    """Run ``schedule``; if a primitive fails, redo the fallback on a fresh copy of the state
    (a failed primitive leaves the schedule unchanged, but earlier ones stay applied)."""
    def run(attrs, sch, outs, target):
        conv = find_stage(outs, _is_conv)
        if conv is None:
            return
        saved = sch.copy()
        try:
            schedule(attrs, sch, outs, conv, target)
        except ScheduleError:
            sch.__dict__.update(saved.__dict__)
            _fallback(sch, outs, conv, target)

    run.__name__ = schedule.__name__
    run.__doc__ = schedule.__doc__
    return run


PACK_MIN_PIXELS = 64  # below this many output pixels (all images), packing the weight costs
#                       more than the convolution it speeds up (ResNet-18's 7x7 layers; the
#                       strategy gives those to im2col + GEMM)


def nchw_packed_tile(out_shape, target, dtype="float32", packed_per_call=True):
    """``(ow_bn, oc_bn)`` of the packed NCHW schedule for an NCHW output of ``out_shape``, or
    None when that schedule does not apply (output channels not a multiple of the vector
    lanes; fewer than PACK_MIN_PIXELS pixels when the weight is ``packed_per_call``). The
    weight is packed in blocks of ``oc_bn`` output channels: per call here, or once by
    AlterOpLayout (``OIHW{oc_bn}o``, ``packed_per_call=False``: small images too, which then
    skip im2col's copy -- ResNet-18's 512-channel 7x7 layers, ~20% faster), whose CPU hook asks
    this same function, so the hook and the schedule agree on the block."""
    batch, channels, height, width = (int(d) for d in out_shape)
    lanes = vector_lanes(dtype, target)
    if channels % lanes:
        return None
    if packed_per_call and batch * height * width < PACK_MIN_PIXELS:
        return None
    ow_bn, oc_bn = nhwc_tile(width, channels, target, dtype)
    if oc_bn % lanes:
        return None
    return ow_bn, oc_bn


@guard_schedule
def schedule_conv2d_nchw(attrs, sch, outs, conv, target):
    """NCHW conv2d: the packed-weight schedule (channels as vector lanes) when the output
    channels fill vectors and the image is large enough to amortize the packing, else the
    direct one (columns as vector lanes)."""
    if nchw_packed_tile(conv.shape, target, conv.dtype) is not None:
        saved = sch.copy()
        try:
            return _nchw_packed(attrs, sch, outs, conv, target)
        except ScheduleError:
            sch.__dict__.update(saved.__dict__)
    return _nchw_direct(attrs, sch, outs, conv, target)


def _nchw_direct(attrs, sch, outs, conv, target):
    """Direct NCHW conv2d: (oc_bn x ow_bn) register tile, columns vectorized."""
    schedule_pad(sch, outs, target)
    block = block_of(sch, conv)
    out_block = _epilogue(sch, outs, conv)
    n, oc, oh, ow, rc, ry, rx = sch.get_loops(block)
    oc_bn, ow_bn = nchw_tile(loop_extent(sch, oc), loop_extent(sch, ow), target, conv.dtype)
    oco, oci = sch.split(oc, [None, oc_bn])
    owo, owi = sch.split(ow, [None, ow_bn])
    vec = owi if int(attrs.strides[1]) == 1 else None  # strided columns: gathers
    tile_accumulators(sch, block, out_block, [n, oco, oh, owo, rc, ry, rx, oci, owi], vec, oci,
                      [n, oco, oh], owo, rc, target=target)


def _nchw_packed(attrs, sch, outs, conv, target):
    """NCHW conv2d with the OIHW weight packed (per call) into ``[oc.o, ic, kh, kw, oc.i]``
    panels: an (ow_bn x oc_bn) register tile with the output channels as vector lanes (the
    NHWC micro-kernel), the input read as broadcast scalars."""
    tile = nchw_packed_tile(conv.shape, target, conv.dtype)
    if tile is None:
        raise ScheduleError("output channels are not a multiple of the vector lanes")
    ow_bn, oc_bn = tile
    block = block_of(sch, conv)
    wpack = sch.cache_read(block, 1, "global")
    sch.transform_layout(wpack, ("write", 0),
                         lambda o, i, h, w: (o // oc_bn, i, h, w, o % oc_bn))
    _packed_tile(sch, outs, conv, target, ow_bn, oc_bn)
    # pack in the packed order: contiguous vector writes, gathered reads
    o, i, h, w = sch.get_loops(wpack)
    oo, oi = sch.split(o, [None, oc_bn])
    sch.reorder(oo, i, h, w, oi)
    sch.vectorize(oi)
    outer = sch.fuse(oo, i)
    packed = loop_extent(sch, outer) * oc_bn * loop_extent(sch, h) * loop_extent(sch, w)
    if packed >= PARALLEL_MIN_ELEMENTS:
        sch.parallel(outer)


def _nchw_prepacked(attrs, sch, outs, conv, target):
    """NCHW conv2d whose weight comes packed (``OIHW{oc_bn}o``, by AlterOpLayout + FoldConstant
    or a ``layout_transform`` kernel): the tile of ``_nchw_packed`` with no packing stage."""
    from irlab.tir.data_layout import split_kernel_layout

    primal, oc_bn = split_kernel_layout(attrs.kernel_layout)
    if primal != "OIHW" or oc_bn is None:
        raise ScheduleError(f"kernel layout {attrs.kernel_layout} is not OIHW{{n}}o")
    tile = nchw_packed_tile(conv.shape, target, conv.dtype, packed_per_call=False)
    if tile is not None and tile[1] == oc_bn:
        ow_bn = tile[0]
    else:  # a block the schedule would not have chosen: as many columns as accumulators allow
        vectors = -(-oc_bn // vector_lanes(conv.dtype, target))
        ow_bn = largest_divisor(int(conv.shape[3]), max(1, accumulator_budget(target) // vectors))
    _packed_tile(sch, outs, conv, target, ow_bn, oc_bn)


def _packed_tile(sch, outs, conv, target, ow_bn, oc_bn):
    """The (ow_bn x oc_bn) register tile of the packed schedules: output channels as vector
    lanes, loops ``(n, oc.o, oh) parallel, ow.o, ic, kh, kw, ow.i unrolled, oc.i vectorized``."""
    schedule_pad(sch, outs, target)
    block = block_of(sch, conv)
    out_block = _epilogue(sch, outs, conv)
    n, oc, oh, ow, rc, ry, rx = sch.get_loops(block)
    taps = loop_extent(sch, ry) * loop_extent(sch, rx)
    macs = loop_extent(sch, rc) * taps
    oco, oci = sch.split(oc, [None, oc_bn])
    owo, owi = sch.split(ow, [None, ow_bn])
    # a narrow tile of a short reduction: its write-back (a transpose of the accumulators)
    # is a large part of the work unless unrolled (the 7x7/2 stem, 3 input channels = 147
    # MACs per output, 4 x 64 tile: 1.76 vs 1.99 ms of CPU; Xeon Emerald Rapids, AVX-512).
    # Unrolled, a kernel's code is ~8x larger (+0.1 s of cold build each): behind a 3x3
    # conv's 576+ MACs the gain is a few percent at most, and a 1x1 conv's (0.05 ms on
    # ResNet-18's 64>128 one, the others' tiles are wider) does not pay for it either.
    unroll = ow_bn <= NARROW_TILE_COLUMNS and macs < SHORT_REDUCTION_MACS and taps > 1
    tile_accumulators(sch, block, out_block, [n, oco, oh, owo, rc, ry, rx, owi, oci], oci, owi,
                      [n, oco, oh], owo, rc, local_layout=lambda b, c, h, w: (b, h, w, c),
                      target=target, unroll_write_back=unroll)


def nchwc_tile(out_shape, target, dtype="float32", reduction=0):
    """``(ow_bn, oc_blocks)`` of the NCHWc schedule for an ``NCHW{y}c`` output of
    ``out_shape``: ``ow_bn`` columns x ``oc_blocks`` channel blocks, the register tile the packed
    NCHW schedule would take for these channels (``nhwc_tile``: 4 columns x 64 channels with
    AVX-512 on 64+ channels). A long ``reduction`` (products per output, >= LONG_REDUCTION)
    on a CPU with 32 vector registers gets a larger tile, all registers but four (7 x 64 on
    ResNet-18's 128+ channel layers: 0.90-0.95x the time of 4 x 64 and 7 x 32, interleaved on
    a Xeon Emerald Rapids; on its 64-channel layers 7 x 64 was 1.2x slower)."""
    batch, chunks, height, width, block = (int(d) for d in out_shape)
    registers = target.num_vector_registers
    if reduction >= LONG_REDUCTION and registers >= 32:
        lanes = vector_lanes(dtype, target)
        ow_bn, oc_bn = best_tile(width, chunks * block, lanes, 4 * lanes, registers - 4)
    else:
        ow_bn, oc_bn = nhwc_tile(width, chunks * block, target, dtype)
    return ow_bn, max(1, largest_divisor(chunks, max(1, oc_bn // block)))


LONG_REDUCTION = 1024  # products per output from which nchwc_tile takes the larger tile


@guard_schedule
def schedule_conv2d_NCHWc(attrs, sch, outs, conv, target):
    """conv2d_NCHWc (``NCHW{x}c`` data, ``OIHW{x}i{y}o`` kernel, ``NCHW{y}c`` output): a register
    tile of ``ow_bn`` columns x ``oc_blocks`` blocks of y channels, each block's channels the
    vector lanes. Loops ``(n, oc.o, oh) parallel, ow.o, ic.o, kh, kw, ic.i, ow.i unrolled,
    oc.block unrolled, oc.lane vectorized``. The accumulators are already in the output's
    order, so the write-back (with the epilogue) stores whole vectors: no transpose, unlike
    the packed NCHW tile."""
    schedule_pad(sch, outs, target)
    block = block_of(sch, conv)
    out_block = _epilogue(sch, outs, conv)
    n, oco, oh, ow, oci, rco, ry, rx, rci = sch.get_loops(block)
    reduction = 1
    for loop in (rco, ry, rx, rci):
        reduction *= loop_extent(sch, loop)
    ow_bn, blocks = nchwc_tile(conv.shape, target, conv.dtype, reduction)
    ocoo, ocoi = sch.split(oco, [None, blocks])
    owo, owi = sch.split(ow, [None, ow_bn])
    _, init = tile_accumulators(sch, block, out_block,
                                [n, ocoo, oh, owo, rco, ry, rx, rci, owi, ocoi, oci], oci, owi,
                                [n, ocoo, oh], owo, rco, target=target)
    finish_block_tile(sch, init, owo, ocoi if blocks > 1 else None, rci)


def finish_block_tile(sch, init, tile_loop, blocks_loop, lane_reduction):
    """The end of a register tile whose accumulators are blocks of vectors
    (``tile_accumulators`` made it at ``tile_loop``): the blocks unrolled, the accumulators
    zeroed by unrolled whole-vector stores, and the reduction over one block's lanes unrolled
    RCI_UNROLL times by LLVM.

    Zeroing as whole vectors at constant offsets, not three loops of scalar stores for LLVM to
    vectorize and unroll: ResNet-18's LLVM pipeline 0.87 vs 1.09 s of CPU (Xeon Emerald
    Rapids; the write-back unrolled too saved 0.2 s more of LLVM but cost as much in Python's
    lowering and codegen, which the build waits on)."""
    if blocks_loop is not None:
        sch.unroll(blocks_loop)
    *outer, lanes = loops_under(sch, init, tile_loop)
    sch.vectorize(lanes)
    for loop in outer:
        sch.unroll(loop)
    if loop_extent(sch, lane_reduction) % RCI_UNROLL == 0:
        sch.annotate(lane_reduction, UNROLL_COUNT_KEY, RCI_UNROLL)


# The input-channel loop of the NCHWc tile is unrolled this many times by LLVM (a loop hint,
# UNROLL_COUNT_KEY: no cost in build time, unlike TIR's unroll, which made ResNet-18's cold
# build 1.7 s slower): 0.92x the time of ResNet-18's 512-channel 3x3 conv, 0.97-1.0x the
# others (interleaved, Xeon Emerald Rapids).
RCI_UNROLL = 4


NARROW_TILE_COLUMNS = 4  # packed tiles this narrow unroll their write-back (_packed_tile) ...
SHORT_REDUCTION_MACS = 512  # ... when each output sums fewer products than this
IM2COL_ROWS = 4  # output channels of the im2col GEMM's register tile (broadcast scalars)


def im2col_panel(target, dtype="float32"):
    """Pixels per im2col panel: the vector lanes of the GEMM's register tile, as many vectors
    as ``IM2COL_ROWS`` rows leave accumulators for (64 floats with AVX-512, 16 with AVX2)."""
    vectors = max(1, accumulator_budget(target) // IM2COL_ROWS)
    return vectors * vector_lanes(dtype, target)


def schedule_conv2d_nchw_im2col(attrs, sch, outs, target, bm=IM2COL_ROWS):
    """The im2col + GEMM conv2d (see ``_im2col``); a failed primitive leaves the stages
    as plain parallel loops."""
    saved = sch.copy()
    try:
        _im2col(sch, outs, target, bm)
    except ScheduleError:
        sch.__dict__.update(saved.__dict__)
        for t in _stages(outs):
            if t.op.tag in ("conv2d_im2col_out", "conv2d_im2col_col") or t is outs[0]:
                try:
                    schedule_injective_block(sch, block_of(sch, t), target, t.dtype)
                except ScheduleError:
                    pass


def _im2col(sch, outs, target, bm):
    """im2col + GEMM (``topi.nn.conv2d.conv2d_nchw_im2col``): the ``col`` panels at the root
    (parallel over panels), the GEMM in (bm x bn) register tiles -- bm output channels as
    broadcast weight scalars, bn pixels as vector lanes -- parallel over (panel, channel tile);
    the output (reshape + epilogue) as a vectorized injective stage."""
    gemm = find_stage(outs, lambda op: op.tag == "conv2d_im2col_gemm")
    col = find_stage(outs, lambda op: op.tag == "conv2d_im2col_col")
    reshape = find_stage(outs, lambda op: op.tag == "conv2d_im2col_out")
    schedule_pad(sch, outs, target)
    g = block_of(sch, gemm)
    work = block_work(sch, g)
    o, q, rc, ry, rx = sch.get_loops(g)
    bn = int(col.shape[2])
    if loop_extent(sch, o) % bm:
        bm = largest_divisor(loop_extent(sch, o), bm)
    oo, oi = sch.split(o, [None, bm])
    qo, qi = sch.split(q, [None, bn])
    sch.reorder(qo, oo, rc, ry, rx, oi, qi)
    cl = sch.cache_write(g, 0, "local")
    sch.reverse_compute_at(cl, oo)
    sch.decompose_reduction(g, rc)
    sch.vectorize(qi)
    sch.unroll(oi)
    outer = sch.fuse(qo, oo)
    if work >= PARALLEL_MIN_MACS:
        sch.parallel(outer)
    sch.vectorize(sch.get_loops(cl)[-1])
    c = block_of(sch, col)
    qo_c, r_c, qi_c = sch.get_loops(c)
    sch.vectorize(qi_c)
    outer = sch.fuse(qo_c, r_c)
    if loop_extent(sch, outer) * bn >= PARALLEL_MIN_ELEMENTS:
        sch.parallel(outer)
    if outs[0].op is not reshape.op:
        sch.compute_inline(block_of(sch, reshape))
    schedule_injective_block(sch, block_of(sch, outs[0]), target, outs[0].dtype)


schedule_conv2d_nchw_direct = guard_schedule(_nchw_direct)
schedule_conv2d_nchw_packed = guard_schedule(_nchw_packed)
schedule_conv2d_nchw_prepacked = guard_schedule(_nchw_prepacked)


@guard_schedule
def schedule_conv2d_nhwc(attrs, sch, outs, conv, target):
    """Direct NHWC conv2d: (ow_bn x oc_bn) register tile, channels vectorized."""
    schedule_pad(sch, outs, target)
    block = block_of(sch, conv)
    out_block = _epilogue(sch, outs, conv)
    n, oh, ow, oc, rc, ry, rx = sch.get_loops(block)
    ow_bn, oc_bn = nhwc_tile(loop_extent(sch, ow), loop_extent(sch, oc), target, conv.dtype)
    oco, oci = sch.split(oc, [None, oc_bn])
    owo, owi = sch.split(ow, [None, ow_bn])
    tile_accumulators(sch, block, out_block, [n, oh, oco, owo, ry, rx, rc, owi, oci], oci, owi,
                      [n, oh, oco], owo, ry, target=target)


@guard_schedule
def schedule_conv2d_depthwise(attrs, sch, outs, conv, target):
    """Depthwise conv2d: NCHW vectorizes the columns, NHWC the channels."""
    schedule_pad(sch, outs, target)
    block = block_of(sch, conv)
    out_block = _epilogue(sch, outs, conv)
    lanes = vector_lanes(conv.dtype, target)
    layout = attrs.data_layout
    loops = sch.get_loops(block)
    spatial = dict(zip(layout, loops[:4]))
    rc, ry, rx = loops[4:]
    if layout == "NCHW":
        n, c, oh, ow = (spatial[k] for k in "NCHW")
        n_ow = loop_extent(sch, ow)
        ow_bn = largest_divisor(n_ow, lanes) if n_ow > lanes else n_ow  # one vector (see nchw_tile)
        owo, owi = sch.split(ow, [None, ow_bn])
        # strided columns would be gathered: leave that loop to LLVM
        # (2.7 vs 8.4 GFLOPS, 128x56x56 3x3/2)
        vec = owi if int(attrs.strides[1]) == 1 else None
        tile_accumulators(sch, block, out_block, [n, c, oh, owo, rc, ry, rx, owi], vec, None,
                          [n, c, oh], owo, rc, target=target)
    elif layout == "NHWC":
        n, oh, ow, c = (spatial[k] for k in "NHWC")
        budget = accumulator_budget(target)  # 4 columns x (budget / 4) channel vectors
        c_bn = largest_divisor(loop_extent(sch, c), max(1, budget // 4) * lanes, lanes)
        co, ci = sch.split(c, [None, c_bn])
        ow_bn = largest_divisor(loop_extent(sch, ow), max(1, min(4, budget // -(-c_bn // lanes))))
        owo, owi = sch.split(ow, [None, ow_bn])
        tile_accumulators(sch, block, out_block, [n, oh, co, owo, rc, ry, rx, owi, ci], ci, owi,
                          [n, oh, co], owo, rc, target=target)
    else:
        raise ScheduleError(f"depthwise layout {layout}")


@guard_schedule
def schedule_conv2d_other(attrs, sch, outs, conv, target):
    """Grouped convolutions and other layouts: parallel outer loop only."""
    raise ScheduleError("fallback")


@guard_schedule
def schedule_conv2d_transpose(attrs, sch, outs, conv, target):
    """conv2d_transpose: the dilated+padded input at the root, then the NCHW direct tile when
    there is one group (the flipped kernel is read as a broadcast scalar)."""
    if attrs.groups != 1 or (attrs.out_layout or attrs.data_layout) != "NCHW":
        raise ScheduleError("fallback")
    schedule_pad(sch, outs, target)
    block = block_of(sch, conv)
    out_block = _epilogue(sch, outs, conv)
    n, oc, oh, ow, rc, ry, rx = sch.get_loops(block)
    oc_bn, ow_bn = nchw_tile(loop_extent(sch, oc), loop_extent(sch, ow), target, conv.dtype)
    oco, oci = sch.split(oc, [None, oc_bn])
    owo, owi = sch.split(ow, [None, ow_bn])
    tile_accumulators(sch, block, out_block, [n, oco, oh, owo, rc, ry, rx, oci, owi], owi, oci,
                      [n, oco, oh], owo, rc, target=target)


__all__ = ["schedule_conv2d_nchw", "schedule_conv2d_nchw_im2col", "schedule_conv2d_nchw_packed",
           "schedule_conv2d_nchw_prepacked", "schedule_conv2d_nchw_direct", "nchw_packed_tile",
           "schedule_conv2d_NCHWc", "nchwc_tile", "finish_block_tile", "tile_accumulators",
           "loops_under", "block_work", "guard_schedule",
           "nchw_tile", "nhwc_tile", "im2col_panel",
           "schedule_conv2d_nhwc", "schedule_conv2d_depthwise",
           "schedule_conv2d_other", "schedule_conv2d_transpose", "find_stage", "schedule_pad"]
