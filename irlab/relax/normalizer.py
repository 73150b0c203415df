"""Normalization of Relax expressions: A-normal form and struct-info deduction.

In normal form a call's arguments, a tuple's fields, ``If``'s condition are *leaves*
(variables, constants, shapes, prim values, strings, global names, tuples of leaves); a
function body and ``If`` branches are ``SeqExpr``s. A non-leaf argument met inside a block is
bound to a fresh variable of that block. Each expression gets its struct info: ops through their
``FInferStructInfo`` rule, calls of functions through the callee's ``FuncStructInfo`` (symbolic
dims of the parameters bound to the arguments' dims).
"""

from __future__ import annotations

from irlab.arith import Analyzer
from irlab.errors import DiagnosticError
from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.relax import expr as rx
from irlab.relax.expr_dispatch import method_of
from irlab.relax.op.registry import INFER_STRUCT_INFO
from irlab.relax.struct_info import (FuncStructInfo, ObjectStructInfo, PrimStructInfo,
                                     ShapeStructInfo, TensorStructInfo, TupleStructInfo,
                                     erase_to_well_defined, struct_info_lca)
from irlab.tir import expr as tir_expr
from irlab.tir.function import PrimFunc
from irlab.tir.functor import substitute

_LEAVES = (rx.Var, GlobalVar, Op, rx.Constant, rx.ShapeExpr, rx.PrimValue, rx.StringImm,
           rx.DataTypeImm, rx.ExternFunc)


def is_leaf(expr) -> bool:
    """True for expressions that may appear as call arguments in normal form."""
    if isinstance(expr, rx.Tuple):
        return all(is_leaf(f) for f in expr.fields)
    return isinstance(expr, _LEAVES)


class BlockFrame:
    """A binding block being built."""

    def __init__(self, is_dataflow):
        self.is_dataflow = is_dataflow
        self.bindings: list = []

    def finish(self):
        cls = rx.DataflowBlock if self.is_dataflow else rx.BindingBlock
        return cls(self.bindings)


class BuilderScope:
    """A function body (or SeqExpr) being built: its finished blocks and the open one."""

    def __init__(self):
        self.blocks: list = []
        self.frame: BlockFrame | None = None

    def end_frame(self):
        """Close the open block; keep it if it has bindings; return it (or None)."""
        if self.frame is None:
            return None
        block = self.frame.finish()
        if block.bindings:
            self.blocks.append(block)
        self.frame = None
        return block


