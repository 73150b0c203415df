"""From a TE/TOPI function on Relax tensors to a PrimFunc and its ``call_tir`` (``emit_te``).

Each tensor argument becomes a ``te.placeholder`` of its (possibly symbolic) shape; the
function's output tensors give the PrimFunc (``te.create_prim_func``) and the call's
``out_sinfo``. Relax shapes are int64 while irlab's TIR kernels index in int32, so the
placeholders use int32 copies of the dims (fresh int32 ``tir.Var``s for the symbolic ones) and
the output shapes are mapped back to the Relax variables. Symbolic vars that only the outputs
use (``zeros((n,))``) become scalar parameters of the PrimFunc, passed as ``tir_vars``.

A compiled PrimFunc binds its buffers' dims from the arrays it is given, which works for
constants and variables only; so a compound dim (``n * 2``) is given to TE as a fresh variable
(one per distinct expression), and an output dim TE computes as a compound expression
(``n + 2`` for a concat) is replaced by a fresh variable too, passed by the caller through
``tir_vars`` (Relax allocated the output with exactly that extent).
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.structural import structural_equal, structural_hash
from irlab.relax import expr as rx
from irlab.relax.struct_info import TensorStructInfo
from irlab.te import create_prim_func, placeholder
from irlab.te.operation import make_compute_op
from irlab.te.tensor import ComputeOp, Tensor
from irlab.tir.buffer import Range
from irlab.tir.stmt import IterVar
from irlab.tir import expr as tir_expr
from irlab.tir.functor import ExprMutator

__all__ = ["te_call", "retype_index", "ShapeConverter"]


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


class ShapeConverter:
    """Relax arguments to TE values (int32 dims); remembers the tensors and symbolic vars
    it made (``to_relax`` maps each int32 variable back to its Relax expression)."""

    def __init__(self):
        self.to_te: dict = {}  # relax int64 Var -> int32 Var
        self.compound: dict = {}  # structural hash -> [(relax expr, int32 Var)]
        self.to_relax: dict = {}  # int32 Var -> relax int64 expression
        self.tensors: list = []  # (relax expr, te placeholder)
        self.names: set = set()

    def dim(self, d):
        """An int32 TE value for a relax dim (int64): constants and variables carry over; a
        compound expression becomes one fresh variable per distinct expression."""
        if isinstance(d, tir_expr.IntImm):
            return tir_expr.IntImm("int32", d.value)
        if isinstance(d, tir_expr.Var):
            if d not in self.to_te:
                self.to_te[d] = tir_expr.Var(d.name_hint, "int32")
                self.to_relax[self.to_te[d]] = d
            return self.to_te[d]
        return self.fresh_for(d)

    def fresh_for(self, d):
        bucket = self.compound.setdefault(structural_hash(d, map_free_vars=False), [])
        for expr, var in bucket:
            if structural_equal(expr, d):
                return var
        var = tir_expr.Var(f"s{len(self.to_relax)}", "int32")
        bucket.append((d, var))
        self.to_relax[var] = d
        return var

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


def _is_simple(dim) -> bool:
    return isinstance(dim, (tir_expr.IntImm, tir_expr.Var))


def _simple_extents(tensor, conv):
    """``tensor`` itself, or its compute rebuilt over fresh variables where its extents are
    compound expressions (the loops then run to the value the caller passes)."""
    if all(_is_simple(d) for d in tensor.shape):
        return tensor
    op = tensor.op
    if not isinstance(op, ComputeOp) or op.num_outputs != 1:
        raise IrlabError(f"emit_te/call_te: output {op.name} has a compound shape "
                         f"{list(tensor.shape)} the compiled function cannot bind")
    axis = []
    for iv in op.axis:
        extent = iv.dom.extent
        if not _is_simple(extent):
            extent = conv.fresh_for(retype_index(extent, conv.to_relax, "int64"))
            iv = IterVar(Range(0, extent), iv.var, iv.iter_type, iv.thread_tag)
        axis.append(iv)
    return make_compute_op(op.name, op.tag, op.attrs, axis, op.body).output(0)


def _symbols(tensors) -> list:
    found = []
    for t in tensors:
        for d in t.shape:
            for v in rx.symbolic_vars(d):
                if v not in found:
                    found.append(v)
    return found


def te_call(func, args, kwargs):
    """Run ``func`` on TE versions of ``args``; return ``(prim_func, call_args, out_sinfo,
    tir_vars)`` for ``R.call_tir``."""
    conv = ShapeConverter()
    te_args = [conv.convert(a) for a in args]
    te_kwargs = {k: conv.convert(v) for k, v in kwargs.items()}
    raw_outputs = _outputs(func(*te_args, **te_kwargs), func)
    out_sinfo = [TensorStructInfo([retype_index(d, conv.to_relax, "int64") for d in t.shape],
                                  t.dtype) for t in raw_outputs]
    outputs = [_simple_extents(t, conv) for t in raw_outputs]
    inputs = [t for _, t in conv.tensors]
    known = set(_symbols(inputs))
    missing = [v for v in _symbols(outputs) if v not in known and v not in conv.to_relax]
    if missing:
        raise IrlabError(f"emit_te/call_te: output shape uses {missing[0].name_hint}, which is "
                         f"not a dim of any argument")
    # symbolic values the input shapes do not bind (shape / PrimValue arguments, compound
    # output extents) are scalar parameters
    extra = [v for v in conv.to_relax if v not in known]
    prim_func = create_prim_func(inputs + outputs + extra)
    prim_func = prim_func.without_attr("global_symbol")
    tir_vars = [conv.to_relax[v] for v in extra] or None
    return prim_func, [e for e, _ in conv.tensors], out_sinfo, tir_vars
