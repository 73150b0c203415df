"""DefaultCPUSchedule: a generic CPU schedule for the unscheduled PrimFuncs of a Relax module.

LegalizeOps makes plain TE -> TIR kernels (one loop nest per TOPI stage, nothing parallel or
vectorized). TVM schedules them with MetaSchedule (``MetaScheduleApplyDatabase``, from a
tuning database) or with DLight's rule-based schedules; irlab's pass is the rule-based kind,
made for symbolic shapes too (one schedule for every batch)::

    for i, j, k in T.grid(n, 256, 784): C[i, j] += A[i, k] * B[k, j]
 => for f in T.parallel(n * 16):                     # (i, j // 16) fused; AVX2: 8 lanes
        C[i, j16 : j16 + 16] = 0                       # init, vectorized
        for k in range(784):
            for jc in T.unroll(2): for ji in T.vectorized(8):
                C[i, j16 + 8 * jc + ji] += A[i, k] * B[k, j16 + 8 * jc + ji]

Rules, per block of a function (a block the rules cannot handle stays as it was):
- an injective intermediate stage is inlined into its consumers;
- a stage read by a reduction (a convolution's padding) stays a stage of its own;
- a reduction whose innermost loop reduces and whose output's last axis is spatial with a
  static extent (a matmul, a convolution) is register-tiled: the last spatial loop is split
  into 2 vectors of the target's width (or of the largest divisor of the extent below it)
  and moved below the reduction loops (vectorized), a static second-to-last spatial loop by
  4 (unrolled), the init decomposed and vectorized too; a strided read of the vector loop
  (a strided convolution) keeps that loop scalar (a gather is slower);
- a reduction whose rows are too short for vectors (under 4) moves its short static
  spatial loops (up to 16 iterations) below the reduction loops, unrolled;
- an injective stage vectorizes its innermost loop by the same vector length;
- the outer spatial loops are fused and run in parallel.

A PrimFunc with the ``tir.is_scheduled`` attribute (as set by TVM's schedulers and by this
pass) is left alone, so kernels scheduled elsewhere (relay_translator's TOPI schedules)
keep their schedule.
"""

from __future__ import annotations

from irlab.ir.module import IRModule
from irlab.target import Target, as_target
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.analysis.vars_used import vars_used
from irlab.tir.function import PrimFunc
from irlab.tir.functor import post_order_visit
from irlab.tir.schedule import Schedule
from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.primitives_getters import child_realizes, find_block
from irlab.transform import module_pass

__all__ = ["DefaultCPUSchedule", "schedule_cpu_func"]

SCHEDULED = "tir.is_scheduled"
_SPATIAL, _REDUCE, _OTHER = "S", "R", "O"
_ROWS = 4  # rows of a register tile (static row counts only)
_COLS = 2  # vectors per row of a register tile: 4 x 2 vector accumulators


def _stage_names(func) -> list:
    """The names of the blocks directly under the root block, in program order."""
    return [r.block.name_hint for r in child_realizes(func.body)]


def _var_ids(expr) -> set:
    """The ids of the variables in ``expr``."""
    return {id(v) for v in vars_used(expr)}


def _loop_kind(loop, realize) -> str:
    """S when ``loop`` feeds only data-parallel iterators of ``realize``, R when only
    reduction ones, O otherwise."""
    kinds = {iv.iter_type for iv, value in zip(realize.block.iter_vars, realize.iter_values)
             if id(loop.loop_var) in _var_ids(value)}
    if kinds == {S.IterVar.DataPar}:
        return _SPATIAL
    if kinds == {S.IterVar.CommReduce}:
        return _REDUCE
    return _OTHER


def _vector_factor(extent, lanes):
    """The vector length for a loop of ``extent``: the target's width, or the largest
    divisor of ``extent`` below it (a 56-wide row in vectors of 8, a 28-wide one of 14);
    None when that is under 4 or the extent is symbolic."""
    if extent is None:
        return None
    factor = next(d for d in range(min(lanes, extent), 0, -1) if extent % d == 0)
    return factor if factor >= 4 else None


