"""FoldConstant: evaluate at compile time what depends on constants only -- a ``call_tir`` of
constant tensors (the PrimFunc is built and run) or a legalizable op of constants, and
``TupleGetItem`` of a constant tuple::

    lv = R.call_tir(cls.add, (c0, c1), ...)   =>   lv = metadata["relax.Constant"][0]

Shapes must be static. PrimFuncs only used by folded calls stay until DeadCodeElimination.
A call whose results are larger than its inputs and than ``FOLD_ELEMENTS_CAP`` elements
(``zeros((n, ...))``, a broadcast of a scalar) stays: folding it would grow the module's
constants instead of saving work at run time.
"""

from __future__ import annotations

import numpy as np

from irlab.ir.op import Op
from irlab.relax import expr as rx
from irlab.relax.expr_functor import ExprMutator
from irlab.relax.op.registry import LEGALIZE
from irlab.relax.struct_info import TensorStructInfo, TupleStructInfo
from irlab.runtime.ndarray import array as nd_array
from irlab.tir import expr as tir_expr
from irlab.transform import module_pass

__all__ = ["FoldConstant", "FOLD_ELEMENTS_CAP"]

FOLD_ELEMENTS_CAP = 1 << 16  # results up to this size fold even when larger than the inputs


def _static_tensors(sinfo):
    """The (shape, dtype) of each output, or None when a shape is not static."""
    outs = sinfo.fields if isinstance(sinfo, TupleStructInfo) else [sinfo]
    shapes = []
    for s in outs:
        if not isinstance(s, TensorStructInfo) or s.dims is None or not all(
                isinstance(d, tir_expr.IntImm) for d in s.dims):
            return None
        shapes.append(([d.value for d in s.dims], s.dtype))
    return shapes


def _worth_folding(outs, constants) -> bool:
    """Folding does not blow the module up: the results are no larger than the inputs, or
    small."""
    made = sum(int(np.prod(shape)) for shape, _ in outs)
    read = sum(int(np.prod(c.data.shape)) for c in constants)
    return made <= max(read, FOLD_ELEMENTS_CAP)


class _Folder(ExprMutator):
    def __init__(self, mod):
        super().__init__(mod)
        self.built: dict = {}

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not isinstance(call.op, Op):
            return call
        if call.op.name == "relax.call_tir":
            return self.fold_call_tir(call)
        if call.op.get_attr(LEGALIZE) is not None and call.args and all(
                isinstance(a, rx.Constant) for a in call.args):
            legal = call.op.get_attr(LEGALIZE)(self.builder_, self.builder_.normalize(call))
            if isinstance(legal, rx.Call) and isinstance(legal.op, Op) and \
                    legal.op.name == "relax.call_tir":
                folded = self.fold_call_tir(self.builder_.normalize(legal))
                if isinstance(folded, (rx.Constant, rx.Tuple)):
                    return folded
        return call

    def fold_call_tir(self, call):
        args = call.args[1]
        if len(call.args) != 2 or not isinstance(args, rx.Tuple) or not all(
                isinstance(a, rx.Constant) for a in args.fields):
            return call
        outs = _static_tensors(call.sinfo_args[0])
        if outs is None or not _worth_folding(outs, args.fields):
            return call
        gv = call.args[0]
        lib = self.build(gv)
        arrays = [nd_array(np.zeros(shape, dtype)) for shape, dtype in outs]
        lib[gv.name_hint](*[a.data for a in args.fields], *arrays)
        consts = [rx.Constant(a) for a in arrays]
        if isinstance(call.sinfo_args[0], TupleStructInfo):
            return rx.Tuple(consts)
        return consts[0]

    def build(self, gv):
        from irlab.build_module import build

        lib = self.built.get(gv.name_hint)
        if lib is None:
            func = self.builder_.module[gv].with_attr("global_symbol", gv.name_hint)
            lib = build(func, target="llvm")
            self.built[gv.name_hint] = lib
        return lib

    def visit_tuple_getitem_(self, item):
        item = super().visit_tuple_getitem_(item)
        if isinstance(item.tuple_value, rx.Tuple):
            field = item.tuple_value.fields[item.index]
            if isinstance(field, rx.Constant):
                return field
        return item


def FoldConstant():  # noqa: N802 (TVM's name)
    """The pass folding constant computations."""

    def transform(mod, ctx):
        folder = _Folder(mod)
        for gv, func in mod.items():
            if isinstance(func, rx.Function):
                folder.builder_.update_func(gv, folder.visit_expr(func))
        return folder.builder_.get()

    return module_pass(transform, opt_level=0, name="FoldConstant")
