"""Relax StructInfo: what is statically known about a value (kind, dtype, rank, symbolic shape).

``TensorStructInfo([n, 4], "float32")`` says: a float32 tensor of two dimensions, the first
equal to the symbolic ``tir.Var`` ``n``. Dims are TIR ``PrimExpr``s (int64); a tensor of unknown
shape keeps its ``ndim`` (``-1``: unknown rank too). StructInfo nodes are compared with
``irlab.ir.structural_equal`` (symbolic variables map by their definition), not ``==``.
"""

from __future__ import annotations

import numbers

from irlab.errors import IrlabError
from irlab.ir.node import Node
from irlab.runtime.dtype import normalize_dtype
from irlab.tir import expr as tir_expr

__all__ = ["StructInfo", "ObjectStructInfo", "PrimStructInfo", "ShapeStructInfo",
           "TensorStructInfo", "TupleStructInfo", "FuncStructInfo", "as_dim",
           "struct_info_text", "is_base_of", "struct_info_lca", "erase_to_well_defined"]


def as_dim(value) -> tir_expr.PrimExpr:
    """A shape entry as an int64 PrimExpr (Python ints become int64 ``IntImm``s, as in TVM)."""
    if isinstance(value, bool):
        raise IrlabError(f"shape entries must be integers or PrimExprs, got {value!r}")
    if isinstance(value, numbers.Integral):
        return tir_expr.IntImm("int64", int(value))
    if isinstance(value, tir_expr.IntImm) and value.dtype != "int64":
        return tir_expr.IntImm("int64", value.value)
    if isinstance(value, tir_expr.PrimExpr):
        if not value.dtype.startswith("int"):
            raise IrlabError(f"shape entry {value} must be an integer expression, "
                             f"got dtype {value.dtype}")
        return value
    raise IrlabError(f"shape entries must be integers or PrimExprs, got {value!r} "
                     f"({type(value).__name__})")


class StructInfo(Node):
    """Base of struct info. Immutable; compared structurally."""

    _non_structural = ("span",)
    span: object

    def __str__(self):
        return struct_info_text(self)

    def __repr__(self):
        return struct_info_text(self)

    def script(self, *args, **kwargs) -> str:
        """TVMScript text (``R.Tensor((n, 4), dtype="float32")``, symbolic dims declared)."""
        from irlab.script.printer import script

        return script(self, **kwargs)

    def same_as(self, other) -> bool:
        return self is other

    def is_base_of(self, other) -> bool:
        """True when every value described by ``other`` is also described by ``self``."""
        return is_base_of(self, other)


class ObjectStructInfo(StructInfo):
    """Any value (the top of the struct-info lattice)."""

    def __init__(self, span=None):
        super().__init__(span)


class PrimStructInfo(StructInfo):
    """A scalar of ``dtype``; ``value`` is the PrimExpr it is known to equal (or None)."""

    dtype: str
    value: object

    def __init__(self, dtype=None, value=None, span=None):
        if value is not None and not isinstance(value, tir_expr.PrimExpr):
            value = tir_expr.convert(value, dtype)
        if dtype is None:
            if value is None:
                raise IrlabError("PrimStructInfo needs a dtype or a value")
            dtype = value.dtype
        super().__init__(span, normalize_dtype(dtype), value)


class ShapeStructInfo(StructInfo):
    """A shape (a tuple of int64): ``values`` when known, else just ``ndim`` (-1: unknown)."""

    values: object
    ndim: int

    def __init__(self, values=None, ndim=-1, span=None):
        if values is not None:
            values = tuple(as_dim(v) for v in values)
            if ndim not in (-1, len(values)):
                raise IrlabError(f"ShapeStructInfo: ndim {ndim} disagrees with {len(values)} "
                                 f"values")
            ndim = len(values)
        super().__init__(span, values, int(ndim))


