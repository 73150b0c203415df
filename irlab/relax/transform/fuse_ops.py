"""FuseOps: group the ``call_tir``s of each dataflow block by their PrimFuncs' ``op_pattern``
(``AnnotateTIROpPattern``) and move each group into a private Relax function marked
``Primitive`` (``FuseTIR`` then merges its PrimFuncs into one)::

    lv = R.call_tir(cls.matmul, (x, w))        gv = cls.fused_matmul_add_relu(x, w, b)
    lv1 = R.call_tir(cls.add, (lv, b))   =>    # @R.function(private) fused_matmul_add_relu:
    gv = R.call_tir(cls.relu, (lv1,))          #   the three call_tirs, attrs {"Primitive": 1}

Rules (TVM's, on a tree of single-use values): elementwise / broadcast / injective producers
fuse into injective consumers and into a reduction; an ``OUT_ELEMWISE_FUSABLE`` (matmul,
conv) or ``COMM_REDUCE`` anchor absorbs its elementwise / broadcast consumers; a group has at
most one anchor. A value used more than once, or outside its block, ends a group, so each
group has one output.
"""

from __future__ import annotations

from irlab.ir.op import Op, OpPattern
from irlab.relax import expr as rx
from irlab.relax.block_builder import BlockBuilder
from irlab.relax.expr_functor import ExprVisitor
from irlab.relax.struct_info import TensorStructInfo
from irlab.transform import module_pass

__all__ = ["FuseOps"]

_ANCHORS = (OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.COMM_REDUCE)


class _UseCount(ExprVisitor):
    def __init__(self):
        self.count: dict = {}

    def visit_var_(self, var):
        self.count[var] = self.count.get(var, 0) + 1


def _is_call_tir(value) -> bool:
    return isinstance(value, rx.Call) and isinstance(value.op, Op) and \
        value.op.name == "relax.call_tir"


def _pattern(binding, mod):
    """The fusion pattern of a binding: its PrimFunc's for a call_tir, ELEMWISE for a field
    of a tuple variable (``batch_norm(...)[0]``: no computation), else OPAQUE."""
    value = binding.value
    if not isinstance(binding, rx.VarBinding):
        return OpPattern.OPAQUE
    if isinstance(value, rx.TupleGetItem) and isinstance(value.tuple_value, rx.Var):
        return OpPattern.ELEMWISE
    if not _is_call_tir(value):
        return OpPattern.OPAQUE
    func = mod[value.args[0]]
    attrs = func.attrs
    if attrs is None or "op_pattern" not in attrs.keys():
        return OpPattern.OPAQUE
    return OpPattern(int(attrs["op_pattern"]))


def _args(binding) -> list:
    """The values a fusable binding reads."""
    value = binding.value
    if isinstance(value, rx.TupleGetItem):
        return [value.tuple_value]
    return list(value.args[1].fields)


def _is_tensor(var) -> bool:
    return isinstance(var.struct_info_, TensorStructInfo)


class _Group:
    def __init__(self, binding, pattern):
        self.members = [binding]
        self.pattern = pattern
        self.anchor = pattern in _ANCHORS


def _can_fuse(producer: _Group, consumer: _Group, consumer_pattern) -> bool:
    if producer.anchor and consumer.anchor:
        return False
    if producer.pattern == OpPattern.OPAQUE or consumer_pattern == OpPattern.OPAQUE:
        return False
    if producer.pattern <= OpPattern.INJECTIVE:
        # into injective consumers and into a reduction (not into a matmul / conv anchor)
        return consumer_pattern <= OpPattern.INJECTIVE or \
            consumer_pattern == OpPattern.COMM_REDUCE
    if producer.anchor:
        return consumer_pattern <= OpPattern.BROADCAST and not consumer.anchor
    return False


