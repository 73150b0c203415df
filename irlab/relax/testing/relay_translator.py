"""Relay -> Relax (``tvm.relax.testing.relay_translator.from_relay``).

TVM's translator turned each Relay op into a ``call_tir`` of the op's TOPI compute. irlab's
goes one step further, so that a model reaches the Relax VM with the very kernels
``relay.build`` would run: it runs Relay's optimization pipeline (layout rewrites, constant
folding, ``FuseOps``) and lowers each fused primitive function with LowerTE's ``TECompiler``
(the op strategy's TOPI compute *and schedule*) into one PrimFunc of the Relax module. What
remains of ``@main`` -- calls of fused functions, tuples, projections, constants -- becomes
one dataflow block of ``R.call_tir`` bindings.

    mod, params = relay.testing.MODELS["mlp"]()
    relax_mod = relax.testing.relay_translator.from_relay(mod["main"], "llvm", params)
    ex = relax.build(relax_mod, "llvm")

``opt_level`` is Relay's: 0 keeps one op per PrimFunc (no fusion), 3 is ``relay.build``'s.
Weights bound through ``relay_params`` become Relax constants; unbound parameters stay
parameters of ``main``.
"""

from __future__ import annotations

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.module import IRModule
from irlab.ir.type import TensorType, TupleType
from irlab.relax.block_builder import BlockBuilder
from irlab.relax.expr import Tuple, TupleGetItem, Var, const
from irlab.relax.op.base import call_tir
from irlab.relax.struct_info import TensorStructInfo, TupleStructInfo
from irlab.relay import expr as relay_expr
from irlab.relay.backend.te_compiler import TECompiler
from irlab.relay.function import Function, is_primitive
from irlab.target import as_target
from irlab.transform import PassContext

__all__ = ["from_relay"]


def _struct_info(ty):
    """The Relax struct info of a Relay (tensor or tuple) type."""
    if isinstance(ty, TensorType):
        return TensorStructInfo([int(d) for d in ty.shape], ty.dtype)
    if isinstance(ty, TupleType):
        return TupleStructInfo([_struct_info(f) for f in ty.fields])
    raise IrlabError(f"relay_translator: a value of type {ty} has no Relax counterpart")


def _optimized(func, target, params, opt_level, pass_config, disabled_pass):
    """``@main`` after relay.build's optimization pipeline (FuseOps included)."""
    from irlab.relay.pipeline import optimize

    mod = IRModule.from_expr(func) if isinstance(func, Function) else func
    if not isinstance(mod, IRModule):
        raise IrlabError(f"from_relay takes a Relay Function or IRModule, got "
                         f"{type(func).__name__}")
    with PassContext(opt_level=opt_level, config=pass_config or {},
                     disabled_pass=disabled_pass or []):
        mod, _ = optimize(mod, target, params)
    return mod["main"]


class _Translator:
    """Walks the optimized ``@main`` in post order, emitting one binding per fused call."""

    def __init__(self, bb, compiler):
        self.bb = bb
        self.compiler = compiler
        self.memo = {}
        self.kernels = {}  # lowered name -> GlobalVar in the Relax module

    def value(self, e):
        if e not in self.memo:
            self.memo[e] = self._translate(e)
        return self.memo[e]

    def _translate(self, e):
        if isinstance(e, relay_expr.Constant):
            return const(e.data.numpy() if hasattr(e.data, "numpy") else np.asarray(e.data))
        if isinstance(e, relay_expr.Tuple):
            return self.bb.emit(Tuple([self.value(f) for f in e.fields]))
        if isinstance(e, relay_expr.TupleGetItem):
            return self.bb.emit(TupleGetItem(self.value(e.tuple_value), e.index))
        if isinstance(e, relay_expr.Call) and isinstance(e.op, Function) and is_primitive(e.op):
            return self._fused_call(e)
        raise IrlabError(f"relay_translator: cannot translate {type(e).__name__} in the "
                         f"optimized main function:\n{e}")

    def _fused_call(self, call):
        func = call.op
        if func.get_attr("Compiler") is not None:
            raise IrlabError(f"relay_translator: external function for compiler "
                             f"{func.get_attr('Compiler')!r} (BYOC) is not supported")
        lowered = self.compiler.lower(func)
        gv = self.kernels.get(lowered.name)
        if gv is None:
            gv = self.kernels[lowered.name] = self.bb.add_func(
                lowered.prim_func.with_attr("tir.is_scheduled", True), lowered.name)
        args = []
        for a in call.args:  # a tuple-typed argument is passed field by field
            self._flatten(self.value(a), a.checked_type, args)
        out_ty = call.checked_type
        fields = out_ty.fields if isinstance(out_ty, TupleType) else [out_ty]
        out_sinfo = [_struct_info(f) for f in fields]
        return self.bb.emit(call_tir(gv, args, out_sinfo if len(out_sinfo) > 1
                                     else out_sinfo[0]))

    def _flatten(self, value, ty, out):
        if isinstance(ty, TupleType):
            for i, f in enumerate(ty.fields):
                self._flatten(self.bb.emit(TupleGetItem(value, i)), f, out)
        else:
            out.append(value)


def _inputs(e):
    if isinstance(e, relay_expr.Call):
        return e.args  # the op is a fused Function: its body is the kernel, not a binding
    if isinstance(e, relay_expr.Tuple):
        return e.fields
    if isinstance(e, relay_expr.TupleGetItem):
        return [e.tuple_value]
    return []


def _dataflow_order(body) -> list:
    """The calls, tuples and projections of ``body`` in post order (iterative: a deep
    network must not hit Python's recursion limit)."""
    order, seen, stack = [], set(), [(body, False)]
    while stack:
        e, expanded = stack.pop()
        if expanded:
            order.append(e)
            continue
        if e in seen or not isinstance(e, (relay_expr.Call, relay_expr.Tuple,
                                           relay_expr.TupleGetItem)):
            continue
        seen.add(e)
        stack.append((e, True))
        stack.extend((a, False) for a in reversed(list(_inputs(e))))
    return order


def from_relay(func, target=None, relay_params=None, *, opt_level=3, pass_config=None,
               disabled_pass=None, name="main"):
    """A Relax IRModule computing the Relay function ``func`` (or an IRModule's ``main``).

    Every kernel is the PrimFunc ``relay.build`` would compile for ``target`` (default
    ``"llvm"``), called with ``R.call_tir`` inside one dataflow block of ``main``."""
    target = as_target(target or "llvm")
    params = {k: v for k, v in (relay_params or {}).items()}
    with target:
        main = _optimized(func, target, params, opt_level, pass_config, disabled_pass)
        bb = BlockBuilder()
        relax_params = [Var(p.name_hint, _struct_info(p.checked_type)) for p in main.params]
        translator = _Translator(bb, TECompiler(target))
        for p, rp in zip(main.params, relax_params):
            translator.memo[p] = rp
        with bb.function(name, relax_params):
            with bb.dataflow():
                for e in _dataflow_order(main.body):  # each value once, inputs first
                    translator.value(e)
                out = bb.emit_output(translator.value(main.body))
            bb.emit_func_output(out)
    return bb.get()
