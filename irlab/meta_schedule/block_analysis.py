"""What schedule rules and postprocessors ask about a schedule's blocks and loops (TVM's
``tir/schedule/analysis``): iterator kinds, trivial bindings, whether a block wants
multi-level tiling or rfactor. These read the IR only; they add nothing to the trace."""

from __future__ import annotations

from functools import lru_cache

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.functor import post_order_visit
from irlab.tir.schedule import ScheduleError
from irlab.tir.schedule import primitives_getters as G

# Annotation keys shared by the rules and the postprocessors (TVM's tir::attr names).
TILING_STRUCTURE = "meta_schedule.tiling_structure"
PARALLEL = "meta_schedule.parallel"
VECTORIZE = "meta_schedule.vectorize"
UNROLL_EXPLICIT = "meta_schedule.unroll_explicit"
UNROLL_IMPLICIT = "meta_schedule.unroll_implicit"
RANDOM_COMPUTE_PRODUCER = "meta_schedule.random_compute_producer"
INLINE_RULE = "meta_schedule.inline_rule"

DATA_PAR, REDUCE, OTHER = "S", "R", "O"


def func_of(sch, rv):
    return sch.mod[rv.func_name]


def realize_of(sch, block):
    return G.find_block(func_of(sch, block), block.name)


def has_block(sch, block) -> bool:
    """Whether ``block`` still exists (an inlined block is gone)."""
    try:
        realize_of(sch, block)
    except ScheduleError:
        return False
    return True


def loops_of(sch, block) -> list:
    """The For nodes above ``block`` in its scope, outermost first."""
    return G.loops_of(func_of(sch, block), realize_of(sch, block))


def annotations(node) -> dict:
    node = node.block if isinstance(node, S.BlockRealize) else node
    return dict(node.annotations)


def _enclosing_blocks(sch, block) -> int:
    func = func_of(sch, block)
    return sum(isinstance(n, S.Block) for n in G.find_path(func, realize_of(sch, block)))


def is_root(sch, block) -> bool:
    """Whether ``block`` is its function's root block (no block above it)."""
    return _enclosing_blocks(sch, block) == 0


def is_root_child(sch, block) -> bool:
    """Whether ``block`` sits directly in the root block's scope (TVM's condition "the
    block is a direct child of the root block", for the rules that move blocks)."""
    return _enclosing_blocks(sch, block) == 1


def is_spatial(block) -> bool:
    return all(iv.iter_type == S.IterVar.DataPar for iv in block.iter_vars)


def is_reduction(block) -> bool:
    """A block with reduction iterators and only DataPar/CommReduce ones."""
    kinds = {iv.iter_type for iv in block.iter_vars}
    return S.IterVar.CommReduce in kinds and kinds <= {S.IterVar.DataPar, S.IterVar.CommReduce}


def is_trivial_binding(realize, loops) -> bool:
    """Whether each block iterator is bound to exactly one of ``loops``' variables."""
    loop_vars = {id(lp.loop_var) for lp in loops}
    return all(isinstance(v, E.Var) and id(v) in loop_vars for v in realize.iter_values)


@lru_cache(maxsize=65536)
def var_ids(expr) -> frozenset:
    """The ids of the variables in ``expr`` (memoized: expressions are immutable and hash
    by identity, and the rules ask about the same bindings many times)."""
    found = set()
    _free_vars(expr, found)
    return frozenset(found)


def loop_iter_type(loop) -> str:
    """S when ``loop`` feeds only data-parallel iterators of the blocks under it, R when
    only reduction ones, O otherwise (both, another kind, or no block)."""
    kinds, var = set(), id(loop.loop_var)
    for node, _ in G.walk(loop.body):
        if not isinstance(node, S.BlockRealize):
            continue
        for iv, value in zip(node.block.iter_vars, node.iter_values):
            if var in var_ids(value):
                kinds.add(iv.iter_type)
    if kinds == {S.IterVar.DataPar}:
        return DATA_PAR
    if kinds == {S.IterVar.CommReduce}:
        return REDUCE
    return OTHER


def const_extent(loop):
    return loop.extent.value if isinstance(loop.extent, E.IntImm) else None


def _free_vars(expr, out):
    post_order_visit(expr, lambda n: out.add(id(n)) if isinstance(n, E.Var) else None)


def needs_multi_level_tiling(realize, loops) -> bool:
    """TVM's NeedsMultiLevelTiling: a non-spatial block with one write, trivially bound,
    where some read does not depend on a spatial iterator (data reuse to exploit)."""
    block = realize.block
    if TILING_STRUCTURE in annotations(block):
        return False
    if len(block.writes) != 1 or not block.reads or is_spatial(block):
        return False
    if not is_trivial_binding(realize, loops):
        return False
    spatial = [id(iv.var) for iv in block.iter_vars if iv.iter_type == S.IterVar.DataPar]
    written = block.writes[0].buffer
    seen, unused = set(), 0
    for region in block.reads:
        if id(region.buffer) in seen:
            return False
        seen.add(id(region.buffer))
        if region.buffer is written:
            continue
        used = set()
        for rng in region.region:
            if not isinstance(rng.extent, E.IntImm):
                return False
            _free_vars(rng.min, used)
        unused += sum(1 for v in spatial if v not in used)
    return unused >= 1


def space_and_reduce_lengths(realize, loops):
    """The products of the spatial and of the reduction loops' extents (None: not
    constant or a loop of another kind)."""
    space = reduce = 1
    for loop in loops:
        extent = const_extent(loop)
        kind = loop_iter_type(loop)
        if extent is None or kind == OTHER:
            return None
        if kind == DATA_PAR:
            space *= extent
        else:
            reduce *= extent
    return space, reduce


def contains_call(node, op_names) -> bool:
    """Whether an expression under ``node`` calls one of ``op_names`` ("tir.exp"...)."""
    found = []

    def check(n):
        if isinstance(n, E.Call) and getattr(n.op, "name", n.op) in op_names:
            found.append(n)

    post_order_visit(node, check)
    return bool(found)


def contains_if(node) -> bool:
    """Whether ``node`` has an IfThenElse statement."""
    return any(isinstance(n, S.IfThenElse) for n, _ in G.walk(node))