def _groups(block, mod, uses) -> list:
    """The groups of a dataflow block, in the order of their roots."""
    group_of: dict = {}  # var -> _Group
    for binding in block.bindings:
        pattern = _pattern(binding, mod)
        group = _Group(binding, pattern)
        group_of[binding.var] = group
        if pattern == OpPattern.OPAQUE:
            continue
        for arg in _args(binding):
            producer = group_of.get(arg)
            if producer is None or producer is group or uses.get(arg, 0) != 1:
                continue
            if producer.members[-1].var is not arg:  # arg must be the producer's root
                continue
            if not _can_fuse(producer, group, pattern):
                continue
            group.members = producer.members + group.members
            group.pattern = max(group.pattern, producer.pattern)
            group.anchor = group.anchor or producer.anchor
            for m in producer.members:
                group_of[m.var] = group
        if isinstance(binding.value, rx.TupleGetItem) and len(group.members) == 1:
            group.pattern = OpPattern.OPAQUE  # a field of an outside tuple: not fusable
    # at the position of its root: the inputs of every member are defined by then
    return [group_of[b.var] for b in block.bindings if group_of[b.var].members[-1] is b]


def _inputs(group) -> list:
    defined = {m.var for m in group.members}
    found = []
    for m in group.members:
        for arg in _args(m):
            if isinstance(arg, (rx.Var, rx.Constant)) and arg not in defined \
                    and not any(arg is f for f in found):
                found.append(arg)  # constants too: the fused PrimFunc takes them as buffers
    return found


def _fused_function(group, inputs, mod):
    """The Primitive relax function of ``group`` (params for its inputs)."""
    params = [rx.Var(v.name_hint if isinstance(v, rx.Var) else f"c{k}", v.struct_info)
              for k, v in enumerate(inputs)]
    remap = {id(v): p for v, p in zip(inputs, params)}
    bb = BlockBuilder(mod)
    with bb.function("fused", params, attrs={"Primitive": 1}, private=True):
        with bb.dataflow():
            for k, m in enumerate(group.members):
                call = m.value
                if isinstance(call, rx.TupleGetItem):
                    new = rx.TupleGetItem(remap[id(call.tuple_value)], call.index)
                else:
                    args = [remap.get(id(a), a) for a in call.args[1].fields]
                    new = rx.Call(call.op, [call.args[0], rx.Tuple(args), *call.args[2:]],
                                  call.attrs, call.sinfo_args, call.span)
                if k == len(group.members) - 1:
                    out = bb.emit_output(new, m.var.name_hint)
                else:
                    remap[id(m.var)] = bb.emit(new, m.var.name_hint)
        bb.emit_func_output(out)
    return bb.get()["fused"]


def _fused_name(group) -> str:
    return "fused_" + "_".join(m.value.args[0].name_hint for m in group.members
                               if _is_call_tir(m.value))


def _fuse_function(func, bb, mod):
    uses = _UseCount()
    uses.visit_expr(func)
    if not isinstance(func.body, rx.SeqExpr):
        return func
    blocks, changed = [], False
    for block in func.body.blocks:
        if not isinstance(block, rx.DataflowBlock):
            blocks.append(block)
            continue
        bindings = []
        for group in _groups(block, mod, uses.count):
            if len(group.members) == 1 or not _is_tensor(group.members[-1].var):
                bindings.extend(group.members)  # one output tensor per fused function
                continue
            changed = True
            inputs = _inputs(group)
            gv = bb.add_func(_fused_function(group, inputs, mod), _fused_name(group))
            root = group.members[-1]
            bindings.append(rx.VarBinding(root.var, rx.Call(gv, inputs), root.span))
        blocks.append(rx.DataflowBlock(bindings, block.span))
    if not changed:
        return func
    new = rx.Function(func.params, rx.SeqExpr(blocks, func.body.body), func.ret_struct_info,
                      func.is_pure, func.attrs, func.span)
    return bb.normalize(new)


def _is_primitive(func) -> bool:
    return func.attrs is not None and "Primitive" in func.attrs.keys()


def FuseOps(fuse_opt_level=-1):  # noqa: N802 (TVM's name)
    """The pass grouping fusable call_tirs into Primitive functions."""

    def transform(mod, ctx):
        bb = BlockBuilder(mod)
        for gv, func in mod.items():
            if isinstance(func, rx.Function) and not _is_primitive(func):
                bb.update_func(gv, _fuse_function(func, bb, mod))
        return bb.get()

    return module_pass(transform, opt_level=0, name="FuseOps")

