"""``Schedule``: TVM's ``tir.Schedule`` over an immutable module.

Each primitive is a function PrimFunc -> PrimFunc (``primitives_*``); the Schedule holds the
current module and the trace. A primitive that fails raises ``ScheduleError`` before anything
is committed, so the schedule is left exactly as it was. Every result is verified
(``tir.analysis.verify_well_formed``: bindings inside their domains, accesses in bounds...)
before it is committed, in one place (``_commit``), unless the schedule was made with
``enable_check=False`` (MetaSchedule replaying thousands of sampled traces: ``tvm.build``
verifies the final module anyway). Block handles resolve by block name, loop handles by loop
variable, against the current IR.
"""

from __future__ import annotations

from contextlib import contextmanager

from irlab.ir.module import IRModule
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.analysis import WellFormedError, verify_well_formed
from irlab.tir.function import PrimFunc
from irlab.tir.schedule import primitives_annotations as PA
from irlab.tir.schedule import primitives_blockize as PB
from irlab.tir.schedule import primitives_cache as PCache
from irlab.tir.schedule import primitives_getters as G
from irlab.tir.schedule import primitives_inline as PI
from irlab.tir.schedule import primitives_layout as PLay
from irlab.tir.schedule import primitives_compute_at as PC
from irlab.tir.schedule import primitives_reduction as PR
from irlab.tir.schedule import primitives_loops as PL
from irlab.tir.schedule import sampling as SM
from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.handles import (INLINE_MARK, BlockRV, Decision, ExprRV, LoopRV,
                                       StmtSRef)
from irlab.tir.schedule.random_engine import RandomEngine
from irlab.tir.schedule.trace import Instruction, Trace