class Normalizer:
    """Normalizes expressions for a ``BlockBuilder`` (whose open block receives the bindings
    that A-normal form requires)."""

    def __init__(self, builder):
        self.bb = builder
        self.remap: dict = {}  # Var -> Var re-created with its deduced struct info

    # -- entry points -----------------------------------------------------------------------
    def normalize(self, expr):
        if isinstance(expr, (list, tuple)):
            expr = rx.Tuple(expr)
        return method_of(type(self), expr, "normalize")(self, expr)

    def normalize_argument(self, expr):
        """``expr`` normalized and, unless a leaf, bound in the open block (when there is
        one)."""
        value = self.normalize(expr)
        if is_leaf(value) or not self.bb.in_block():
            return value
        return self.bb.emit(value)

    # -- leaves ---------------------------------------------------------------------------
    def visit_var_(self, var):
        var = self.remap.get(var, var)
        if var.struct_info_ is None:
            raise DiagnosticError(f"variable {var.name_hint!r} has no struct info", var)
        return var

    visit_dataflow_var_ = visit_var_

    def _leaf(self, expr):
        return expr

    visit_constant_ = visit_shape_expr_ = visit_extern_func_ = visit_global_var_ = _leaf
    visit_op_ = visit_prim_value_ = visit_string_imm_ = visit_data_type_imm_ = _leaf

    # -- compound expressions -------------------------------------------------------------
    def visit_tuple_(self, tup):
        fields = [self.normalize_argument(f) for f in tup.fields]
        if any(a is not b for a, b in zip(fields, tup.fields)):
            tup = rx.Tuple(fields, tup.span)
        tup._set_struct_info(TupleStructInfo([f.struct_info for f in fields]))
        return tup

    def visit_tuple_getitem_(self, item):
        value = self.normalize_argument(item.tuple_value)
        if value is not item.tuple_value:
            item = rx.TupleGetItem(value, item.index, item.span)
        sinfo = value.struct_info
        if isinstance(sinfo, TupleStructInfo):
            if item.index >= len(sinfo.fields):
                raise DiagnosticError(f"tuple index {item.index} out of range: the tuple has "
                                      f"{len(sinfo.fields)} fields", item)
            item._set_struct_info(sinfo.fields[item.index])
        elif isinstance(sinfo, ObjectStructInfo):
            item._set_struct_info(ObjectStructInfo())
        else:
            raise DiagnosticError(f"TupleGetItem of a non-tuple ({sinfo})", item)
        return item

    def visit_call_(self, call):
        op = call.op if isinstance(call.op, (Op, GlobalVar)) else \
            self.normalize_argument(call.op)
        args = [self.normalize_argument(a) for a in call.args]
        if op is not call.op or any(a is not b for a, b in zip(args, call.args)):
            call = rx.Call(op, args, call.attrs, call.sinfo_args, call.span)
        elif call.struct_info_ is not None:
            return call  # deduced before from these very arguments
        call._set_struct_info(self.infer_call(call))
        return call

    def visit_if_(self, node):
        cond = self.normalize_argument(node.cond)
        then = self.normalize_seq(node.true_branch)
        other = self.normalize_seq(node.false_branch)
        if (cond, then, other) != (node.cond, node.true_branch, node.false_branch):
            node = rx.If(cond, then, other, node.span)
        node._set_struct_info(struct_info_lca(then.struct_info, other.struct_info))
        return node

    def visit_seq_expr_(self, seq):
        return self.normalize_seq(seq)

    def visit_function_(self, func):
        for p in func.params:
            if p.struct_info_ is None:
                raise DiagnosticError(f"parameter {p.name_hint!r} of a function has no "
                                      f"struct info", p)
        body = self.normalize_seq(func.body)
        ret = func.ret_struct_info
        if ret is None:  # symbolic dims defined inside the body are out of scope outside
            defined = [v for p in func.params for v in rx.symbolic_vars(p.struct_info_)]
            ret = erase_to_well_defined(body.struct_info, defined)
        if body is not func.body or ret is not func.ret_struct_info:
            func = rx.Function(func.params, body, ret, func.is_pure, func.attrs, func.span)
        func._set_struct_info(FuncStructInfo([p.struct_info for p in func.params], ret,
                                             func.is_pure))
        return func

    # -- sequences ------------------------------------------------------------------------
    def normalize_seq(self, expr):
        """``expr`` as a normalized ``SeqExpr`` (its blocks re-normalized in a new scope)."""
        bb = self.bb
        scope = BuilderScope()
        bb.scopes.append(scope)
        try:
            blocks = expr.blocks if isinstance(expr, rx.SeqExpr) else ()
            for block in blocks:  # adjacent blocks of one kind merge (as TVM's normalizer)
                is_dataflow = isinstance(block, rx.DataflowBlock)
                if scope.frame is None or scope.frame.is_dataflow != is_dataflow:
                    scope.end_frame()
                    scope.frame = BlockFrame(is_dataflow)
                for binding in block.bindings:
                    self.visit_binding(binding)
            if scope.frame is None or scope.frame.is_dataflow:
                scope.end_frame()
                scope.frame = BlockFrame(False)
            body = self.normalize_argument(expr.body if isinstance(expr, rx.SeqExpr) else expr)
            scope.end_frame()
        finally:
            bb.scopes.pop()
        new_blocks = scope.blocks
        if isinstance(expr, rx.SeqExpr) and body is expr.body and _same_blocks(new_blocks,
                                                                              expr.blocks):
            seq = expr
        else:
            seq = rx.SeqExpr(new_blocks, body, getattr(expr, "span", None))
        seq._set_struct_info(body.struct_info)
        return seq

    def visit_binding(self, binding):
        frame = self.bb.scopes[-1].frame
        if isinstance(binding, rx.MatchCast):
            value = self.normalize_argument(binding.value)
            if value is not binding.value:
                binding = rx.MatchCast(binding.var, value, binding.struct_info, binding.span)
            self.bb.append_binding(frame, binding)
            return
        value = self.normalize(binding.value)
        var = binding.var
        if var.struct_info_ is None:
            new_var = type(var)(var.name_hint, value.struct_info, var.span)
            self.remap[var] = new_var
            var = new_var
        if var is not binding.var or value is not binding.value:
            binding = rx.VarBinding(var, value, binding.span)
        self.bb.append_binding(frame, binding)

    # -- struct info of calls -------------------------------------------------------------
    def infer_call(self, call):
        op = call.op
        if isinstance(op, Op):
            infer = op.get_attr(INFER_STRUCT_INFO)
            if infer is None:
                raise DiagnosticError(f"operator {op.name} has no struct-info rule "
                                      f"(FInferStructInfo); is it a Relax op?", call)
            return infer(call, self.bb)
        func_sinfo = self.callee_struct_info(op, call)
        return derive_call_ret(func_sinfo, call)

    def callee_struct_info(self, op, call):
        if isinstance(op, GlobalVar):
            mod = self.bb.module
            if op not in mod:
                raise DiagnosticError(f"call of @{op.name_hint}, which is not in the module",
                                      call)
            func = mod[op]
            if isinstance(func, rx.Function):
                return func.struct_info_ or self.normalize(func).struct_info
            if isinstance(func, PrimFunc):  # lowered code calls PrimFuncs in DPS style
                return FuncStructInfo.opaque_func(ret=TupleStructInfo([]), purity=False)
            raise DiagnosticError(f"@{op.name_hint} is a {type(func).__name__}: call it with "
                                  f"R.call_tir", call)
        sinfo = op.struct_info
        if not isinstance(sinfo, FuncStructInfo):
            raise DiagnosticError(f"call of a non-function value ({sinfo})", call)
        return sinfo


