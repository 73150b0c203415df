"""A small reference evaluator of Relax functions on numpy arrays (for tests; the VM is the
real executor).

Relax ops are evaluated through their legalization; ``call_tir`` builds the PrimFunc with
``tvm.build`` (LLVM, cached per PrimFunc) and runs it on freshly allocated outputs whose
shapes come from the struct info, symbolic dims bound from the arguments' shapes and
``match_cast``s. Packed calls look the function up in the global registry.
"""

from __future__ import annotations

import numpy as np

from irlab.arith import Analyzer
from irlab.errors import IrlabError
from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.relax import expr as rx
from irlab.relax.op.registry import call_packed_name
from irlab.relax.struct_info import (PrimStructInfo, ShapeStructInfo, TensorStructInfo,
                                     TupleStructInfo)
from irlab.runtime.ndarray import NDArray
from irlab.runtime.ndarray import array as nd_array
from irlab.runtime.registry import get_global_func
from irlab.tir import expr as tir_expr
from irlab.tir.functor import substitute

__all__ = ["evaluate", "Evaluator"]

_BUILT: dict = {}  # id(PrimFunc) -> (PrimFunc, runtime module)


def _build(name, prim_func):
    from irlab.build_module import build

    hit = _BUILT.get(id(prim_func))
    if hit is not None and hit[0] is prim_func:
        return hit[1]
    lib = build(prim_func.with_attr("global_symbol", name), target="llvm")
    _BUILT[id(prim_func)] = (prim_func, lib)
    return lib