class TensorStructInfo(StructInfo):
    """A tensor of ``dtype``; ``shape`` is a Relax expression (a ``ShapeExpr`` of PrimExpr dims,
    or a Var holding a shape) or None (unknown, with ``ndim``; -1 means unknown rank too).

    ``TensorStructInfo([n, 4], "float32")`` takes a list of dims for the shape.
    """

    shape: object
    dtype: str
    ndim: int

    def __init__(self, shape=None, dtype="float32", vdevice=None, ndim=-1, span=None):
        from irlab.relax.expr import Expr, ShapeExpr  # expr.py builds on this module

        if isinstance(shape, (list, tuple)):
            shape = ShapeExpr(shape)
        if shape is not None:
            if not isinstance(shape, Expr):
                raise IrlabError(f"TensorStructInfo shape must be a list of dims or a Relax "
                                 f"shape expression, got {type(shape).__name__}")
            shape_ndim = _shape_ndim(shape)
            if ndim not in (-1, shape_ndim) and shape_ndim != -1:
                raise IrlabError(f"TensorStructInfo: ndim {ndim} disagrees with shape {shape}")
            ndim = shape_ndim if shape_ndim != -1 else ndim
        dtype = "void" if dtype is None else normalize_dtype(dtype)
        super().__init__(span, shape, dtype, int(ndim))

    @property
    def is_unknown_ndim(self) -> bool:
        return self.ndim == -1

    @property
    def is_unknown_dtype(self) -> bool:
        return self.dtype == "void"

    @property
    def dims(self):
        """The shape as a tuple of PrimExprs, or None when not statically known."""
        values = getattr(self.shape, "values", None)
        return None if values is None else tuple(values)


def _shape_ndim(shape) -> int:
    values = getattr(shape, "values", None)
    if values is not None:
        return len(values)
    sinfo = shape.struct_info_
    if isinstance(sinfo, ShapeStructInfo):
        return sinfo.ndim
    return -1


class TupleStructInfo(StructInfo):
    """A tuple whose fields have the given struct infos."""

    fields: tuple

    def __init__(self, fields, span=None):
        fields = tuple(fields)
        for i, f in enumerate(fields):
            if not isinstance(f, StructInfo):
                raise IrlabError(f"TupleStructInfo field {i} must be a StructInfo, "
                                 f"got {type(f).__name__}")
        super().__init__(span, fields)


class FuncStructInfo(StructInfo):
    """A function: ``params`` (None: opaque, any arguments), ``ret`` and ``purity``."""

    params: object
    ret: object
    purity: bool
    derive_func: object

    def __init__(self, params, ret, purity=True, derive_func=None, span=None):
        if params is not None:
            params = tuple(params)
        super().__init__(span, params, ret, bool(purity), derive_func)

    @staticmethod
    def opaque_func(*, ret=None, derive_func=None, purity=False, span=None):
        """A function whose parameters are unknown (a packed function)."""
        return FuncStructInfo(None, ret or ObjectStructInfo(), purity, derive_func, span)

    @property
    def is_opaque(self) -> bool:
        return self.params is None


# -- the lattice --------------------------------------------------------------------------
def _dims_equal(a, b) -> bool:
    from irlab.arith import Analyzer

    if a is b:
        return True
    if isinstance(a, tir_expr.IntImm) and isinstance(b, tir_expr.IntImm):
        return a.value == b.value
    return Analyzer().can_prove_equal(a, b)


def is_base_of(base, derived) -> bool:
    """True when ``base`` describes every value ``derived`` describes (symbolic dims compared
    with the arithmetic analyzer)."""
    if isinstance(base, ObjectStructInfo):
        return True
    if type(base) is not type(derived):
        return False
    if isinstance(base, PrimStructInfo):
        return base.dtype == derived.dtype and (
            base.value is None or (derived.value is not None
                                   and _dims_equal(base.value, derived.value)))
    if isinstance(base, ShapeStructInfo):
        return _shape_base(base.ndim, base.values, derived.ndim, derived.values)
    if isinstance(base, TensorStructInfo):
        if not base.is_unknown_dtype and base.dtype != derived.dtype:
            return False
        return _shape_base(base.ndim, base.dims, derived.ndim, derived.dims)
    if isinstance(base, TupleStructInfo):
        return len(base.fields) == len(derived.fields) and all(
            is_base_of(a, b) for a, b in zip(base.fields, derived.fields))
    if isinstance(base, FuncStructInfo):
        if base.is_opaque:
            return True
        if derived.is_opaque or len(base.params) != len(derived.params):
            return False
        return all(is_base_of(b, a) for a, b in zip(base.params, derived.params)) and \
            is_base_of(base.ret, derived.ret)
    return False


def _shape_base(base_ndim, base_dims, ndim, dims) -> bool:
    if base_ndim != -1 and base_ndim != ndim:
        return False
    if base_dims is None:
        return True
    if dims is None:
        return False
    return all(_dims_equal(a, b) for a, b in zip(base_dims, dims))


