"""Hypothesis strategies for random block-form TIR and random schedules of it.

``loop_nests()`` draws a well-formed block-form ``PrimFunc`` built with ``irlab.te``: a small
universe of 1..3 named axes (extents 2..6) and tensors that each live on an ordered subset of
those axes (a permuted subset gives transposed reads, a smaller subset gives broadcasts). A
chain of 1..3 compute stages follows the inputs; every stage reads the previous one (so all
but the last are intermediates). A stage is elementwise/broadcast over some axes or a
reduction (``te.sum``/``te.max``/``te.min``) over one extra axis. Bodies are random float32
expressions with ``+ - *``, ``max``/``min``, ``Select`` on a comparison, casts (to int32 and
back, through float64, of an index variable) and small constants.

``lowered_loop_nests()`` is ``irlab.lower`` of those (an ``IRModule``).

``schedules(func)`` draws a ``ScheduledFunc``: a ``tir.Schedule`` of ``func`` after a random
sequence of steps (split with one ``None`` factor, fuse of adjacent loops, reorder,
parallel/vectorize/unroll, compute_inline/reverse_compute_inline, compute_at/
reverse_compute_at, decompose_reduction). Draws may be illegal: the ``ScheduleError`` is
caught and the step is recorded in ``log`` together with whether the schedule was left
unchanged (module and non-getter trace), which is the contract tests check.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from irlab import te, tir
from irlab.ir.structural import structural_equal
from irlab.tir import Schedule, ScheduleError
from irlab.tir import stmt as S

AXIS_NAMES = ("i", "j", "k")
_CONSTS = (0.0, 0.5, -1.0, 1.5, 2.0, -0.25, 3.0)


def _axes_subset(draw, universe, min_size=1):
    """An ordered (possibly permuted) subset of ``universe``."""
    if not universe:
        return ()
    sub = draw(st.lists(st.sampled_from(universe), min_size=min_size,
                        max_size=len(universe), unique=True))
    return tuple(sub)


class _ExprBuilder:
    def __init__(self, draw, env, pool):
        self.draw = draw
        self.env = env          # axis name -> index Var
        self.pool = pool        # [(tensor, axes)] readable here

    def load(self, tensor, axes):
        return tensor[tuple(self.env[a] for a in axes)]

    def leaf(self):
        draw = self.draw
        kind = draw(st.sampled_from(("load", "load", "load", "const", "index")))
        if kind == "load" and self.pool:
            return self.load(*draw(st.sampled_from(self.pool)))
        if kind == "index":
            var = self.env[draw(st.sampled_from(sorted(self.env)))]
            return tir.cast(var, "float32")
        return tir.const(draw(st.sampled_from(_CONSTS)), "float32")

    def expr(self, depth):
        draw = self.draw
        if depth <= 0:
            return self.leaf()
        kind = draw(st.sampled_from(("leaf", "add", "sub", "mul", "max", "min", "select",
                                     "cast_int", "cast_f64")))
        if kind == "leaf":
            return self.leaf()
        if kind == "cast_int":
            return tir.cast(tir.cast(self.expr(depth - 1), "int32"), "float32")
        if kind == "cast_f64":
            return tir.cast(tir.cast(self.expr(depth - 1), "float64") * tir.const(0.5, "float64"),
                            "float32")
        if kind == "select":
            if draw(st.booleans()):
                cond = self.expr(depth - 1) < self.expr(depth - 1)
            else:
                var = self.env[draw(st.sampled_from(sorted(self.env)))]
                cond = var < draw(st.integers(1, 4))
            return tir.Select(cond, self.expr(depth - 1), self.expr(depth - 1))
        return combine(kind, self.expr(depth - 1), self.expr(depth - 1))


def combine(kind, a, b):
    if kind == "add":
        return a + b
    if kind == "sub":
        return a - b
    if kind == "mul":
        return a * b
    if kind == "max":
        return tir.max(a, b)
    return tir.min(a, b)


def _stage_body(draw, extents, pool, out_axes, raxis, required, op, depth):
    pool = list(pool)

    def fcompute(*idx):
        env = dict(zip(out_axes, idx))
        if raxis is not None:
            rv = te.reduce_axis((0, extents[raxis]), name=raxis + "r")
            env[raxis] = rv.var
        readable = [(t, ax) for t, ax in pool if set(ax) <= set(env)]
        builder = _ExprBuilder(draw, env, readable)
        body = combine(op, builder.load(*required), builder.expr(depth))
        if raxis is not None:
            reducer = draw(st.sampled_from((te.sum, te.max, te.min)))
            return reducer(body, axis=rv)
        return body
    return fcompute


@st.composite
def loop_nests(draw, max_stages=3, max_depth=2):
    """A random block-form PrimFunc (see the module docstring)."""
    n_axes = draw(st.integers(1, 3))
    universe = AXIS_NAMES[:n_axes]
    extents = {a: draw(st.integers(2, 6)) for a in universe}
    inputs = []
    for n in range(draw(st.integers(1, 2))):
        axes = _axes_subset(draw, universe)
        inputs.append((te.placeholder([extents[a] for a in axes], name="AB"[n]), axes))
    pool = list(inputs)
    prev = draw(st.sampled_from(inputs))
    n_stages = draw(st.integers(1, max_stages))
    for s in range(n_stages):
        reduce = n_axes >= 2 and draw(st.booleans())
        if reduce and len(prev[1]) == n_axes == 1:
            reduce = False
        # a stage covers the axes of the stage it reads (a reduction: all but one of them)
        others = [a for a in universe if a not in prev[1]]
        if reduce:
            raxis = draw(st.sampled_from(prev[1]))
            rest = tuple(a for a in prev[1] if a != raxis)
            out_axes = rest + _axes_subset(draw, others, min_size=0 if rest else 1)
        else:
            out_axes = tuple(prev[1]) + _axes_subset(draw, others, min_size=0)
        if draw(st.booleans()):
            out_axes = tuple(draw(st.permutations(out_axes)))
        name = f"T{s}" if s < n_stages - 1 else "out"
        shape = [extents[a] for a in out_axes]
        required = prev
        op = draw(st.sampled_from(("add", "sub", "mul", "max", "min")))
        depth = draw(st.integers(0, max_depth))

        fcompute = _stage_body(draw, extents, pool, out_axes, raxis if reduce else None,
                               required, op, depth)
        tensor = te.compute(shape, fcompute, name=name, varargs_names=list(out_axes))
        prev = (tensor, out_axes)
        pool.append(prev)
    return te.create_prim_func([t for t, _ in inputs] + [prev[0]])


def lowered_loop_nests(**kwargs):
    """``irlab.lower`` of ``loop_nests()``: flat TIR in an IRModule."""
    import irlab

    return loop_nests(**kwargs).map(irlab.lower)


# -- schedules ------------------------------------------------------------------------------

@dataclass
class ScheduledFunc:
    """A random schedule of ``func``; ``log`` holds (step, error message or None, unchanged)."""

    func: object
    sch: Schedule
    log: list = field(default_factory=list)

    @property
    def errors(self):
        return [entry for entry in self.log if entry[1] is not None]


STEP_KINDS = ("split", "split", "fuse", "reorder", "parallel", "vectorize", "unroll",
              "compute_inline", "reverse_compute_inline", "compute_at", "compute_at",
              "reverse_compute_at", "decompose_reduction")


def block_names(func):
    """Names of the non-root blocks of ``func``, in pre-order."""
    names = []

    def visit(node):
        if isinstance(node, S.BlockRealize) and node.block.name_hint != "root":
            names.append(node.block.name_hint)
        for name in node._fields:
            value = getattr(node, name)
            for v in (value if isinstance(value, tuple) else (value,)):
                if isinstance(v, S.Stmt):
                    visit(v)
    visit(func.body)
    return names


def _non_getters(sch):
    return len([i for i in sch.trace.insts if not i.kind.startswith("get_")])


def _call(note, desc, fn, *args, **kwargs):
    note.append(desc)
    fn(*args, **kwargs)
    return desc


def _step(draw, sch, kind):
    """Perform one random step of ``kind``; returns a description."""
    return _do_step(draw, sch, kind, [])


def _do_step(draw, sch, kind, note):
    """The step; its description goes to ``note`` before the primitive runs."""
    blocks = block_names(sch.mod["main"])
    if not blocks:
        return f"{kind}: no blocks"
    name = draw(st.sampled_from(blocks))
    block = sch.get_block(name)
    loops = sch.get_loops(block)
    if kind in ("compute_inline", "reverse_compute_inline"):
        return _call(note, f"{kind}({name})", getattr(sch, kind), block)
    if kind in ("compute_at", "reverse_compute_at"):
        others = [b for b in blocks if b != name] or blocks
        target = draw(st.sampled_from(others))
        tloops = sch.get_loops(sch.get_block(target))
        if not tloops:
            return f"{kind}: {target} has no loops"
        li = draw(st.integers(0, len(tloops) - 1))
        unit = draw(st.booleans())
        return _call(note, f"{kind}({name}, loop {li} of {target}, preserve_unit_loops={unit})",
                     getattr(sch, kind), block, tloops[li], preserve_unit_loops=unit)
    if not loops:
        return f"{kind}: {name} has no loops"
    li = draw(st.integers(0, len(loops) - 1))
    loop = loops[li]
    if kind == "split":
        n = draw(st.integers(2, 3))
        factors = [draw(st.integers(1, 6)) for _ in range(n)]
        factors[draw(st.integers(0, n - 1))] = None
        return _call(note, f"split({name} loop {li}, {factors})", sch.split, loop, factors)
    if kind == "fuse":
        if li + 1 >= len(loops):
            return "fuse: no adjacent loop"
        count = draw(st.integers(2, min(3, len(loops) - li)))
        return _call(note, f"fuse({name} loops {li}..{li + count - 1})", sch.fuse,
                     *loops[li:li + count])
    if kind == "reorder":
        order = draw(st.permutations(range(len(loops))))
        keep = draw(st.integers(2, len(loops))) if len(loops) >= 2 else 1
        order = order[:keep]
        return _call(note, f"reorder({name} loops {list(order)})", sch.reorder,
                     *[loops[i] for i in order])
    if kind in ("parallel", "vectorize", "unroll"):
        return _call(note, f"{kind}({name} loop {li})", getattr(sch, kind), loop)
    if kind == "decompose_reduction":
        return _call(note, f"decompose_reduction({name}, loop {li})", sch.decompose_reduction,
                     block, loop)
    raise AssertionError(kind)


@st.composite
def schedules(draw, func, max_steps=6, kinds=STEP_KINDS):
    """A ``ScheduledFunc`` of ``func`` after 0..max_steps random steps (see module docs)."""
    sch = Schedule(func)
    result = ScheduledFunc(func, sch)
    for _ in range(draw(st.integers(0, max_steps))):
        kind = draw(st.sampled_from(kinds))
        before, n_before = sch.mod, _non_getters(sch)
        note = [kind]
        try:
            desc = _do_step(draw, sch, kind, note)
        except ScheduleError as err:
            desc = note[-1]
            unchanged = (structural_equal(before["main"], sch.mod["main"])
                         and _non_getters(sch) == n_before)
            result.log.append((desc, str(err), unchanged))
        else:
            result.log.append((desc, None, True))
    return result
