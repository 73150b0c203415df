"""FuseOps: group the ``call_tir``s of each dataflow block by their PrimFuncs' ``op_pattern``
(``AnnotateTIROpPattern``) and move each group into a private Relax function marked
``Primitive`` (``FuseTIR`` then merges its PrimFuncs into one)::

    lv = R.call_tir(cls.matmul, (x, w))        gv = cls.fused_matmul_add_relu(x, w, b)
    lv1 = R.call_tir(cls.add, (lv, b))   =>    # @R.function(private) fused_matmul_add_relu:
    gv = R.call_tir(cls.relu, (lv1,))          #   the three call_tirs, attrs {"Primitive": 1}

Grouping is TVM's, by the post-dominator partitioner Relay's FuseOps uses
(``irlab.relay.transform.graph_partitioner``): a node joins its immediate post-dominator's
group when the path allows it (an ``OUT_ELEMWISE_FUSABLE`` anchor such as matmul / conv takes
its elementwise tail, elementwise / broadcast / injective nodes fuse into injective consumers
and reductions), so diamonds fuse too. A value used after its block is a group's output, and
each group keeps one output, a tensor or a tuple of tensors such as ``batch_norm``'s (else
its bindings stay as they are).
"""

from __future__ import annotations

from irlab.ir.op import Op, OpPattern
from irlab.ir.structural import structural_equal
from irlab.relax import expr as rx
from irlab.relax.block_builder import BlockBuilder
from irlab.relax.expr_functor import ExprVisitor
from irlab.relax.struct_info import TensorStructInfo, TupleStructInfo
from irlab.relay.transform.graph_partitioner import (Edge, FusionError, GraphNode,
                                                    GraphPartitioner, IndexedForwardGraph)
from irlab.tir.function import PrimFunc
from irlab.tir.transform.force_narrow_index import can_narrow
from irlab.transform import module_pass

__all__ = ["FuseOps"]


class _UseCount(ExprVisitor):
    """How many times each variable is used in a function."""

    def __init__(self):
        self.count: dict = {}

    def visit_var_(self, var):
        self.count[var] = self.count.get(var, 0) + 1


def _is_call_tir(value) -> bool:
    return isinstance(value, rx.Call) and isinstance(value.op, Op) and \
        value.op.name == "relax.call_tir"


def _pattern(binding, mod, unfusable):
    """The fusion pattern of a binding: its PrimFunc's for a call_tir, ELEMWISE for a field
    of a tuple variable (``batch_norm(...)[0]`` reads each element of the field once: so
    conv2d + batch_norm + relu fuse, where TVM's INJECTIVE stops at the tuple), else
    OPAQUE."""
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
    if value.args[0].name_hint in unfusable:
        return OpPattern.OPAQUE
    return OpPattern(int(attrs["op_pattern"]))


def _args(binding) -> list:
    """The values a fusable binding reads."""
    value = binding.value
    if isinstance(value, rx.TupleGetItem):
        return [value.tuple_value]
    return list(value.args[1].fields)


def _is_output(var) -> bool:
    """Whether a group may end in ``var``: a tensor, or a tuple of tensors (``batch_norm``'s
    result: the fused PrimFunc then has one output buffer per field)."""
    sinfo = var.struct_info_
    if isinstance(sinfo, TupleStructInfo):
        return all(isinstance(f, TensorStructInfo) for f in sinfo.fields)
    return isinstance(sinfo, TensorStructInfo)


class _Group:
    """The bindings of one fused function, in block order (the last one is the root)."""

    def __init__(self, members):
        self.members = members


def _read_vars(binding) -> list:
    """Every variable a binding reads (fusable or not), with repeats."""
    found = []
    stack = [binding.value]
    while stack:
        expr = stack.pop()
        if isinstance(expr, rx.Var):
            found.append(expr)
        elif isinstance(expr, rx.Call):
            stack.extend(expr.args)
        elif isinstance(expr, rx.Tuple):
            stack.extend(expr.fields)
        elif isinstance(expr, rx.TupleGetItem):
            stack.append(expr.tuple_value)
    return found