def struct_info_lca(a, b):
    """The most precise struct info describing both ``a`` and ``b`` (for ``If`` branches)."""
    if is_base_of(a, b):
        return a
    if is_base_of(b, a):
        return b
    if type(a) is not type(b):
        return ObjectStructInfo()
    if isinstance(a, TensorStructInfo):
        dtype = a.dtype if a.dtype == b.dtype else "void"
        return TensorStructInfo(dtype=dtype, ndim=a.ndim if a.ndim == b.ndim else -1)
    if isinstance(a, ShapeStructInfo):
        return ShapeStructInfo(ndim=a.ndim if a.ndim == b.ndim else -1)
    if isinstance(a, PrimStructInfo) and a.dtype == b.dtype:
        return PrimStructInfo(a.dtype)
    if isinstance(a, TupleStructInfo) and len(a.fields) == len(b.fields):
        return TupleStructInfo([struct_info_lca(x, y) for x, y in zip(a.fields, b.fields)])
    return ObjectStructInfo()


def erase_to_well_defined(sinfo, defined_vars=()):
    """``sinfo`` with every shape using a symbolic variable outside ``defined_vars`` made
    unknown (rank kept): what stays true where those variables are out of scope."""
    from irlab.relax.expr import symbolic_vars

    defined = set(defined_vars)

    def ok(values):
        return all(v in defined for v in symbolic_vars(tuple(values)))

    if isinstance(sinfo, TensorStructInfo):
        dims = sinfo.dims
        if dims is None and sinfo.shape is not None:
            return TensorStructInfo(dtype=sinfo.dtype, ndim=sinfo.ndim)
        if dims is not None and not ok(dims):
            return TensorStructInfo(dtype=sinfo.dtype, ndim=sinfo.ndim)
        return sinfo
    if isinstance(sinfo, ShapeStructInfo):
        if sinfo.values is not None and not ok(sinfo.values):
            return ShapeStructInfo(ndim=sinfo.ndim)
        return sinfo
    if isinstance(sinfo, PrimStructInfo):
        if sinfo.value is not None and not ok((sinfo.value,)):
            return PrimStructInfo(sinfo.dtype)
        return sinfo
    if isinstance(sinfo, TupleStructInfo):
        fields = [erase_to_well_defined(f, defined) for f in sinfo.fields]
        if all(a is b for a, b in zip(fields, sinfo.fields)):
            return sinfo
        return TupleStructInfo(fields)
    return sinfo


# -- text ---------------------------------------------------------------------------------
def _dim_text(dim) -> str:
    return str(dim.value) if isinstance(dim, tir_expr.IntImm) else str(dim)


def _dims_text(dims) -> str:
    return "(" + ", ".join(_dim_text(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def struct_info_text(sinfo) -> str:
    """A short TVMScript-like spelling (``R.Tensor((n, 4), dtype="float32")``)."""
    if isinstance(sinfo, ObjectStructInfo):
        return "R.Object"
    if isinstance(sinfo, PrimStructInfo):
        if sinfo.value is not None:
            return f"R.Prim(value={sinfo.value})"
        return f'R.Prim("{sinfo.dtype}")'
    if isinstance(sinfo, ShapeStructInfo):
        if sinfo.values is not None:
            return "R.Shape([" + ", ".join(_dim_text(d) for d in sinfo.values) + "])"
        return f"R.Shape(ndim={sinfo.ndim})"
    if isinstance(sinfo, TensorStructInfo):
        dtype = "" if sinfo.is_unknown_dtype else f', dtype="{sinfo.dtype}"'
        if sinfo.dims is not None:
            return f"R.Tensor({_dims_text(sinfo.dims)}{dtype})"
        if sinfo.shape is not None:
            return f"R.Tensor({sinfo.shape!r}{dtype})"
        return f"R.Tensor(ndim={sinfo.ndim}{dtype})"
    if isinstance(sinfo, TupleStructInfo):
        return "R.Tuple(" + ", ".join(struct_info_text(f) for f in sinfo.fields) + ")"
    if isinstance(sinfo, FuncStructInfo):
        if sinfo.is_opaque:
            return "R.Callable"
        params = ", ".join(struct_info_text(p) for p in sinfo.params)
        return f"R.Callable(({params}), {struct_info_text(sinfo.ret)}, {sinfo.purity})"
    return type(sinfo).__name__