def _static(loop):
    return loop.extent.value if isinstance(loop.extent, E.IntImm) else None


class _FuncScheduler:
    """Applies the rules to one PrimFunc through a ``tir.Schedule``."""

    def __init__(self, func: PrimFunc, target: Target):
        self.sch = Schedule(func)
        self.target = target
        self.outputs = {id(func.buffer_map[p]) for p in func.params if p in func.buffer_map}

    def run(self) -> PrimFunc:
        for name in _stage_names(self.sch.mod["main"]):
            self._try(self._inline, name)
        for name in _stage_names(self.sch.mod["main"]):
            self._try(self._schedule_stage, name)
        return self.sch.mod["main"]

    def _try(self, rule, name):
        try:
            with self.sch.transaction():
                rule(name)
        except ScheduleError:
            pass  # the rule does not apply: the stage stays as it was

    def _inline(self, name):
        block = self.sch.get_block(name)
        node = self.sch.get(block)
        if any(iv.iter_type != S.IterVar.DataPar for iv in node.iter_vars):
            return
        if any(id(w.buffer) in self.outputs for w in node.writes):
            return
        if any(self._reduces(c) for c in self.sch.get_consumers(block)):
            return  # (a padded input stays a stage: the reduction reads it without branches)
        self.sch.compute_inline(block)

    def _reduces(self, block) -> bool:
        return any(iv.iter_type != S.IterVar.DataPar for iv in self.sch.get(block).iter_vars)

    def _schedule_stage(self, name):
        block = self.sch.get_block(name)
        realize = find_block(self.sch.mod["main"], name)
        loops = self.sch.get_loops(block)
        kinds = [_loop_kind(self.sch.get(lp), realize) for lp in loops]
        n_spatial = next((i for i, k in enumerate(kinds) if k != _SPATIAL), len(kinds))
        if _OTHER in kinds or any(k != _REDUCE for k in kinds[n_spatial:]) or not n_spatial:
            return
        lanes = self.target.vector_width(realize.block.writes[0].buffer.dtype
                                         if realize.block.writes else "float32")
        if n_spatial < len(loops):
            self._reduction(block, loops, n_spatial, lanes)
        else:
            self._injective(loops, lanes)

    def _injective(self, loops, lanes):
        inner = loops[-1]
        factor = _vector_factor(_static(self.sch.get(inner)), lanes)
        if factor is not None:
            outer, vec = self.sch.split(inner, [None, factor])
            self.sch.vectorize(vec)
            loops = loops[:-1] + [outer]
        self._parallel(loops)

    def _reduction(self, block, loops, n_spatial, lanes):
        spatial, reduce = loops[:n_spatial], loops[n_spatial:]
        last = _static(self.sch.get(spatial[-1]))
        lanes = _vector_factor(last, lanes)
        if lanes is None and last is not None and last < 4:
            self._scalar_tile(block, spatial, reduce)
            return
        if lanes is None or not self._last_axis_spatial(block, spatial[-1]):
            self._parallel(spatial)
            return
        vectorize = not self._strided_read(block, spatial[-1])
        cols = _COLS if last % (_COLS * lanes) == 0 else 1
        j_outer, j_cols, j_inner = self.sch.split(spatial[-1], [None, cols, lanes])
        outer, inner = spatial[:-1] + [j_outer], [j_cols, j_inner]
        rows = _static(self.sch.get(spatial[-2])) if len(spatial) >= 2 else None
        if rows and rows % _ROWS == 0:  # rows of the register tile (static shapes only)
            i_outer, i_inner = self.sch.split(spatial[-2], [None, _ROWS])
            outer = spatial[:-2] + [i_outer, j_outer]
            inner = [i_inner, j_cols, j_inner]
        self.sch.reorder(*outer, *reduce, *inner)
        init = self.sch.decompose_reduction(block, reduce[0])
        if vectorize:
            self.sch.vectorize(inner[-1])
        for loop in inner[:-1]:
            self.sch.unroll(loop)
        init_loops = self.sch.get_loops(init)
        if _static(self.sch.get(init_loops[-1])) == lanes:
            self.sch.vectorize(init_loops[-1])
        self._parallel(outer)

    def _scalar_tile(self, block, spatial, reduce):
        """Rows too short for vectors (a 2x2 feature map): the short static inner spatial
        loops go below the reduction loops, unrolled, so their sums stay in registers."""
        inner, size = [], 1
        for loop in reversed(spatial[1:]):
            extent = _static(self.sch.get(loop))
            if extent is None or size * extent > _ROWS * _ROWS:
                break
            inner.insert(0, loop)
            size *= extent
        outer = spatial[:len(spatial) - len(inner)]
        self.sch.reorder(*outer, *reduce, *inner)
        self.sch.decompose_reduction(block, reduce[0])
        for loop in inner:
            self.sch.unroll(loop)
        self._parallel(outer)

    def _bound_to(self, block, loop) -> set:
        """The ids of the block's iterators that ``loop`` feeds."""
        node = self.sch.get(block)
        realize = find_block(self.sch.mod["main"], node.name_hint)
        var = id(self.sch.get(loop).loop_var)
        return {id(iv.var) for iv, v in zip(node.iter_vars, realize.iter_values)
                if var in _var_ids(v)}

    def _last_axis_spatial(self, block, loop) -> bool:
        """The output's last index is (an offset of) ``loop``: vectorizing it writes a
        contiguous vector."""
        node, bound = self.sch.get(block), self._bound_to(block, loop)
        region = node.writes[0].region if node.writes else []
        return bool(region) and bool(_var_ids(region[-1].min) & bound)

    def _strided_read(self, block, loop) -> bool:
        """A load steps over ``loop`` with a stride (``x[2 * i]``, a strided convolution):
        a vector of it is a gather, slower than the scalar loop."""
        bound, found = self._bound_to(block, loop), []

        def visit(node):
            if isinstance(node, E.Mul) and any(
                    isinstance(a, E.Var) and id(a) in bound and isinstance(b, E.IntImm)
                    and b.value != 1 for a, b in ((node.a, node.b), (node.b, node.a))):
                found.append(node)

        post_order_visit(self.sch.get(block).body, visit)
        return bool(found)

    def _parallel(self, loops):
        if not loops:
            return
        fused = self.sch.fuse(*loops) if len(loops) > 1 else loops[0]
        self.sch.parallel(fused)