def _edge_pattern(pattern, var, consumer):
    """How ``consumer`` reads ``var``: its pattern, except that a broadcast reading a value of
    its own output shape (of one of its outputs, for a tuple) reads it elementwise (so
    matmul + bias-add fuse, as in Relay, and conv2d + batch_norm)."""
    if pattern != OpPattern.BROADCAST:
        return pattern
    a, out = var.struct_info_, consumer.var.struct_info_
    outs = out.fields if isinstance(out, TupleStructInfo) else [out]
    if isinstance(a, TensorStructInfo) and a.dims is not None and any(
            isinstance(b, TensorStructInfo) and b.dims is not None
            and structural_equal(a.dims, b.dims) for b in outs):
        return OpPattern.ELEMWISE
    return pattern


def _forward_graph(block, mod, uses, unfusable):
    """The block's bindings as the indexed forward graph of Relay's partitioner (TVM's
    FuseOps shares it): an edge per use inside the block, labelled with the consumer's
    pattern; a value used after the block is extern (no post-dominator)."""
    graph = IndexedForwardGraph()
    node_of = {}
    for index, binding in enumerate(block.bindings):
        node = GraphNode()
        node.ref, node.index, node.pattern = binding, index, _pattern(binding, mod, unfusable)
        graph.node_map[binding] = node
        graph.post_dfs_order.append(node)
        node_of[binding.var] = node
    inner_uses: dict = {}
    for binding in block.bindings:
        node = node_of[binding.var]
        for var in _read_vars(binding):
            producer = node_of.get(var)
            if producer is not None:
                producer.outputs.append(Edge(node, _edge_pattern(node.pattern, var, binding)))
                inner_uses[var] = inner_uses.get(var, 0) + 1
    for var, node in node_of.items():
        if uses.get(var, 0) != inner_uses.get(var, 0) or not isinstance(var, rx.DataflowVar):
            node.extern_ref = True
    return graph


def _groups(block, mod, uses, opt_level, unfusable) -> list:
    """The groups of a dataflow block, in the order of their roots."""
    graph = _forward_graph(block, mod, uses, unfusable)
    try:
        partition = GraphPartitioner(opt_level).partition(graph)
    except FusionError:  # a state the partitioner refuses: no fusion in this block
        partition = GraphPartitioner(0).partition(graph)
    members: dict = {}
    for node, group in zip(graph.post_dfs_order, partition):
        members.setdefault(id(group.find_root()), []).append(node.ref)
    by_root = {id(ms[-1]): _Group(ms) for ms in members.values()}
    out = []
    for binding in block.bindings:
        group = by_root.get(id(binding))
        if group is not None:
            out.extend(_checked(group, uses))
    return out


def _checked(group, uses) -> list:
    """``[group]`` when it can become one function (call_tirs and fields of its own tuples,
    only the root used outside, the root a tensor or a tuple of them), else one group per
    member."""
    members = group.members
    if len(members) == 1:
        return [group]
    inside = {m.var for m in members}
    ok = _is_output(members[-1].var)
    for m in members:
        value = m.value
        if isinstance(value, rx.TupleGetItem):
            ok = ok and value.tuple_value in inside
        else:
            ok = ok and _is_call_tir(value)
    if ok:
        count: dict = {}
        for m in members:
            for var in _read_vars(m):
                count[var] = count.get(var, 0) + 1
        ok = all(uses.get(m.var, 0) == count.get(m.var, 0) for m in members[:-1])
    return [group] if ok else [_Group([m]) for m in members]


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


def _fuse_function(func, bb, mod, opt_level, unfusable):
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
        for group in _groups(block, mod, uses.count, opt_level, unfusable):
            if len(group.members) == 1:
                bindings.extend(group.members)
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


def FuseOps(fuse_opt_level=-1):  # noqa: N802 (TVM's name)
    """The pass grouping fusable call_tirs into Primitive functions (``fuse_opt_level``
    -1: the PassContext's opt_level; 0: no fusion)."""

    def transform(mod, ctx):
        opt_level = ctx.opt_level if fuse_opt_level == -1 else fuse_opt_level
        bb = BlockBuilder(mod)
        # PrimFuncs indexing in int64 with int64 data: FuseTIR cannot narrow them to int32
        unfusable = {gv.name_hint for gv, f in mod.items()
                     if isinstance(f, PrimFunc) and not can_narrow(f)}
        for gv, func in mod.items():
            if isinstance(func, rx.Function) and not rx.is_primitive(func):
                bb.update_func(gv, _fuse_function(func, bb, mod, opt_level,
                                                     unfusable))
        return bb.get()

    return module_pass(transform, opt_level=0, name="FuseOps")

