"""CPU schedules of pooling and LRN: memory-bound reductions, so the aim is
only parallel outer loops and vectorized elementwise stages.

Every reduction block (``pool_max``, ``pool_sum``, ``sqr_sum``...) runs its fused outer output
axes in parallel (when there is enough work); when the innermost output axis reads contiguous
inputs (or, with AVX-512, inputs 2-4 apart: ``_strided_piece``) its window loops move outside it
and it is vectorized. Padding is inlined into the window reads when the windows are scalar or
strided (``_pad_block``), else it stays a stage of scalar loops (see
``conv2d._schedule_pad_block``); elementwise stages (the average's division, the function's
epilogue) are scheduled as injective blocks.
"""

from __future__ import annotations

from irlab.tir.schedule import ScheduleError
from irlab.topi.utils import block_of, loop_extent
from irlab.target.llvm_contract import MAX_LOAD_STRIDE
from irlab.topi.x86.conv2d import largest_divisor, _schedule_pad_block, _stages
from irlab.topi.x86.register_tile import vector_lanes
from irlab.topi.x86.injective import schedule_injective_block

_REDUCE_TAGS = ("pool_max", "pool_sum", "global_pool_max", "global_pool_sum",
                "adaptive_pool_max", "adaptive_pool_sum", "lrn_sqr_sum")


PARALLEL_MIN_WORK = 1 << 20  # element reads below which a thread-pool fan-out does not pay


def _reduce_block(sch, block, tensor, target, vectorize=True, piece=None):
    """The window loops go outside the innermost output axis, which is vectorized (its
    accumulators are the output row, reduced tap by tap) when its reads are contiguous or
    strided (``piece``: vectorized in pieces of that many outputs, the pieces unrolled outside
    the window loops); the other output axes are fused and run in parallel when there is
    enough work."""
    spatial = len(tensor.shape)
    all_loops = sch.get_loops(block)
    loops, window = all_loops[:spatial], all_loops[spatial:]
    if not loops:
        return
    work = 1
    for loop in all_loops:
        work *= loop_extent(sch, loop)
    inner = loops[-1]
    rest = None
    if vectorize and window and piece and loop_extent(sch, inner) > piece:
        rest, inner = sch.split(inner, [None, piece])
    if vectorize and window and loop_extent(sch, inner) > 1:
        sch.reorder(*window, inner)
        init = sch.decompose_reduction(block, window[0])
        sch.vectorize(inner)
        sch.vectorize(sch.get_loops(init)[-1])
    if rest is not None:
        sch.unroll(rest)
    loops = loops[:-1]  # the innermost output axis stays a loop of its own (no div/mod)
    if not loops:
        return
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    if work >= PARALLEL_MIN_WORK:
        sch.parallel(fused)


def _inner_contiguous(attrs, tensor) -> bool:
    """Whether consecutive outputs along the innermost axis read consecutive inputs: the axis
    is not a window axis (NHWC's C, NCHW16c's c), or it is W with stride 1. Otherwise (stride
    2, adaptive windows) vectorizing makes gathers, slower than LLVM's scalar loops (64x56x56
    3x3/2 max pool: 0.8 ms vectorized vs 0.14 ms)."""
    layout = getattr(attrs, "layout", None)
    if not layout:
        return tensor.op.tag == "lrn_sqr_sum"
    dims = [c for c in layout if c.isalpha()]
    inner = dims[-1]
    if inner not in "HW":
        return True
    strides = getattr(attrs, "strides", None)
    if strides is None or tensor.op.tag not in ("pool_max", "pool_sum"):
        return False
    return int(strides[1 if inner == "W" else 0]) == 1


def _inner_not_window(attrs) -> bool:
    """Whether the innermost axis is not a window axis (NCHW16c's c, NHWC's C): the padding
    test of a vector of outputs is then one scalar test, the same for every lane."""
    layout = getattr(attrs, "layout", None)
    return bool(layout) and [c for c in layout if c.isalpha()][-1] not in "HW"


