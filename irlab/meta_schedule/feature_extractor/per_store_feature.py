"""``PerStoreFeature``: a fixed-length float vector for each buffer store of a scheduled program.

The scheduled PrimFunc is lowered to flat loops (phase 1 of the lowering pipeline: blocks
gone, indices substituted, buffers flattened; loop kinds and annotations kept). Each
``BufferStore`` then gets, from the loops around it and the accesses in it (log2(1 + x) scale
for counts and sizes):

* compute: float add/sub, mul, div/mod, math calls, integer ops, compare/select, each times
  the number of executions of the store;
* loops: nesting depth, executions, innermost extent; vectorize (lanes, is it innermost),
  unroll (extent product, count, auto-unroll max step), parallel (extent product, count, is
  it outermost);
* buffer accesses (the ``buf_extract`` largest by bytes, zeros when fewer): read / write /
  read-write, bytes moved, unique bytes (footprint), cache lines touched, innermost stride
  (and whether it is 0 or 1), reuse (bytes / unique bytes) and the extent of the innermost
  loops the access does not move in (temporal reuse);
* arithmetic intensity (flops / unique bytes) over the innermost 1, 2, 3, ... loops, sampled
  at ``arith_intensity_curve_num_samples`` points;
* allocations in scope: their count and bytes.
"""

from __future__ import annotations

import math

import numpy as np

from irlab.ir import IRModule
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.stmt import ForKind

_COMPUTE = ("float_add_sub", "float_mul", "float_div_mod", "float_math", "int_ops",
            "compare_select")
_LOOPS = ("num_loops", "executions", "innermost_extent", "vector_lanes", "vector_innermost",
          "unroll_product", "unroll_count", "auto_unroll_max_step", "parallel_product",
          "parallel_count", "parallel_outermost")
_ACCESS = ("is_read", "is_write", "is_read_write", "bytes", "unique_bytes", "lines",
           "stride", "stride_is_0", "stride_is_1", "reuse_ratio", "reuse_loop_extent")
_ALLOC = ("alloc_count", "alloc_bytes")
CACHE_LINE_BYTES = 64


def _log(x):
    return math.log2(1.0 + max(float(x), 0.0))


def _int(e, default=1):
    return e.value if isinstance(e, E.IntImm) else default


class _Loop:
    __slots__ = ("var", "extent", "kind", "annotations")

    def __init__(self, stmt):
        self.var = stmt.loop_var
        self.extent = max(_int(stmt.extent), 1)
        self.kind = stmt.kind
        self.annotations = dict(stmt.annotations or ())


class PerStoreFeature:
    """TVM's ``ms.feature_extractor.PerStoreFeature``: ``extract_from(context, candidates)``
    gives one ``(n_stores, n_features)`` array per candidate."""

    def __init__(self, buf_extract=5, arith_intensity_curve_num_samples=10,
                 cache_line_bytes=CACHE_LINE_BYTES, extract_workload=False):
        self.buf_extract = int(buf_extract)
        self.curve_samples = int(arith_intensity_curve_num_samples)
        self.cache_line_bytes = int(cache_line_bytes)
        self.extract_workload = extract_workload

    @property
    def feature_names(self) -> list:
        access = [f"B{i}.{name}" for i in range(self.buf_extract) for name in _ACCESS]
        curve = [f"arith_intensity_{i}" for i in range(self.curve_samples)]
        return list(_COMPUTE) + list(_LOOPS) + access + curve + list(_ALLOC)

    @property
    def num_features(self) -> int:
        return len(self.feature_names)

    def extract_from(self, context, candidates) -> list:
        return [self.features_of(c.sch.mod) for c in candidates]

    def features_of(self, mod) -> np.ndarray:
        """Features of every store of ``mod`` (a scheduled IRModule or PrimFunc)."""
        rows = []
        for func in _lowered_funcs(mod):
            _StoreWalker(self, rows).walk(func.body, [], [])
        if not rows:
            return np.zeros((0, self.num_features), dtype="float32")
        return np.asarray(rows, dtype="float32")

    def __repr__(self):
        return (f"PerStoreFeature(buf_extract={self.buf_extract}, "
                f"{self.num_features} features)")


