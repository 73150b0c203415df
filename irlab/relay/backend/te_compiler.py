"""LowerTE: a fused ``Primitive`` Relay function becomes one scheduled PrimFunc.

As TVM's ``te_compiler.cc`` ``ScheduleBuilder``: the function's parameters become
``te.placeholder``s, each call picks its op's implementation (``select_implementation``) and
runs its TE compute; the op with the highest fusion pattern is the *anchor* (the last one on
ties). ``te.create_prim_func`` turns the tensors into a block-form PrimFunc, then:

1. every stage of an injective op that is not an output is inlined into its consumers
   (TVM's ``AutoInlineInjective``); a stage that cannot be inlined stays as it is;
2. the anchor implementation's schedule runs on the ``tir.Schedule`` with the function's
   output tensors (a TOPI schedule finds its own stages from there, as in TVM).

The scheduled function is verified once, at the end (``verify_well_formed``), not after
each primitive; only when it is not well formed is it scheduled again, verifying each step,
so that the step at fault raises ``ScheduleError`` and the schedule's fallback runs.

The PrimFunc is named ``tvmgen_default_fused_<op>_<op>...`` ("." -> "_"); a name longer than
80 characters is cut and ends in a hash of the full one. Structurally equal functions are
lowered once (``TECompiler`` caches by structural hash).
"""

from __future__ import annotations

import hashlib

from irlab import te
from irlab.errors import IrlabError
from irlab.ir.op import Op, OpPattern
from irlab.ir.structural import structural_equal, structural_hash
from irlab.ir.type import TensorType, TupleType
from irlab.relay import expr as R
from irlab.relay.expr_functor import DeepSafeMemoVisitor
from irlab.relay.function import Function
from irlab.relay.op.op_strategy import select_implementation
from irlab.tir.analysis import verify_well_formed
from irlab.tir.schedule import Schedule, ScheduleError
from irlab.topi.utils import _te_blocks, block_of

MAX_NAME = 80


def _truncate(name: str) -> str:
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:16]
    return name[:MAX_NAME - len(digest) - 1] + "_" + digest


def fused_name(func: Function, prefix="tvmgen_default") -> str:
    """``fused_`` + the op names in post order, as TVM's ``GetUniqueName`` input."""
    names = []
    stack = [(func.body, False)]  # the recursion "args, then the call", with a stack
    while stack:
        e, done = stack.pop()
        if done:
            names.append(e.op.name.replace(".", "_"))
        elif isinstance(e, R.Call):
            if isinstance(e.op, Op):
                stack.append((e, True))
            stack.extend((a, False) for a in reversed(e.args))
        elif isinstance(e, R.Tuple):
            stack.extend((f, False) for f in reversed(e.fields))
        elif isinstance(e, R.TupleGetItem):
            stack.append((e.tuple_value, False))
    return _truncate(f"{prefix}_fused_" + "_".join(names))


# The most elements a tensor constant inside a primitive function may have: it becomes a chain
# of selects on the element index (TVM embeds any size as a linked parameter).
LINKED_CONSTANT_LIMIT = 64


class _TEBuilder(DeepSafeMemoVisitor):
    """Relay function body -> TE tensors, remembering the anchor op."""

    def __init__(self, target):
        super().__init__()
        self.target = target
        self.anchor = None  # (implementation, attrs, op)
        self.anchor_pattern = -1
        self.pattern_of_stage: dict = {}  # ComputeOp -> pattern of the Relay op making it

    def _visit(self, e):
        if isinstance(e, R.Var):
            raise IrlabError(f"LowerTE: free variable {e.name_hint} in a primitive function")
        if isinstance(e, R.Constant):
            return self._constant(e)
        if isinstance(e, R.Tuple):
            return tuple(self.visit(f) for f in e.fields)
        if isinstance(e, R.TupleGetItem):
            return self.visit(e.tuple_value)[e.index]
        if isinstance(e, R.Call):
            return self._call(e)
        raise IrlabError(f"LowerTE cannot lower {type(e).__name__} inside a primitive function")

    def _constant(self, c):
        value = c.data.numpy() if hasattr(c.data, "numpy") else c.data
        if getattr(value, "ndim", 0) != 0:
            return self._linked_constant(value)
        from irlab.tir import op as O

        scalar = O.const(value.item(), str(value.dtype) if str(value.dtype) != "bool"
                         else "bool")
        tensor = te.compute((), lambda: scalar, name="compile_engine_const", tag="const")
        self.pattern_of_stage[tensor.op] = int(OpPattern.ELEMWISE)  # always inlined
        return tensor

    def _linked_constant(self, value):
        """A small tensor constant inside a primitive function (FuseOps with
        ``relay.FuseOps.link_params``): a stage choosing each element by its flat index,
        inlined into its consumer like a scalar constant."""
        from irlab.tir import expr as E, op as O
        from irlab.topi.transform import ravel_index

        flat = value.ravel()
        if flat.size > LINKED_CONSTANT_LIMIT:
            raise IrlabError(f"LowerTE: a tensor constant of {flat.size} elements inside a "
                             f"primitive function; irlab links constants of at most "
                             f"{LINKED_CONSTANT_LIMIT} elements (leave relay.FuseOps."
                             f"link_params off to pass it as an argument)")
        dtype = str(value.dtype)

        def body(*i):
            where = ravel_index(i, value.shape)
            out = O.const(flat[-1].item(), dtype)
            for k in range(flat.size - 2, -1, -1):
                out = E.Select(where == k, O.const(flat[k].item(), dtype), out)
            return out

        tensor = te.compute(value.shape, body, name="compile_engine_const", tag="const")
        self.pattern_of_stage[tensor.op] = int(OpPattern.ELEMWISE)  # always inlined
        return tensor

    def _call(self, call):
        if not isinstance(call.op, Op):
            raise IrlabError(f"LowerTE: a primitive function calls {type(call.op).__name__}; "
                             f"only operators can be lowered")
        inputs = []
        for a in call.args:
            value = self.visit(a)
            inputs.extend(value if isinstance(value, tuple) else [value])
        out_type = call.checked_type
        impl = select_implementation(call.op, call.attrs, inputs, out_type, self.target)
        outs = impl.compute(call.attrs, inputs, out_type)
        pattern = int(call.op.pattern)
        for t in outs:
            self._mark(t, pattern, set(id(i.op) for i in inputs))
        if pattern >= self.anchor_pattern:
            self.anchor, self.anchor_pattern = (impl, call.attrs, call.op), pattern
        if isinstance(out_type, TupleType):
            return tuple(outs)
        return outs[0]

    def _mark(self, tensor, pattern, stop):
        """Record the pattern of every stage this call created (up to its inputs)."""
        op = tensor.op
        if id(op) in stop or op in self.pattern_of_stage or not hasattr(op, "body"):
            return
        self.pattern_of_stage[op] = pattern
        for t in op.input_tensors:
            self._mark(t, pattern, stop)


