"""From a TE/TOPI function on Relax tensors to a PrimFunc and its ``call_tir`` (``emit_te``).

Each tensor argument becomes a ``te.placeholder`` of its (possibly symbolic) shape; the
function's output tensors give the PrimFunc (``te.create_prim_func``) and the call's
``out_sinfo``. Relax shapes are int64 while irlab's TIR kernels index in int32, so the
placeholders use int32 copies of the dims (fresh int32 ``tir.Var``s for the symbolic ones) and
the output shapes are mapped back to the Relax variables. Symbolic vars that only the outputs
use (``zeros((n,))``) become scalar parameters of the PrimFunc, passed as ``tir_vars``.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.relax import expr as rx
from irlab.relax.struct_info import TensorStructInfo
from irlab.te import create_prim_func, placeholder
from irlab.te.tensor import Tensor
from irlab.tir import expr as tir_expr
from irlab.tir.functor import ExprMutator

__all__ = ["te_call", "retype_index"]


class _Retype(ExprMutator):
    """Index expressions with integer constants and variables moved to another dtype."""

    def __init__(self, var_map, dtype):
        super().__init__()
        self.var_map = var_map
        self.dtype = dtype

    def visit_int_imm(self, e):
        if e.dtype == self.dtype or e.dtype == "bool":
            return e
        return tir_expr.IntImm(self.dtype, e.value)

    def visit_var(self, e):
        return self.var_map.get(e, e)

    visit_size_var = visit_var


def retype_index(expr, var_map, dtype):
    """``expr`` with its variables replaced by ``var_map`` and int constants as ``dtype``."""
    return _Retype(var_map, dtype).visit_expr(expr)


class _Converter:
    """Relax arguments to TE values; remembers the tensors and symbolic vars it made."""

    def __init__(self):
        self.to_te: dict = {}  # relax int64 Var -> int32 Var
        self.tensors: list = []  # (relax expr, te placeholder)
        self.names: set = set()

    def dim(self, d):
        for v in rx.symbolic_vars(d):
            if v not in self.to_te:
                self.to_te[v] = tir_expr.Var(v.name_hint, "int32")
        return retype_index(d, self.to_te, "int32")

    def name(self, expr, index) -> str:
        base = expr.name_hint if isinstance(expr, rx.Var) else f"A{index}"
        name, k = base, 0
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def convert(self, value):
        if isinstance(value, (list, tuple)):
            return type(value)(self.convert(v) for v in value)
        if isinstance(value, rx.ShapeExpr):
            return [self.dim(d) for d in value.values]
        if isinstance(value, rx.PrimValue):
            return self.dim(value.value) if value.value.dtype.startswith("int") else value.value
        if isinstance(value, rx.Expr):
            return self.tensor(value)
        return value

    def tensor(self, expr):
        for seen, tensor in self.tensors:
            if seen is expr:
                return tensor
        sinfo = expr.struct_info
        if not isinstance(sinfo, TensorStructInfo) or sinfo.dims is None:
            raise IrlabError(f"emit_te/call_te: argument {expr!r} must be a tensor of known "
                             f"shape, its struct info is {sinfo}")
        shape = [self.dim(d) for d in sinfo.dims]
        tensor = placeholder(shape, sinfo.dtype, self.name(expr, len(self.tensors)))
        self.tensors.append((expr, tensor))
        return tensor


def _outputs(result, func) -> list:
    items = list(result) if isinstance(result, (list, tuple)) else [result]
    for t in items:
        if not isinstance(t, Tensor):
            raise IrlabError(f"emit_te/call_te: {getattr(func, '__name__', func)} must return "
                             f"te.Tensor(s), got {type(t).__name__}")
    return items


def te_call(func, args, kwargs):
    """Run ``func`` on TE versions of ``args``; return ``(prim_func, call_args, out_sinfo,
    tir_vars)`` for ``R.call_tir``."""
    conv = _Converter()
    te_args = [conv.convert(a) for a in args]
    te_kwargs = {k: conv.convert(v) for k, v in kwargs.items()}
    outputs = _outputs(func(*te_args, **te_kwargs), func)
    inputs = [t for _, t in conv.tensors]
    to_relax = {v32: v64 for v64, v32 in conv.to_te.items()}
    known = set()
    for t in inputs:
        for d in t.shape:
            known.update(rx.symbolic_vars(d))
    extra = []
    for t in outputs:
        for d in t.shape:
            for v in rx.symbolic_vars(d):
                if v not in known and v not in extra:
                    extra.append(v)
    missing = [v for v in extra if v not in to_relax]
    if missing:
        raise IrlabError(f"emit_te/call_te: output shape uses {missing[0].name_hint}, which is "
                         f"not a dim of any argument")
    prim_func = create_prim_func(inputs + outputs + extra)
    prim_func = prim_func.without_attr("global_symbol")
    out_sinfo = [TensorStructInfo([retype_index(d, to_relax, "int64") for d in t.shape],
                                  t.dtype) for t in outputs]
    tir_vars = [to_relax[v] for v in extra] or None
    return prim_func, [e for e, _ in conv.tensors], out_sinfo, tir_vars