def _lowered_funcs(mod):
    from irlab.tir import transform as T
    from irlab.transform import Sequential

    if not isinstance(mod, IRModule):
        mod = IRModule({"main": mod})
    passes = [T.LowerInitBlock(), T.PlanAndUpdateBufferAllocationLocation(),
              T.ConvertBlocksToOpaque(), T.CompactBufferAllocation(), T.LowerOpaqueBlock(),
              T.FlattenBuffer(), T.Simplify()]
    return list(Sequential(passes, name="ms.features.lower")(mod).functions.values())


class _StoreWalker:
    """Walks the loop nest; ``rows`` receives one feature list per BufferStore."""

    def __init__(self, extractor, rows):
        self.x = extractor
        self.rows = rows

    def walk(self, s, loops, allocs):
        if isinstance(s, S.For):
            self.walk(s.body, loops + [_Loop(s)], allocs)
        elif isinstance(s, S.BufferStore):
            self.rows.append(self.store_features(s, loops, allocs))
        elif isinstance(s, S.SeqStmt):
            for child in s.seq:
                self.walk(child, loops, allocs)
        elif isinstance(s, S.IfThenElse):
            self.walk(s.then_case, loops, allocs)
            if s.else_case is not None:
                self.walk(s.else_case, loops, allocs)
        elif isinstance(s, S.Allocate):
            size = math.prod(_int(e) for e in s.extents) * _dtype_bytes(s.dtype)
            self.walk(s.body, loops, allocs + [size])
        elif isinstance(s, (S.LetStmt, S.AttrStmt, S.DeclBuffer, S.While, S.AssertStmt)):
            self.walk(s.body, loops, allocs)

    # -- one store ---------------------------------------------------------------------
    def store_features(self, store, loops, allocs):
        executions = math.prod(loop.extent for loop in loops)
        counts = _count_ops(store.value)
        compute = [_log(counts[name] * executions) for name in _COMPUTE]
        accesses = _accesses(store)
        access_rows = sorted((self.access_features(acc, loops) for acc in accesses),
                             key=lambda row: -row[3])[: self.x.buf_extract]
        access_flat = [v for row in access_rows for v in row]
        access_flat += [0.0] * (self.x.buf_extract * len(_ACCESS) - len(access_flat))
        flops = sum(counts[name] for name in _COMPUTE[:4]) or 1
        curve = self.intensity_curve(flops, accesses, loops)
        return (compute + _loop_features(loops, executions) + access_flat + curve
                + [_log(len(allocs)), _log(sum(allocs))])

    def access_features(self, access, loops):
        buffer, index, mode = access
        elem = _dtype_bytes(buffer.dtype)
        executions = math.prod(loop.extent for loop in loops)
        strides = [stride_of(index, loop) for loop in loops]
        unique = _footprint(loops, strides, len(loops))
        inner = next((abs(s) for s in reversed(strides) if s != 0), 0.0)
        line_elems = max(self.x.cache_line_bytes // elem, 1)
        lines = unique / line_elems if 0 < inner < line_elems else unique
        reuse_extent = 1
        for loop, s in zip(reversed(loops), reversed(strides)):
            if s != 0:
                break
            reuse_extent *= loop.extent
        innermost = strides[-1] if strides else 0.0
        return [float(mode == "r"), float(mode == "w"), float(mode == "rw"),
                _log(executions * elem), _log(unique * elem), _log(lines),
                _log(abs(innermost)), float(innermost == 0), float(abs(innermost) == 1),
                _log(executions / max(unique, 1)), _log(reuse_extent)]

    def intensity_curve(self, flops, accesses, loops):
        """log(flops / unique bytes) over the innermost k loops, k sampled evenly."""
        depth = len(loops)
        points = []
        for i in range(self.x.curve_samples):
            k = round(depth * (i + 1) / self.x.curve_samples)
            inner = loops[depth - k:] if k else []
            work = flops * math.prod(loop.extent for loop in inner)
            traffic = 0.0
            for buffer, index, _ in accesses:
                strides = [stride_of(index, loop) for loop in inner]
                traffic += _footprint(inner, strides, k) * _dtype_bytes(buffer.dtype)
            points.append(_log(work / max(traffic, 1.0)))
        return points


def stride_of(index, loop):
    from irlab.meta_schedule.feature_extractor.index_eval import stride

    return stride(index, loop.var, loop.extent)


def _footprint(loops, strides, k):
    """Distinct elements touched by the innermost ``k`` loops (product of the extents of the
    loops the index moves with)."""
    count = 1
    for loop, s in zip(loops[len(loops) - k:], strides[len(strides) - k:]):
        if s != 0:
            count *= loop.extent
    return count


def _loop_features(loops, executions):
    vec = [loop for loop in loops if loop.kind == ForKind.VECTORIZED]
    unroll = [loop for loop in loops if loop.kind == ForKind.UNROLLED]
    par = [loop for loop in loops if loop.kind == ForKind.PARALLEL]
    auto = max([int(loop.annotations.get("pragma_auto_unroll_max_step", 0) or 0)
                for loop in loops] or [0])
    return [len(loops), _log(executions), _log(loops[-1].extent if loops else 1),
            _log(math.prod(loop.extent for loop in vec)) if vec else 0.0,
            float(bool(vec) and loops[-1] is vec[-1]),
            _log(math.prod(loop.extent for loop in unroll)) if unroll else 0.0,
            float(len(unroll)), _log(auto),
            _log(math.prod(loop.extent for loop in par)) if par else 0.0,
            float(len(par)), float(bool(par) and loops[0] is par[0])]


def _accesses(store):
    """``(buffer, flat index, "r" | "w" | "rw")`` for the store and the loads of its value."""
    loads = []

    def collect(e):
        if isinstance(e, E.BufferLoad):
            loads.append(e)
        for child in _expr_children(e):
            collect(child)

    collect(store.value)
    index = store.indices[0] if store.indices else E.IntImm("int32", 0)
    out, read_write = [], False
    for load in loads:
        load_index = load.indices[0] if load.indices else E.IntImm("int32", 0)
        if load.buffer is store.buffer or load.buffer.data is store.buffer.data:
            read_write = True
            continue
        out.append((load.buffer, load_index, "r"))
    out.append((store.buffer, index, "rw" if read_write else "w"))
    return out


def _expr_children(e):
    from irlab.tir.functor import expr_children

    return expr_children(e)


def _count_ops(value):
    counts = dict.fromkeys(_COMPUTE, 0)

    def visit(e):
        kind = type(e)
        is_float = str(getattr(e, "dtype", "")).startswith(("float", "bfloat"))
        if kind in (E.Add, E.Sub):
            counts["float_add_sub" if is_float else "int_ops"] += 1
        elif kind is E.Mul:
            counts["float_mul" if is_float else "int_ops"] += 1
        elif kind in (E.Div, E.Mod, E.FloorDiv, E.FloorMod):
            counts["float_div_mod" if is_float else "int_ops"] += 1
        elif kind is E.Call:
            counts["float_math" if is_float else "int_ops"] += 1
        elif isinstance(e, (E.CmpExpr, E.Select, E.And, E.Not, E.Min, E.Max)):
            counts["compare_select"] += 1
        if kind is not E.BufferLoad:
            for child in _expr_children(e):
                visit(child)

    visit(value)
    return counts


def _dtype_bytes(dtype) -> int:
    text = str(dtype)
    digits = "".join(ch for ch in text.split("x")[0] if ch.isdigit())
    bits = int(digits) if digits else 32
    lanes = int(text.split("x")[1]) if "x" in text and text.split("x")[1].isdigit() else 1
    return max(bits // 8, 1) * lanes