class LoweredFunction:
    """A primitive function lowered: its PrimFunc (block form, scheduled) and its pieces."""

    def __init__(self, name, prim_func, schedule, relay_func, inputs, outputs, anchor):
        self.name = name
        self.prim_func = prim_func
        self.schedule = schedule
        self.relay_func = relay_func
        self.inputs = inputs
        self.outputs = outputs
        self.anchor = anchor  # (OpImplementation, attrs, Op)
        self.tuned = False  # True: scheduled by a tuning record (``schedule.trace`` is its)

    def __repr__(self):
        impl = self.anchor[0].name if self.anchor else "-"
        tuned = ", tuned" if self.tuned else ""
        return f"LoweredFunction({self.name}, anchor={impl}{tuned})"


def _output_tensors(value) -> list:
    return list(value) if isinstance(value, tuple) else [value]


def _placeholders(ty, name, inputs):
    """The TE value of a parameter of type ``ty``: a placeholder, or a tuple of them for a
    tuple-typed parameter (``concatenate(%p0)`` at opt_level 0), flattened into ``inputs`` in
    the order the graph codegen passes the tuple's fields (as TVM's FlattenTupleType)."""
    if isinstance(ty, TupleType):
        return tuple(_placeholders(f, f"{name}_{i}", inputs) for i, f in enumerate(ty.fields))
    if not isinstance(ty, TensorType):
        raise IrlabError(f"LowerTE: parameter {name} is {ty}; only tensor and tuple "
                         f"parameters are supported")
    ph = te.placeholder(tuple(int(d) for d in ty.shape), ty.dtype, name=name)
    inputs.append(ph)
    return ph


# The tuning database in scope (``with ms.database.JSONDatabase(...)``) answers through this
# global function, registered by irlab.meta_schedule (a layer above relay): the PrimFunc of
# a fused function's TE, unscheduled, in; the best tuned ``tir.Schedule`` (its trace holds
# the sampled decisions; its module's ``main`` is the tuned function), a PrimFunc, or None.
TUNED_SCHEDULE_HOOK = "relay.backend.meta_schedule.query_tuned_prim_func"


def tuned_prim_func(prim_func, target):
    """The tuned version of ``prim_func`` from the database in scope, or None (TOPI then
    schedules it)."""
    from irlab.runtime.registry import get_global_func

    query = get_global_func(TUNED_SCHEDULE_HOOK, allow_missing=True)
    return None if query is None else query(prim_func, target)


