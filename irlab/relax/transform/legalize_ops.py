"""LegalizeOps: every Relax op call with a legalization becomes a ``call_tir`` of a PrimFunc
added to the module (its TOPI / TE compute through ``BlockBuilder.call_te``)::

    lv = R.add(x, y)        =>   lv = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((n, 4)))
                                 # + @T.prim_func def add(...) in the module

An op's legalization is its ``FLegalize`` attribute (defined beside the op); a
``customize_legalize_map`` ``{op name: f(bb, call)}`` overrides it. Ops with none, or on
tensors of unknown shape, stay.
"""

from __future__ import annotations

from irlab.ir.op import Op
from irlab.relax import expr as rx
from irlab.relax.expr_functor import ExprMutator
from irlab.relax.op.registry import LEGALIZE
from irlab.relax.struct_info import TensorStructInfo, TupleStructInfo
from irlab.transform import module_pass

__all__ = ["LegalizeOps", "legalize_call"]


def legalize_call(bb, call, custom=None):
    """The legalized form of ``call`` (``call`` itself when its op has no legalization)."""
    if not isinstance(call, rx.Call) or not isinstance(call.op, Op):
        return call
    rule = (custom or {}).get(call.op.name) or call.op.get_attr(LEGALIZE)
    if rule is None or not _shapes_known(call):
        return call  # (as TVM: an op on tensors of unknown shape stays for later)
    return rule(bb, call)


def _known(sinfo) -> bool:
    if isinstance(sinfo, TensorStructInfo):
        return sinfo.dims is not None
    if isinstance(sinfo, TupleStructInfo):
        return all(_known(f) for f in sinfo.fields)
    return True


def _shapes_known(call) -> bool:
    """Every tensor the call reads or makes has a known shape (symbolic dims are fine)."""
    return _known(call.struct_info) and all(_known(a.struct_info) for a in call.args
                                            if isinstance(a, rx.Expr))


class _Legalizer(ExprMutator):
    def __init__(self, mod, custom):
        super().__init__(mod)
        self.custom = dict(custom or {})

    def visit_call_(self, call):
        call = super().visit_call_(call)
        return legalize_call(self.builder_, self.builder_.normalize(call), self.custom)


def LegalizeOps(customize_legalize_map=None, enable_warning=False):  # noqa: N802 (TVM name)
    """The pass legalizing high-level ops to ``call_tir``s of TOPI PrimFuncs."""

    def transform(mod, ctx):
        legalizer = _Legalizer(mod, customize_legalize_map)
        for gv, func in mod.items():
            if isinstance(func, rx.Function):
                legalizer.builder_.update_func(gv, legalizer.visit_expr(func))
        return legalizer.builder_.get()

    return module_pass(transform, opt_level=0, name="LegalizeOps")
