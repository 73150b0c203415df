"""``RewriteParallelVectorizeUnroll``: turn ParallelizeVectorizeUnroll's marks into loop
kinds: fuse and parallelize the outer data-parallel loops (up to the parallel extent), fuse
and vectorize the inner ones (up to the vector extent), unroll the innermost serial loops
(up to the sampled unroll depth), for every block under the marked (root) block.

The unroll bound: an unrolled loop's body -- its statements times the extents of the loops
under it -- never exceeds the sampled depth (at most 512 in the default space). A vector loop
counts its vectors of the target (its extent over the lanes) when every access walks it
contiguously, and its whole extent otherwise: a strided access is a scalar load or store per
lane. (Counting a vector loop as one statement let a ReLU epilogue strided over 56 columns
unroll 256 times, about 50,000 lines of LLVM IR and a 2-minute build.)"""

from __future__ import annotations

from irlab.meta_schedule import block_analysis as BA
from irlab.meta_schedule.feature_extractor.index_eval import evaluate
from irlab.meta_schedule.postproc.postproc import Postproc
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.function import PrimFunc
from irlab.tir.functor import substitute
from irlab.tir.schedule import primitives_getters as G

_MARKS = (BA.PARALLEL, BA.VECTORIZE, BA.UNROLL_EXPLICIT, BA.UNROLL_IMPLICIT)


def _is_plain(loop) -> bool:
    return loop.kind == S.ForKind.SERIAL and not loop.annotations \
        and loop.thread_binding is None


def _parallel_count(loops, kinds, max_extent) -> int:
    """How many outer loops to fuse into the parallel loop (TVM: take data-parallel loops
    until their extent product passes ``max_extent`` or a loop has several statements)."""
    count, product = 0, 1
    for loop, kind in zip(loops, kinds):
        extent = BA.const_extent(loop)
        if kind != BA.DATA_PAR or extent is None or not _is_plain(loop):
            break
        count += 1
        product *= extent
        if product > max_extent or not isinstance(loop.body, S.For):
            break
    return count


NOT_AFFINE = -1  # the stride of a loop whose access index is not affine in it


def _flat_stride(indices, shape, var, extent) -> int:
    """How far the flattened access ``indices`` move per step of ``var`` (0: not used),
    ``NOT_AFFINE`` when the step is not constant over ``extent`` iterations."""
    dim_stride = 1
    for index, size in zip(reversed(indices), reversed(shape)):
        step = evaluate(index, {var: 1}) - evaluate(index, {})
        if step:
            last = evaluate(index, {var: extent - 1}) - evaluate(index, {})
            return step * dim_stride if last == step * (extent - 1) else NOT_AFFINE
        if not isinstance(size, E.IntImm):
            return NOT_AFFINE
        dim_stride *= size.value
    return 0


def _contiguous_count(realize, loops) -> int:
    """How many innermost loops may fuse into one vector loop without a gather or scatter
    (TVM's ``max_fusible``): every access of the block stays contiguous over them."""
    bindings = {iv.var: value for iv, value in zip(realize.block.iter_vars,
                                                    realize.iter_values)}
    fusible = len(loops)
    for access in (*realize.block.reads, *realize.block.writes):
        indices = [substitute(r.min, bindings) for r in access.region]
        fusible = min(fusible, _access_contiguous_count(indices, access.buffer.shape, loops))
    return fusible


def _access_contiguous_count(indices, shape, loops) -> int:
    """From the innermost loop out: a loop the access does not use is free; the first used
    one may have any stride (one strided loop is still a plain vector load) unless free
    loops lie inside it; each further one must continue the run of the loops inside."""
    count, run_end = 0, None  # run_end: stride x extent of the last used loop
    for loop in reversed(loops):
        extent = BA.const_extent(loop)
        stride = NOT_AFFINE if extent is None else \
            _flat_stride(indices, shape, loop.loop_var, extent)
        if stride == 0:
            count += 1
            continue
        if stride == NOT_AFFINE or (run_end is None and stride != 1 and count) or \
                (run_end is not None and stride != run_end):
            break
        count += 1
        run_end = stride * extent
    return count


def _vector_count(realize, loops, kinds, max_extent) -> int:
    """How many innermost loops (a chain directly around the block) fuse into the vector
    loop, their extent product within ``max_extent`` and every access contiguous over
    them."""
    count, product, inner = 0, 1, realize
    limit = _contiguous_count(realize, loops)
    for loop, kind in zip(reversed(loops), reversed(kinds)):
        if count >= limit:
            break
        extent = BA.const_extent(loop)
        if loop.body is not inner or kind != BA.DATA_PAR or extent is None \
                or not _is_plain(loop) or product * extent > max_extent:
            break
        count += 1
        product *= extent
        inner = loop
    return count if product > 1 else 0