def _strided_piece(attrs, tensor, target):
    """Outputs per vector of a pool whose W windows step by 2 to MAX_LOAD_STRIDE columns
    (NCHW, ResNet's 3x3/2 max pool), or None (left to LLVM's scalar loops). Its vector loads
    are strided ramps (clamped at the left border, where the padding is inlined), which the
    LLVM codegen reads as one contiguous load and a shuffle: a divisor of W up to the vector
    lanes, unrolled over the row so that the taps of several vectors interleave (one vector's
    taps are a chain of dependent max operations): 64x112x112 -> 56x56, 0.29 vs 0.37 ms of
    CPU as LLVM's loops (which gather; Xeon Emerald Rapids). AVX-512 only: AVX2's masked
    loads (vmaskmovps) and 8-lane shuffles cost what the gathers did (0.61 vs 0.58 ms as
    znver3 code, 0.81 vs 0.82 as haswell code, on the same Xeon)."""
    if not target.has_feature("avx512f") or tensor.dtype not in ("float32", "float64", "int32"):
        return None  # (narrower elements: the codegen would read the strided lanes one by one)
    layout = getattr(attrs, "layout", None)
    strides = getattr(attrs, "strides", None)
    if not layout or strides is None or tensor.op.tag not in ("pool_max", "pool_sum"):
        return None
    if [c for c in layout if c.isalpha()][-1] != "W":
        return None
    if not 2 <= int(strides[1]) <= MAX_LOAD_STRIDE:
        return None
    width = int(tensor.shape[-1])
    piece = largest_divisor(width, vector_lanes(tensor.dtype, target))
    return piece if piece > 1 else None


def _schedule(sch, outs, target, attrs=None):
    scalar_windows = False  # a reduction whose innermost axis stays a scalar loop
    lane_invariant = False  # a reduction whose vector lanes are not a window axis
    for t in _stages(outs):  # consumers before their producers
        if not hasattr(t.op, "body"):
            continue
        try:
            block = block_of(sch, t)
        except Exception:  # inlined by LowerTE
            continue
        tags = (t.op.tag or "").split(",")
        try:
            if "pad" in tags:
                _pad_block(sch, block, target, inline=scalar_windows or lane_invariant)
            elif any(tag in _REDUCE_TAGS for tag in tags):
                contiguous = _inner_contiguous(attrs, t)
                scalar_windows = scalar_windows or not contiguous
                lane_invariant = lane_invariant or _inner_not_window(attrs)
                piece = None if contiguous else _strided_piece(attrs, t, target)
                _reduce_block(sch, block, t, target, contiguous or piece is not None, piece)
            else:
                schedule_injective_block(sch, block, target, t.dtype)
        except ScheduleError:
            pass


def _pad_block(sch, block, target, inline):
    """The padding of a pool whose windows are scalar or strided loops (NCHW stride 2: ResNet's
    3x3/2 max pool) is inlined into the window reads: a padded copy of the input is a pass over
    memory of its own, which cost as much as the pool (64x112x112 -> 56x56: 0.73 ms of CPU as
    two stages, 0.36 ms inlined, Xeon Emerald Rapids). So is the padding of a pool whose
    lanes are not a window axis (NCHW16c: one test per vector tap, the same for every lane;
    ResNet-18's 3x3/2 max pool, 1.1 vs 0.35 ms). Contiguous vectorized windows along W keep
    the copy (a select per lane of each vector tap)."""
    if inline:
        try:
            sch.compute_inline(block)
            return
        except ScheduleError:
            pass
    _schedule_pad_block(sch, block, target)


def schedule_pool(attrs, sch, outs, target):
    """Pooling (max, avg, global, adaptive) on a CPU."""
    _schedule(sch, outs, target, attrs)


def schedule_lrn(attrs, sch, outs, target):
    """LRN on a CPU."""
    _schedule(sch, outs, target, attrs)


__all__ = ["schedule_pool", "schedule_lrn"]