def lower_function(func: Function, target, name: str | None = None) -> LoweredFunction:
    """Lower one fused primitive function (its types inferred) for ``target``."""
    builder = _TEBuilder(target)
    inputs = []
    for p in func.params:
        ty = p.checked_type if p._checked_type is not None else p.type_annotation
        builder.memo[p] = _placeholders(ty, p.name_hint, inputs)
    outputs = _output_tensors(builder.visit(func.body))
    prim_func = te.create_prim_func(inputs + outputs)
    name = name or fused_name(func)
    prim_func = prim_func.with_attr("global_symbol", name)
    tuned = tuned_prim_func(prim_func, target)
    if tuned is not None:  # a tuning record beats TOPI's schedule
        sch = tuned if isinstance(tuned, Schedule) else Schedule(tuned)
        tuned = sch.mod["main"].with_attr("global_symbol", name)
        lowered = LoweredFunction(name, tuned, sch, func, inputs, outputs, builder.anchor)
        lowered.tir_from_te = prim_func
        lowered.tuned = True  # its schedule's trace is the tuning record's
        return lowered
    sch = _scheduled(prim_func, inputs, outputs, builder, target, checked=False)
    if not verify_well_formed(sch.mod, assert_mode=False):
        # a step made the function ill formed: schedule again, verifying after each step,
        # so that the step fails (ScheduleError) and TOPI's fallback runs, as it always did
        sch = _scheduled(prim_func, inputs, outputs, builder, target, checked=True)
    lowered = LoweredFunction(name, sch.mod["main"], sch, func, inputs, outputs,
                              builder.anchor)
    lowered.tir_from_te = prim_func  # before any schedule: what the lowering explorer shows
    return lowered


def _scheduled(prim_func, inputs, outputs, builder, target, checked):
    """``prim_func`` under a new ``Schedule``: the injective stages inlined, then the anchor
    implementation's schedule. ``checked=False`` verifies only the end result (by the caller):
    verifying after each of a conv's ~15 primitives was a tenth of a cold ``relay.build``."""
    from irlab.te.create_prim_func import _ordered_ops
    from irlab.te.tensor import ComputeOp

    sch = Schedule(prim_func, enable_check=checked)
    # the ComputeOps in create_prim_func's order are its root's child blocks, in order
    ops = [op for op in _ordered_ops(inputs + outputs) if isinstance(op, ComputeOp)]
    blocks = sch.get_child_blocks(sch.get_block("root"))
    names = {}
    if len(blocks) == len(ops):
        names = {op: sch.get(b).name_hint for op, b in zip(ops, blocks)}
    _te_blocks[sch] = names
    out_ops = {t.op for t in outputs}
    for op in reversed(ops):
        pattern = builder.pattern_of_stage.get(op, int(OpPattern.OPAQUE))
        if op in out_ops or pattern > int(OpPattern.INJECTIVE) or op not in names:
            continue
        try:
            sch.compute_inline(sch.get_block(names[op]))
        except ScheduleError:
            pass  # e.g. read by a reduction in a way inlining cannot express: keep the stage
    if builder.anchor is not None:
        impl, attrs, _ = builder.anchor
        impl.schedule(attrs, sch, outputs, target)
    sch.enable_check = True  # primitives applied later (by a user) are verified
    return sch


class TECompiler:
    """Lowers primitive functions once each: structurally equal functions share a PrimFunc."""

    def __init__(self, target, prefix="tvmgen_default"):
        self.target = target
        self.prefix = prefix
        self._cache: dict = {}  # structural hash -> list of (Function, LoweredFunction)
        self._names: dict = {}
        self.lowered: list[LoweredFunction] = []
        # called with each new LoweredFunction (relay.build starts compiling it at once)
        self.on_lowered = None
        self._rewritten: dict = {}  # name -> (variant taking laid-out weights, maps)

    def lower(self, func: Function) -> LoweredFunction:
        key = structural_hash(func)
        for other, lowered in self._cache.get(key, []):
            if structural_equal(other, func):
                return lowered
        base = fused_name(func, self.prefix)
        count = self._names.get(base, 0)
        self._names[base] = count + 1
        name = base if count == 0 else _truncate(f"{base}_{count}")
        lowered = lower_function(func, self.target, name)
        self._cache.setdefault(key, []).append((func, lowered))
        self.lowered.append(lowered)
        if self.on_lowered is not None:
            self.on_lowered(lowered)
        return lowered

    def with_constant_weights(self, lowered):
        """``(variant, {param index: IndexMap})``: ``lowered`` without the copies a tuning
        record's ``RewriteLayout`` put in (``remove_weight_layout_rewrite_block``), taking
        those weights laid out by the maps, for a caller passing them as constants (it
        transforms them once, at build time); ``(None, {})`` when it has no such copy."""
        if lowered.name in self._rewritten:
            return self._rewritten[lowered.name]
        found = None, {}
        if lowered.tuned:  # only tuning records have such copies: TOPI's kernels skip the import
            from irlab.tir.transform.remove_weight_layout_rewrite_block import (
                remove_weight_layout_rewrite_block)

            func, maps = remove_weight_layout_rewrite_block(lowered.prim_func)
            if maps:
                name = _truncate(f"{lowered.name}_weights_laid_out")
                variant = LoweredFunction(name, func.with_attr("global_symbol", name),
                                          lowered.schedule, lowered.relay_func,
                                          lowered.inputs, lowered.outputs, lowered.anchor)
                variant.tir_from_te = lowered.tir_from_te
                variant.tuned = True
                self.lowered.append(variant)
                if self.on_lowered is not None:
                    self.on_lowered(variant)
                found = variant, maps
        self._rewritten[lowered.name] = found
        return found


__all__ = ["lower_function", "fused_name", "TECompiler", "LoweredFunction", "block_of",
           "tuned_prim_func", "TUNED_SCHEDULE_HOOK"]