class Evaluator:
    """Evaluates the functions of one module."""

    def __init__(self, mod):
        self.mod = mod

    def call_function(self, func, args):
        env: dict = {}
        symbols: dict = {}
        for param, value in zip(func.params, args):
            self.match(param.struct_info, value, symbols, f"parameter {param.name_hint}")
            env[param] = value
        return self.eval(func.body, env, symbols)

    # -- matching struct info against values (binds symbolic dims) -------------------------
    def match(self, sinfo, value, symbols, what):
        if isinstance(sinfo, TensorStructInfo):
            array = np.asarray(value)
            if sinfo.ndim not in (-1, array.ndim):
                raise IrlabError(f"{what}: expected {sinfo.ndim} dims, got shape {array.shape}")
            if sinfo.dims is not None:
                self.match_dims(sinfo.dims, array.shape, symbols, what)
        elif isinstance(sinfo, ShapeStructInfo) and sinfo.values is not None:
            self.match_dims(sinfo.values, tuple(value), symbols, what)
        elif isinstance(sinfo, PrimStructInfo) and sinfo.value is not None:
            self.match_dims([sinfo.value], (int(value),), symbols, what)
        elif isinstance(sinfo, TupleStructInfo):
            for i, (field, item) in enumerate(zip(sinfo.fields, value)):
                self.match(field, item, symbols, f"{what}[{i}]")

    def match_dims(self, dims, shape, symbols, what):
        for k, (dim, actual) in enumerate(zip(dims, shape)):
            if isinstance(dim, tir_expr.Var) and dim not in symbols:
                symbols[dim] = int(actual)
                continue
            expected = self.dim(dim, symbols)
            if expected != int(actual):
                raise IrlabError(f"{what}: dim {k} is {actual}, expected {dim} = {expected}")

    @staticmethod
    def dim(expr, symbols) -> int:
        value = Analyzer().simplify(substitute(expr, lambda v: tir_expr.IntImm(
            v.dtype, symbols[v]) if v in symbols else None))
        if not isinstance(value, tir_expr.IntImm):
            raise IrlabError(f"cannot evaluate symbolic dim {expr} (unbound variables)")
        return value.value

    # -- expressions ------------------------------------------------------------------------
    def eval(self, expr, env, symbols):
        if isinstance(expr, rx.Var):
            if expr not in env:
                raise IrlabError(f"unbound variable {expr.name_hint}")
            return env[expr]
        if isinstance(expr, rx.Constant):
            return expr.data.numpy()
        if isinstance(expr, rx.Tuple):
            return tuple(self.eval(f, env, symbols) for f in expr.fields)
        if isinstance(expr, rx.TupleGetItem):
            return self.eval(expr.tuple_value, env, symbols)[expr.index]
        if isinstance(expr, rx.ShapeExpr):
            return tuple(self.dim(v, symbols) for v in expr.values)
        if isinstance(expr, rx.PrimValue):
            return self.dim(expr.value, symbols) if expr.value.dtype.startswith("int") \
                else float(expr.value.value)
        if isinstance(expr, rx.StringImm):
            return expr.value
        if isinstance(expr, rx.SeqExpr):
            for block in expr.blocks:
                for binding in block.bindings:
                    self.bind(binding, env, symbols)
            return self.eval(expr.body, env, symbols)
        if isinstance(expr, rx.If):
            branch = expr.true_branch if bool(np.asarray(self.eval(expr.cond, env, symbols))) \
                else expr.false_branch
            return self.eval(branch, dict(env), dict(symbols))
        if isinstance(expr, rx.Call):
            return self.call(expr, env, symbols)
        if isinstance(expr, (GlobalVar, rx.Function, rx.ExternFunc)):
            return expr
        raise IrlabError(f"the evaluator cannot evaluate a {type(expr).__name__}")

    def bind(self, binding, env, symbols):
        value = self.eval(binding.value, env, symbols)
        if isinstance(binding, rx.MatchCast):
            self.match(binding.struct_info, value, symbols, f"match_cast {binding.var.name_hint}")
        env[binding.var] = value

    def call(self, call, env, symbols):
        op = call.op
        if isinstance(op, Op):
            if op.name == "relax.call_tir":
                return self.call_tir(call, env, symbols)
            if op.name == "relax.call_pure_packed":
                func = get_global_func(call.args[0].global_symbol)
                return _from_nd(func(*[_to_nd(self.eval(a, env, symbols))
                                       for a in call.args[1:]]))
            if op.name == "relax.call_dps_packed":
                return self.call_dps_packed(call, env, symbols)
            if op.name == "relax.shape_of":  # not legalized when the rank is unknown
                return tuple(np.asarray(self.eval(call.args[0], env, symbols)).shape)
            if call_packed_name(op) is not None:  # runs as a packed function (FCallPacked)
                func = get_global_func(call_packed_name(op))
                return _from_nd(func(*[_to_nd(self.eval(a, env, symbols)) for a in call.args]))
            return self.call_op(call, env, symbols)
        if isinstance(op, rx.ExternFunc):
            func = get_global_func(op.global_symbol)
            return _from_nd(func(*[_to_nd(self.eval(a, env, symbols)) for a in call.args]))
        callee = self.mod[op] if isinstance(op, GlobalVar) else self.eval(op, env, symbols)
        if isinstance(callee, GlobalVar):
            callee = self.mod[callee]
        args = [self.eval(a, env, symbols) for a in call.args]
        return self.call_function(callee, args)

    def call_op(self, call, env, symbols):
        """A high-level op: legalize it on the fly and evaluate the result."""
        from irlab.relax.block_builder import BlockBuilder
        from irlab.relax.transform.legalize_ops import legalize_call

        bb = BlockBuilder(self.mod)
        args = [rx.Var(f"a{i}", a.struct_info) for i, a in enumerate(call.args)]
        inner = dict(env)
        for var, arg in zip(args, call.args):
            inner[var] = self.eval(arg, env, symbols)
        with bb.function("eval_op", args, private=True):
            op_call = bb.normalize(rx.Call(call.op, args, call.attrs, call.sinfo_args))
            lowered = legalize_call(bb, op_call)
            if lowered is op_call:  # evaluating it would legalize it again, forever
                raise IrlabError(f"the evaluator cannot evaluate {call.op.name} here: it has "
                                 f"no legalization for arguments {[a.struct_info for a in args]}")
            out = bb.emit(lowered)
            bb.emit_func_output(out)
        mod = bb.get()
        func = mod["eval_op"]
        return Evaluator(mod).eval(func.body, inner, dict(symbols))

    def outputs(self, call, env, symbols):
        """Zeroed arrays for the outputs of a destination-passing call (a shape held by a
        variable, ``R.Tensor(lv3, ...)``, is that variable's value)."""
        out_sinfo = call.sinfo_args[0]
        outs = out_sinfo.fields if isinstance(out_sinfo, TupleStructInfo) else [out_sinfo]
        return [np.zeros([self.dim(d, symbols) for d in s.dims] if s.dims is not None else
                         [int(d) for d in self.eval(s.shape, env, symbols)], s.dtype)
                for s in outs]

    def call_dps_packed(self, call, env, symbols):
        func = get_global_func(call.args[0].global_symbol)
        inputs = [_to_nd(np.asarray(self.eval(a, env, symbols), order="C"))
                  for a in call.args[1].fields]
        nds = [nd_array(a) for a in self.outputs(call, env, symbols)]
        func(*inputs, *nds)
        results = [nd.numpy() for nd in nds]
        return tuple(results) if isinstance(call.sinfo_args[0], TupleStructInfo) else results[0]

    def call_tir(self, call, env, symbols):
        gv = call.args[0]
        inputs = [self.eval(a, env, symbols) for a in call.args[1].fields]
        out_sinfo = call.sinfo_args[0]
        arrays = self.outputs(call, env, symbols)
        extra = list(self.eval(call.args[2], env, symbols)) if len(call.args) > 2 else []
        lib = _build(gv.name_hint, self.mod[gv])
        nds = [nd_array(np.asarray(a, order="C")) for a in inputs] + [nd_array(a) for a in arrays]
        lib[gv.name_hint](*nds, *extra)
        results = [nd.numpy() for nd in nds[len(inputs):]]
        return tuple(results) if isinstance(out_sinfo, TupleStructInfo) else results[0]


def _to_nd(value):
    if isinstance(value, np.ndarray):
        return nd_array(value)
    return value


def _from_nd(value):
    if isinstance(value, NDArray):
        return value.numpy()
    return value


def evaluate(mod, args, func_name="main"):
    """Run ``mod[func_name]`` on numpy ``args``; returns numpy arrays (tuples for tuples)."""
    func = mod[func_name]
    return Evaluator(mod).call_function(func, [np.asarray(a) if not isinstance(a, tuple)
                                               else a for a in args])