def _same_blocks(new, old) -> bool:
    return len(new) == len(old) and all(
        type(a) is type(b) and len(a.bindings) == len(b.bindings)
        and all(x is y for x, y in zip(a.bindings, b.bindings)) for a, b in zip(new, old))


# -- calls of functions with symbolic parameters --------------------------------------------
def derive_call_ret(func_sinfo, call):
    """The struct info of ``call`` from its callee's: symbolic dims of the parameters are bound
    to the arguments' and substituted into the return struct info."""
    if func_sinfo.is_opaque:
        if func_sinfo.derive_func is not None:
            return func_sinfo.derive_func(call)
        if call.sinfo_args:
            return call.sinfo_args[0] if len(call.sinfo_args) == 1 \
                else TupleStructInfo(call.sinfo_args)
        return func_sinfo.ret
    if len(func_sinfo.params) != len(call.args):
        raise DiagnosticError(f"the callee takes {len(func_sinfo.params)} arguments, the call "
                              f"gives {len(call.args)}", call)
    mapping: dict = {}
    for param, arg in zip(func_sinfo.params, call.args):
        bind_symbols(param, arg.struct_info, mapping)
    return substitute_struct_info(func_sinfo.ret, mapping) if mapping else func_sinfo.ret


def bind_symbols(param, arg, mapping):
    """Bind the bare symbolic dims of ``param`` to ``arg``'s dims (first binding wins)."""
    if isinstance(param, TensorStructInfo) and isinstance(arg, TensorStructInfo):
        _bind_dims(param.dims, arg.dims, mapping)
    elif isinstance(param, ShapeStructInfo) and isinstance(arg, ShapeStructInfo):
        _bind_dims(param.values, arg.values, mapping)
    elif isinstance(param, PrimStructInfo) and isinstance(arg, PrimStructInfo):
        _bind_dims((param.value,) if param.value is not None else None,
                   (arg.value,) if arg.value is not None else None, mapping)
    elif isinstance(param, TupleStructInfo) and isinstance(arg, TupleStructInfo):
        for p, a in zip(param.fields, arg.fields):
            bind_symbols(p, a, mapping)


def _bind_dims(params, args, mapping):
    if params is None or args is None or len(params) != len(args):
        return
    for p, a in zip(params, args):
        if isinstance(p, tir_expr.Var) and p not in mapping:
            mapping[p] = a


def substitute_struct_info(sinfo, mapping):
    """``sinfo`` with symbolic vars replaced (dims simplified)."""
    analyzer = Analyzer()

    def dim(d):
        return analyzer.simplify(substitute(d, mapping))

    if isinstance(sinfo, TensorStructInfo):
        if sinfo.dims is None:
            return sinfo
        return TensorStructInfo([dim(d) for d in sinfo.dims], sinfo.dtype)
    if isinstance(sinfo, ShapeStructInfo):
        if sinfo.values is None:
            return sinfo
        return ShapeStructInfo([dim(d) for d in sinfo.values])
    if isinstance(sinfo, PrimStructInfo):
        return sinfo if sinfo.value is None else PrimStructInfo(sinfo.dtype, dim(sinfo.value))
    if isinstance(sinfo, TupleStructInfo):
        return TupleStructInfo([substitute_struct_info(f, mapping) for f in sinfo.fields])
    if isinstance(sinfo, FuncStructInfo) and sinfo.params is not None:
        return FuncStructInfo([substitute_struct_info(p, mapping) for p in sinfo.params],
                              substitute_struct_info(sinfo.ret, mapping), sinfo.purity)
    return sinfo