class RewriteParallelVectorizeUnroll(Postproc):
    """The blocks under a block carrying ``meta_schedule.parallel`` / ``vectorize`` /
    ``unroll_explicit`` marks are rewritten one by one (the marks are removed). ``lanes``:
    float32 lanes of the target's vectors (the task's target when in a TuneContext)."""

    def __init__(self, lanes=4):
        self.lanes = int(lanes)

    def _initialize_with_tune_context(self, context) -> None:
        target = getattr(context, "target", None)
        if target is not None:
            self.lanes = max(1, int(target.vector_width("float32")))

    def __repr__(self):
        return f"RewriteParallelVectorizeUnroll(lanes={self.lanes})"

    def apply(self, sch) -> bool:
        for func_name, block_name, marks in self._take_marks(sch):
            for name in self._blocks_under(sch, func_name, block_name):
                self._rewrite_block(sch, sch.get_block(name, func_name), marks)
        return True

    @staticmethod
    def _take_marks(sch) -> list:
        """(function, marked block, {mark: value}) for each marked block; the marks are
        removed from the IR."""
        found = []
        for gv, func in list(sch.mod.functions.items()):
            if not isinstance(func, PrimFunc):
                continue
            for node, _ in G.walk(func.body):
                if isinstance(node, S.BlockRealize):
                    anns = BA.annotations(node)
                    marks = {k: anns[k] for k in _MARKS if k in anns}
                    if marks:
                        found.append((gv.name_hint, node.block.name_hint, marks))
        for func_name, name, marks in found:
            block = sch.get_block(name, func_name)
            for key in marks:
                sch.unannotate(block, key)
        return found

    @staticmethod
    def _blocks_under(sch, func_name, block_name) -> list:
        """The names of the blocks under the block ``block_name``, in program order."""
        realize = G.find_block(sch.mod[func_name], block_name)
        return [n.block.name_hint for n, _ in G.walk(realize.block.body)
                if isinstance(n, S.BlockRealize)]

    def _rewrite_block(self, sch, block, marks) -> None:
        func = sch.mod[block.func_name]
        realize = G.find_block(func, block.name)
        loops = G.loops_of(func, realize)
        if not loops:
            return
        kinds = [BA.loop_iter_type(lp) for lp in loops]
        n_par = _parallel_count(loops, kinds, int(marks.get(BA.PARALLEL, 0))) \
            if BA.PARALLEL in marks else 0
        n_vec = _vector_count(realize, loops, kinds, int(marks.get(BA.VECTORIZE, 0))) \
            if BA.VECTORIZE in marks else 0
        n_vec = min(n_vec, len(loops) - n_par)
        rvs = sch.get_loops(block)
        if n_par:
            sch.parallel(sch.fuse(*rvs[:n_par]) if n_par > 1 else rvs[0])
        if n_vec:
            inner = rvs[len(rvs) - n_vec:]
            sch.vectorize(sch.fuse(*inner) if n_vec > 1 else inner[0])
        step = marks.get(BA.UNROLL_EXPLICIT, marks.get(BA.UNROLL_IMPLICIT))
        if step:
            self._unroll(sch, block, int(step), self.lanes)

    @staticmethod
    def _unroll(sch, block, max_step, lanes) -> None:
        """Unroll the innermost serial loops while the statements their copies make stay
        within ``max_step`` (TVM's ``pragma_auto_unroll_max_step``, which counts a loop's
        whole body: a loop shared with another block's nest counts that nest too, so that a
        cheap copy block never unrolls the loops around the main computation)."""
        func = sch.mod[block.func_name]
        loops = G.loops_of(func, G.find_block(func, block.name))
        chosen = []
        for loop in reversed(loops):
            if loop.kind == S.ForKind.VECTORIZED:
                continue
            if not _is_plain(loop) or BA.const_extent(loop) is None or \
                    unrolled_steps(loop, lanes) > max_step:
                break
            chosen.append(loop.loop_var)
        for rv in sch.get_loops(block):
            if any(rv.var is v for v in chosen):
                sch.unroll(rv)


def unrolled_steps(stmt, lanes=1) -> int:
    """How many statements unrolling ``stmt``'s loops would make: a loop multiplies its
    body's count by its extent, a vector loop by its vectors of ``lanes`` when it walks
    every access contiguously and by its extent otherwise (see the module docstring), a
    block counts its body (a reduction's init is split off later), any other leaf 1."""
    if isinstance(stmt, S.For):
        extent = BA.const_extent(stmt) or 1
        if stmt.kind == S.ForKind.VECTORIZED and _walks_contiguously(stmt):
            extent = -(-extent // max(1, lanes))
        return extent * unrolled_steps(stmt.body, lanes)
    if isinstance(stmt, S.BlockRealize):
        return unrolled_steps(stmt.block.body, lanes)
    children = G.stmt_children(stmt)
    counts = [unrolled_steps(child, lanes) for _, _, child in children]
    return sum(counts) if counts else 1


def _walks_contiguously(loop) -> bool:
    """Whether every access of the blocks under ``loop`` moves by 0 or 1 element per step
    of it (its vector statements are plain vector loads and stores)."""
    extent = BA.const_extent(loop)
    if extent is None:
        return False
    for node, _ in G.walk(loop.body):
        if not isinstance(node, S.BlockRealize):
            continue
        bindings = {iv.var: value for iv, value in zip(node.block.iter_vars,
                                                        node.iter_values)}
        for access in (*node.block.reads, *node.block.writes):
            indices = [substitute(r.min, bindings) for r in access.region]
            if _flat_stride(indices, access.buffer.shape, loop.loop_var, extent) not in (0, 1):
                return False
    return True