class Schedule:
    """A schedule of the PrimFuncs in ``mod_or_func`` (TVM's ``tir.Schedule``)."""

    def __init__(self, mod_or_func, *, seed=None, debug_mask="none",
                 error_render_level="detail", enable_check=True):
        if isinstance(mod_or_func, PrimFunc):
            mod = IRModule({"main": mod_or_func})
        elif isinstance(mod_or_func, IRModule):
            mod = mod_or_func.copy()
        else:
            raise ScheduleError(f"Schedule needs an IRModule or a PrimFunc, "
                                f"got {type(mod_or_func).__name__}")
        self._mod = mod
        self._trace = Trace()
        self._rand = RandomEngine(seed)
        self._values = {}  # ExprRV -> the int it was sampled as
        self.debug_mask = debug_mask
        self.error_render_level = error_render_level
        self.enable_check = enable_check
        prims = [gv.name_hint for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
        self._func_name = prims[0] if len(prims) == 1 else None

    # -- state ------------------------------------------------------------------------------
    @property
    def mod(self) -> IRModule:
        return self._mod

    @property
    def trace(self) -> Trace:
        return self._trace

    @property
    def func_working_on(self):
        return self._func_name

    def work_on(self, func_name: str) -> None:
        """Make ``func_name`` the default function of ``get_block``."""
        if func_name not in self._mod:
            raise ScheduleError(f"no function {func_name!r} in the module")
        self._func_name = func_name

    def copy(self) -> "Schedule":
        """An independent schedule with the same module and trace (handles stay valid)."""
        new = Schedule.__new__(Schedule)
        new.__dict__.update(self.__dict__)
        new._mod = self._mod.copy()
        new._trace = self._trace.copy()
        new._values = dict(self._values)
        new._rand = RandomEngine(self.fork_seed())
        return new

    # -- random state -----------------------------------------------------------------------
    def seed(self, seed: int) -> None:
        """Reset the random state (-1: from the operating system)."""
        try:
            self._rand = RandomEngine(seed)
        except ValueError as err:
            raise ScheduleError(str(err)) from None

    def fork_seed(self) -> int:
        """A seed for an independent random state (advances this schedule's state)."""
        return self._rand.fork_seed()

    @contextmanager
    def transaction(self):
        """Primitives run inside ``with sch.transaction():`` all apply or, when one raises,
        none does: the module, trace, sampled values and random state are restored."""
        saved = (self._mod, self._trace.copy(), dict(self._values), self._rand.state,
                 self._func_name)
        try:
            yield self
        except BaseException:
            self._mod, self._trace, self._values, self._rand.state, self._func_name = saved
            raise

    def show(self) -> None:
        print(self._mod.script())

    def _func(self, func_name) -> PrimFunc:
        return self._mod[func_name]

    def _commit(self, func_name, func, kind, inputs, attrs=(), outputs=()):
        try:
            if self.enable_check:
                verify_well_formed(IRModule({func_name: func}))
        except WellFormedError as err:
            before = IRModule({func_name: self._func(func_name)})
            cause = ("" if verify_well_formed(before, assert_mode=False) else
                     " (the function was not well formed before either)")
            raise ScheduleError(f"{kind}: the result would not be well formed{cause}, so the "
                                f"schedule is left unchanged: {err}") from err
        mod = self._mod.copy()
        mod[func_name] = func
        self._mod = mod
        self._trace.append(Instruction(kind, list(inputs), list(attrs), outputs))

    def _block_arg(self, block):
        """A block handle; TVM also takes a block's name (looked up with ``get_block``)."""
        return self.get_block(block) if isinstance(block, str) else block

    def _buffer_index(self, block, buffer, kind):
        """The position among ``block``'s ``kind`` ("read"/"write") regions of ``buffer``:
        an int already, or (as TVM takes it) a buffer name or a Buffer."""
        if isinstance(buffer, int) or hasattr(buffer, "__index__"):
            return int(buffer)
        node = self._realize(block).block
        regions = node.reads if kind == "read" else node.writes
        for i, region in enumerate(regions):
            if region.buffer is buffer or region.buffer.name == buffer:
                return i
        raise ScheduleError(f"block {node.name_hint!r} does not {kind} a buffer "
                            f"{getattr(buffer, 'name', buffer)!r}")

    def _realize(self, rv):
        if not isinstance(rv, BlockRV):
            raise ScheduleError(f"expected a block handle, got {rv!r}")
        return G.find_block(self._func(rv.func_name), rv.name)

    def _loop(self, rv):
        if not isinstance(rv, LoopRV):
            raise ScheduleError(f"expected a loop handle, got {rv!r}")
        if rv.mark is not None:
            raise ScheduleError(f"{rv!r} is the compute location mark {rv.mark!r}, not a loop "
                                "(only compute_at and reverse_compute_at take it)")
        return G.find_loop(self._func(rv.func_name), rv.var)

    def _int(self, value):
        """The int behind a factor or an annotation value: a sampled ExprRV's value."""
        if isinstance(value, ExprRV):
            if value not in self._values:
                raise ScheduleError(f"{value!r} was not sampled by this schedule")
            return self._values[value]
        return value

    def get(self, rv):
        """What a handle stands for: a Block, a For, a sampled ExprRV's int, or the mark
        ("root" / "inline") of a sampled compute location."""
        if isinstance(rv, ExprRV):
            return self._int(rv)
        if isinstance(rv, LoopRV) and rv.mark is not None:
            return rv.mark
        return self._realize(rv).block if isinstance(rv, BlockRV) else self._loop(rv)

    def get_sref(self, rv) -> StmtSRef:
        """A reference to the block or loop ``rv`` points at (its statement as ``.stmt``)."""
        return StmtSRef(self.get(rv))

    # -- getters ----------------------------------------------------------------------------
    def get_block(self, name, func_name=None) -> BlockRV:
        """The block called ``name``."""
        func_name = func_name or self._func_name
        if func_name is None:
            raise ScheduleError("several functions: give func_name or call work_on first")
        if func_name not in self._mod:
            raise ScheduleError(f"no function {func_name!r} in the module")
        G.find_block(self._func(func_name), name)
        rv = BlockRV(name, func_name)
        self._trace.append(Instruction("get_block", [],
                                       [("name", name), ("func_name", func_name)], [rv]))
        return rv

    def get_loops(self, block) -> list:
        """The loops above ``block`` in its scope, outermost first."""
        block = self._block_arg(block)
        func = self._func(block.func_name)
        rvs = [LoopRV(lp.loop_var, block.func_name)
               for lp in G.loops_of(func, self._realize(block))]
        self._trace.append(Instruction("get_loops", [("block", block)], [], rvs))
        return rvs

    def get_child_blocks(self, block_or_loop) -> list:
        """Blocks directly under a block or loop (no other block in between)."""
        node = (self._realize(block_or_loop) if isinstance(block_or_loop, BlockRV)
                else self._loop(block_or_loop))
        rvs = [BlockRV(r.block.name_hint, block_or_loop.func_name)
               for r in G.child_realizes(node)]
        self._trace.append(Instruction("get_child_blocks", [(None, block_or_loop)], [], rvs))
        return rvs

    def get_producers(self, block) -> list:
        """Blocks of the same scope writing what ``block`` reads."""
        block = self._block_arg(block)
        func = self._func(block.func_name)
        rvs = [BlockRV(r.block.name_hint, block.func_name)
               for r in G.producers(func, self._realize(block))]
        self._trace.append(Instruction("get_producers", [("block", block)], [], rvs))
        return rvs

    def get_consumers(self, block) -> list:
        """Blocks of the same scope reading what ``block`` writes."""
        block = self._block_arg(block)
        func = self._func(block.func_name)
        rvs = [BlockRV(r.block.name_hint, block.func_name)
               for r in G.consumers(func, self._realize(block))]
        self._trace.append(Instruction("get_consumers", [("block", block)], [], rvs))
        return rvs

    # -- loop transformations ---------------------------------------------------------------
    def split(self, loop, factors, preserve_unit_iters=True) -> list:
        """Split ``loop`` by ``factors`` (ints or sampled ExprRVs; one may be None:
        inferred)."""
        factors = [f if f is None or isinstance(f, ExprRV) else int(f) for f in factors]
        values = [self._int(f) for f in factors]
        func, new_vars = PL.split(self._func(loop.func_name), self._loop(loop), values,
                                  preserve_unit_iters)
        rvs = [LoopRV(v, loop.func_name) for v in new_vars]
        self._commit(loop.func_name, func, "split", [("loop", loop)],
                     [("factors", factors), ("preserve_unit_iters", bool(preserve_unit_iters))],
                     rvs)
        return rvs

    def fuse(self, *loops, preserve_unit_iters=True) -> LoopRV:
        """Fuse directly nested loops into one."""
        loops = _flatten(loops)
        if not loops:
            raise ScheduleError("fuse needs at least one loop")
        name = loops[0].func_name
        func, var = PL.fuse(self._func(name), [self._loop(lp) for lp in loops],
                            preserve_unit_iters)
        rv = LoopRV(var, name)
        self._commit(name, func, "fuse", [(None, lp) for lp in loops],
                     [("preserve_unit_iters", bool(preserve_unit_iters))], [rv])
        return rv

    def add_unit_loop(self, block_or_loop) -> LoopRV:
        """Wrap a block (or a loop) in a new loop of extent 1 (TVM's ``add_unit_loop``:
        gives a loop-less block a loop to schedule around); returns the new loop."""
        target = self._block_arg(block_or_loop)
        name = target.func_name
        node = self._realize(target) if isinstance(target, BlockRV) else self._loop(target)
        func, var = PL.add_unit_loop(self._func(name), node)
        rv = LoopRV(var, name)
        self._commit(name, func, "add_unit_loop", [("block_or_loop", target)], [], [rv])
        return rv

    def reorder(self, *ordered_loops) -> None:
        """Reorder loops of one chain into the given order."""
        loops = _flatten(ordered_loops)
        if not loops:
            return
        name = loops[0].func_name
        func = PL.reorder(self._func(name), [self._loop(lp) for lp in loops])
        self._commit(name, func, "reorder", [(None, lp) for lp in loops])

    # -- annotations ------------------------------------------------------------------------
    def _set_kind(self, loop, kind, what, thread_axis=None):
        func = PA.set_kind(self._func(loop.func_name), self._loop(loop), kind, what,
                           thread_axis)
        attrs = [] if thread_axis is None else [("thread_axis", thread_axis)]
        self._commit(loop.func_name, func, what, [("loop", loop)], attrs)

    def parallel(self, loop) -> None:
        """Run ``loop`` in parallel (it must not drive a reduction)."""
        self._set_kind(loop, S.ForKind.PARALLEL, "parallel")

    def vectorize(self, loop) -> None:
        """Vectorize ``loop`` (it must not drive a reduction)."""
        self._set_kind(loop, S.ForKind.VECTORIZED, "vectorize")

    def unroll(self, loop) -> None:
        """Unroll ``loop``."""
        self._set_kind(loop, S.ForKind.UNROLLED, "unroll")

    def bind(self, loop, thread_axis: str) -> None:
        """Bind ``loop`` to the GPU thread axis ``thread_axis`` ("threadIdx.x"...)."""
        if not isinstance(thread_axis, str) or not thread_axis:
            raise ScheduleError(f"bind needs a thread axis name, got {thread_axis!r}")
        self._set_kind(loop, S.ForKind.THREAD_BINDING, "bind", thread_axis)

    def annotate(self, block_or_loop, ann_key: str, ann_val) -> None:
        """Set annotation ``ann_key`` of a block or loop."""
        name = block_or_loop.func_name
        node = (self._realize(block_or_loop) if isinstance(block_or_loop, BlockRV)
                else self._loop(block_or_loop))
        func = PA.annotate(self._func(name), node, ann_key, self._int(ann_val))
        self._commit(name, func, "annotate", [("block_or_loop", block_or_loop)],
                     [("ann_key", ann_key), ("ann_val", ann_val)])

    def unannotate(self, block_or_loop, ann_key: str) -> None:
        """Remove annotation ``ann_key`` of a block or loop."""
        name = block_or_loop.func_name
        node = (self._realize(block_or_loop) if isinstance(block_or_loop, BlockRV)
                else self._loop(block_or_loop))
        func = PA.unannotate(self._func(name), node, ann_key)
        self._commit(name, func, "unannotate", [("block_or_loop", block_or_loop)],
                     [("ann_key", ann_key)])

    # -- compute location -------------------------------------------------------------------
    def compute_inline(self, block) -> None:
        """Inline a spatial block into its consumers and drop its buffer."""
        block = self._block_arg(block)
        func = PI.compute_inline(self._func(block.func_name), self._realize(block))
        self._commit(block.func_name, func, "compute_inline", [("block", block)])

    def reverse_compute_inline(self, block) -> None:
        """Inline a spatial block into its single producer."""
        block = self._block_arg(block)
        func = PI.reverse_compute_inline(self._func(block.func_name), self._realize(block))
        self._commit(block.func_name, func, "reverse_compute_inline", [("block", block)])

    def _move(self, kind, fn, block, loop, preserve_unit_loops, index):
        block = self._block_arg(block)
        func = self._func(block.func_name)
        mark = loop.mark if isinstance(loop, LoopRV) else None
        if mark == INLINE_MARK:
            inline = PI.compute_inline if kind == "compute_at" else PI.reverse_compute_inline
            func = inline(func, self._realize(block))
        elif mark is None:
            func = fn(func, self._realize(block), self._loop(loop), bool(preserve_unit_loops),
                      int(index))
        self._commit(block.func_name, func, kind, [("block", block), ("loop", loop)],
                     [("preserve_unit_loops", bool(preserve_unit_loops)),
                      ("index", int(index))])

    def compute_at(self, block, loop, preserve_unit_loops=False, index=-1) -> None:
        """Move a producer under ``loop``, covering what its consumers there read. The block
        must be the only writer of its buffer and not an output; after decompose_reduction
        neither the init nor the update block can be moved (as in TVM). ``loop`` may be a
        sampled location: its "root" mark leaves the block, its "inline" mark inlines it."""
        self._move("compute_at", PC.compute_at, block, loop, preserve_unit_loops, index)

    def reverse_compute_at(self, block, loop, preserve_unit_loops=False, index=-1) -> None:
        """Move a consumer under ``loop``, covering what its producers there write."""
        self._move("reverse_compute_at", PC.reverse_compute_at, block, loop,
                   preserve_unit_loops, index)

    # -- reduction --------------------------------------------------------------------------
    def decompose_reduction(self, block, loop) -> BlockRV:
        """Move the init of a reduction block into a new block ``<name>_init`` before
        ``loop``; returns the init block. The update block keeps its name (TVM renames it
        ``<name>_update``) and now reads the region it writes."""
        block = self._block_arg(block)
        func, init_name = PR.decompose_reduction(self._func(block.func_name),
                                                 self._realize(block), self._loop(loop))
        rv = BlockRV(init_name, block.func_name)
        self._commit(block.func_name, func, "decompose_reduction",
                     [("block", block), ("loop", loop)], [], [rv])
        return rv

    # -- cache ------------------------------------------------------------------------------
    def _cache(self, kind, fn, block, index, storage_scope, consumer_blocks):
        block = self._block_arg(block)
        index = self._buffer_index(block, index, "read" if kind == "cache_read" else "write")
        names = None if consumer_blocks is None else [
            c if isinstance(c, str) else c.name for c in consumer_blocks]
        func, name = fn(self._func(block.func_name), self._realize(block), int(index),
                        str(storage_scope), names)
        rv = BlockRV(name, block.func_name)
        index_key = "read_buffer_index" if kind == "cache_read" else "write_buffer_index"
        attrs = [(index_key, int(index)), ("storage_scope", str(storage_scope))]
        if consumer_blocks:
            attrs.append(("consumer_blocks", list(consumer_blocks)))
        self._commit(block.func_name, func, kind, [("block", block)], attrs, [rv])
        return rv

    def cache_read(self, block, read_buffer_index, storage_scope,
                   consumer_blocks=None) -> BlockRV:
        """Stage a read buffer of ``block`` into a new ``storage_scope`` buffer; every reader
        (or only ``consumer_blocks``) reads the copy. Returns the copy block."""
        return self._cache("cache_read", PCache.cache_read, block, read_buffer_index,
                           storage_scope, consumer_blocks)

    def cache_write(self, block, write_buffer_index, storage_scope,
                    consumer_blocks=None) -> BlockRV:
        """Make ``block`` write a new ``storage_scope`` buffer copied back right after it.
        Returns the copy-back block."""
        return self._cache("cache_write", PCache.cache_write, block, write_buffer_index,
                           storage_scope, consumer_blocks)

    def _reindex_cache(self, kind, fn, block, index, storage_scope, index_map):
        block = self._block_arg(block)
        index = self._buffer_index(block, index, "read" if "read" in kind else "write")
        func, name, imap = fn(self._func(block.func_name), self._realize(block), int(index),
                              str(storage_scope), index_map)
        rv = BlockRV(name, block.func_name)
        index_key = "read_buffer_index" if "read" in kind else "write_buffer_index"
        self._commit(block.func_name, func, kind, [("block", block), ("index_map", imap)],
                     [(index_key, int(index)), ("storage_scope", str(storage_scope))], [rv])
        return rv

    def reindex_cache_read(self, block, read_buffer_index, storage_scope,
                           index_map) -> BlockRV:
        """Stage a (point-accessed) read buffer of ``block`` into a new buffer indexed by
        ``index_map`` of the block's iter vars; only ``block`` reads it. Returns the copy
        block."""
        return self._reindex_cache("reindex_cache_read", PCache.reindex_cache_read, block,
                                   read_buffer_index, storage_scope, index_map)

    def reindex_cache_write(self, block, write_buffer_index, storage_scope,
                            index_map) -> BlockRV:
        """Make ``block`` write a new buffer indexed by ``index_map`` of its iter vars,
        copied back before the buffer's first consumer. Returns the copy-back block."""
        return self._reindex_cache("reindex_cache_write", PCache.reindex_cache_write, block,
                                   write_buffer_index, storage_scope, index_map)

    def rfactor(self, loop, factor_axis: int) -> BlockRV:
        """Factor the reduction over ``loop`` into an rf block and a write-back block (which
        keeps the original name); returns the rf block ``<name>_rf``."""
        func, name = PR.rfactor(self._func(loop.func_name), self._loop(loop), int(factor_axis))
        rv = BlockRV(name, loop.func_name)
        self._commit(loop.func_name, func, "rfactor", [("loop", loop)],
                     [("factor_axis", int(factor_axis))], [rv])
        return rv

    def blockize(self, target, preserve_unit_iters=True) -> BlockRV:
        """Wrap the loops under ``target`` and their block into an outer block ``<name>_o``
        (the init, if any, stays in the inner block); returns the outer block."""
        func, name = PB.blockize(self._func(target.func_name), self._loop(target),
                                 bool(preserve_unit_iters))
        rv = BlockRV(name, target.func_name)
        self._commit(target.func_name, func, "blockize", [("target", target)],
                     [("preserve_unit_iters", bool(preserve_unit_iters))], [rv])
        return rv

    # -- layout -----------------------------------------------------------------------------
    def transform_layout(self, block, buffer, index_map, pad_value=None,
                         assume_injective_transform=False) -> None:
        """Lay ``buffer`` (``("read"|"write", i)`` of ``block``, or a name) out as
        ``index_map`` (a Python function of the old indices) says; every access follows.
        The map must be one-to-one over the buffer's shape; one leaving holes in the new
        shape (a split by a factor not dividing the extent) needs a constant ``pad_value``,
        written into the holes after the block producing the buffer."""
        block = self._block_arg(block)
        func, imap = PLay.transform_layout(self._func(block.func_name), self._realize(block),
                                           buffer, index_map, pad_value)
        self._commit(block.func_name, func, "transform_layout",
                     [("block", block), ("buffer", buffer), ("index_map", imap)],
                     [("pad_value", pad_value),
                      ("assume_injective_transform", bool(assume_injective_transform))])

    # -- sampling ---------------------------------------------------------------------------
    def _record_sample(self, kind, inputs, attrs, outputs, decision):
        if isinstance(decision, int):
            decision = Decision(decision)
        self._trace.append(Instruction(kind, inputs, attrs, outputs), decision)

    def sample_perfect_tile(self, loop, n, max_innermost_factor=16, decision=None) -> list:
        """``n`` ExprRVs whose values multiply to ``loop``'s extent, the innermost at most
        ``max_innermost_factor`` (<= 0: no limit); ``decision`` (a list of ints) fixes them."""
        node = self._loop(loop)
        name = node.loop_var.name_hint
        if not G.is_const(node.extent) or isinstance(n, bool) or not isinstance(n, int) \
                or n < 1:
            raise ScheduleError(f"sample_perfect_tile of loop {name}: needs a constant extent "
                                f"(got {node.extent}) and n >= 1 (got {n!r})")
        extent, limit = node.extent.value, int(max_innermost_factor)
        if decision is None:
            decision = SM.sample_perfect_tile(self._rand, extent, n, limit)
        decision = SM.check_perfect_tile(decision, extent, n, limit, name)
        rvs = [ExprRV() for _ in decision]
        self._values.update(zip(rvs, decision))
        self._record_sample("sample_perfect_tile", [("loop", loop)],
                            [("n", n), ("max_innermost_factor", limit)], rvs, decision)
        return rvs

    def sample_categorical(self, candidates, probs, decision=None) -> ExprRV:
        """An ExprRV taking ``candidates[i]`` with probability ``probs[i]`` (normalized);
        ``decision`` is the index chosen."""
        candidates = [int(c) for c in candidates]
        given = [p.value if isinstance(p, E.FloatImm) else p for p in probs]
        probs = [float(p) for p in given]
        SM.check_categorical(candidates, probs)
        if decision is None:
            decision = self._rand.choice(probs)
        if isinstance(decision, bool) or not isinstance(decision, int) \
                or not 0 <= decision < len(candidates):
            raise ScheduleError(f"sample_categorical: the decision must be an index below "
                                f"{len(candidates)}, got {decision!r}")
        rv = ExprRV()
        self._values[rv] = candidates[decision]
        self._record_sample("sample_categorical", [],
                            [("candidates", candidates), ("probs", given)], [rv], decision)
        return rv

    def sample_compute_location(self, block, decision=None) -> LoopRV:
        """A random place to ``compute_at`` ``block``: a loop of its first consumer, or the
        marks "root" (decision -1) and "inline" (-2); ``decision`` is that loop's index. A
        decision that is no longer a candidate falls back to the nearest one before it."""
        block = self._block_arg(block)
        func = self._func(block.func_name)
        decision, where = SM.pick_compute_location(self._rand, func, self._realize(block),
                                                   decision)
        var = where if isinstance(where, str) else where.loop_var
        rv = LoopRV(var, block.func_name)
        self._record_sample("sample_compute_location", [("block", block)], [], [rv], decision)
        return rv

    def enter_postproc(self) -> None:
        """Mark where postprocessing starts: trace transformations with
        ``remove_postproc=True`` drop what follows."""
        self._trace.append(Instruction("enter_postproc", [], [], []))


def _flatten(items):
    out = []
    for x in items:
        if isinstance(x, (list, tuple)):
            out.extend(_flatten(x))
        else:
            out.append(x)
    return out