def _hand_scheduled(func: PrimFunc) -> bool:
    """A loop of ``func`` is already parallel, vectorized, unrolled or bound: someone
    scheduled it (a TVMScript kernel written scheduled, a TOPI schedule)."""
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, S.For)
                     and (n.kind != S.ForKind.SERIAL or n.annotations) else None)
    return bool(found)


def schedule_cpu_func(func: PrimFunc, target=None) -> PrimFunc:
    """``func`` with the generic CPU schedule for ``target`` (the current or host target)."""
    if (func.attrs and func.attrs.get(SCHEDULED)) or _hand_scheduled(func):
        return func
    target = as_target(target or Target.current() or "llvm")
    if target.kind != "llvm":
        return func  # (the rules are for CPUs compiled through LLVM)
    scheduled = _FuncScheduler(func, target).run()
    return scheduled.with_attr(SCHEDULED, True)


def DefaultCPUSchedule(target=None):  # noqa: N802 (TVM's naming of passes)
    """The pass giving every unscheduled PrimFunc of the module the generic CPU schedule
    (parallel outer loops, vectorized inner loops sized from the target's vector width,
    register-tiled reductions). TVM does this with ``MetaScheduleApplyDatabase`` or DLight;
    this is the fallback that needs no tuning."""

    def transform(mod: IRModule, ctx):
        new = mod.copy()
        for gv, func in mod.functions.items():
            if isinstance(func, PrimFunc):
                new.update_func(gv, schedule_cpu_func(func, target))
        return new

    return module_pass(transform, opt_level=0, name="DefaultCPUSchedule")
