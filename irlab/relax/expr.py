"""Relax expressions, bindings and functions (TVM's ``tvm.relax.expr``).

Relax programs are in A-normal form inside ``SeqExpr``s: a sequence of binding blocks
(``BindingBlock``, or ``DataflowBlock`` for a side-effect-free region whose inner values are
``DataflowVar``s) followed by a body. Every expression carries a ``struct_info`` (its static
kind, dtype and symbolic shape), filled by normalization (``BlockBuilder.normalize``): it is a
cache, not part of the structure, except on a ``Var`` where it is the variable's annotation.

Nodes are immutable; a ``Var`` or a symbolic ``tir.Var`` is defined once (a parameter, a
binding, or the first appearance of a symbolic dim in a parameter / ``MatchCast`` struct
info) and compared by that definition in ``irlab.ir.structural_equal``.
"""

from __future__ import annotations

import numbers

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.attrs import Attrs, DictAttrs
from irlab.ir.expr import ArithmeticSugar, GlobalVar, RelayExpr
from irlab.ir.node import Node
from irlab.ir.op import Op
from irlab.runtime.ndarray import NDArray
from irlab.runtime.ndarray import array as nd_array
from irlab.tir import expr as tir_expr
from irlab.relax.struct_info import (FuncStructInfo, ObjectStructInfo, PrimStructInfo,
                                     ShapeStructInfo, StructInfo, TensorStructInfo,
                                     TupleStructInfo, as_dim)

__all__ = ["Expr", "Var", "DataflowVar", "Call", "Tuple", "TupleGetItem", "ShapeExpr",
           "PrimValue", "StringImm", "DataTypeImm", "Constant", "If", "SeqExpr", "Binding",
           "VarBinding", "MatchCast", "BindingBlock", "DataflowBlock", "Function", "ExternFunc",
           "GlobalVar", "const", "extern", "get_shape_of", "symbolic_vars"]


class Expr(ArithmeticSugar, RelayExpr):
    """Base of Relax expressions. ``struct_info`` is set by normalization."""

    __slots__ = ("_sinfo_cache",)

    @property
    def struct_info(self) -> StructInfo:
        sinfo = getattr(self, "_sinfo_cache", None)
        if sinfo is None:
            raise IrlabError(f"the struct info of this {type(self).__name__} is not populated; "
                             f"normalize it first (relax.BlockBuilder().normalize(expr))")
        return sinfo

    @property
    def struct_info_(self):
        """The struct info, or None when not deduced yet (TVM's ``struct_info_`` field)."""
        return getattr(self, "_sinfo_cache", None)

    def _set_struct_info(self, sinfo):
        object.__setattr__(self, "_sinfo_cache", sinfo)

    # -- operators build calls of relax ops (as TVM's ExprWithOp) --------------------------
    def _binary(self, name, other, swap=False):
        from irlab.relax import op as relax_op

        other = other if isinstance(other, Expr) else const(other, _dtype_of(self))
        lhs, rhs = (other, self) if swap else (self, other)
        return getattr(relax_op, name)(lhs, rhs)

    def __getitem__(self, index):
        sinfo = self.struct_info_
        if isinstance(sinfo, TupleStructInfo) and not 0 <= index < len(sinfo.fields):
            raise IndexError(f"tuple index {index} out of range ({len(sinfo.fields)} fields)")
        return TupleGetItem(self, index)

    def __iter__(self):
        sinfo = self.struct_info_
        if not isinstance(sinfo, TupleStructInfo):
            raise TypeError(f"a Relax {type(self).__name__} of struct info {sinfo} is not "
                            f"iterable (only tuples are)")
        return iter([TupleGetItem(self, k) for k in range(len(sinfo.fields))])

    def astype(self, dtype):
        from irlab.relax import op as relax_op

        return relax_op.astype(self, dtype)

    def astext(self) -> str:
        from irlab.relax.text import relax_text

        return relax_text(self)

    def script(self, *args, **kwargs) -> str:
        """TVMScript text of this expression (TVM's layout: free variables declared first)."""
        from irlab.script.printer import script

        return script(self, **kwargs)

    __hash__ = object.__hash__


def _dtype_of(expr) -> str | None:
    sinfo = expr.struct_info_
    return getattr(sinfo, "dtype", None) if sinfo is not None else None


def _as_struct_info(value, what) -> StructInfo | None:
    if value is None or isinstance(value, StructInfo):
        return value
    as_sinfo = getattr(value, "as_struct_info", None)  # TVMScript's R.Tensor(...) proxies
    if callable(as_sinfo):
        return as_sinfo()
    raise IrlabError(f"{what} must be a StructInfo, got {type(value).__name__}")


def _expect_expr(value, where):
    if isinstance(value, (Expr, GlobalVar, Op)):
        return value
    if isinstance(value, (list, tuple)):
        return Tuple(value)
    if isinstance(value, str):
        return StringImm(value)
    if isinstance(value, (numbers.Number, tir_expr.PrimExpr)) and not isinstance(value, bool):
        return PrimValue(value)
    raise IrlabError(f"{where} must be a Relax expression, got {type(value).__name__}")


class Var(Expr):
    """A variable, bound once (a function parameter or a binding); ``struct_info`` is its
    annotation and part of its definition."""

    _is_variable = True
    name_hint: str
    struct_info_annotation: object

    def __init__(self, name_hint="v", struct_info=None, span=None):
        if not isinstance(name_hint, str):
            name_hint = getattr(name_hint, "name_hint", str(name_hint))
        sinfo = _as_struct_info(struct_info, f"the struct info of variable {name_hint!r}")
        super().__init__(span, name_hint, sinfo)
        if sinfo is not None:
            self._set_struct_info(sinfo)

    @property
    def vid(self):
        return self.name_hint


class DataflowVar(Var):
    """A variable bound inside a ``DataflowBlock``, invisible outside it."""


class Call(Expr):
    """``op(*args)``: an ``Op`` (with typed ``attrs``), a ``GlobalVar``, a function-typed Var
    or an ``ExternFunc``. ``sinfo_args`` give struct infos some ops need (``call_tir``'s output,
    a packed call's result)."""

    op: object
    args: tuple
    attrs: object
    sinfo_args: tuple

    def __init__(self, op, args, attrs=None, sinfo_args=None, span=None):
        if not isinstance(op, RelayExpr):
            raise IrlabError(f"a Call's target must be an Op, GlobalVar, Var or ExternFunc, "
                             f"got {type(op).__name__}")
        args = tuple(_expect_expr(a, f"argument {i} of the call") for i, a in enumerate(args))
        if attrs is not None and not isinstance(attrs, (Attrs, DictAttrs)):
            raise IrlabError(f"Call attrs must be an Attrs object, got {type(attrs).__name__}")
        if isinstance(sinfo_args, StructInfo):
            sinfo_args = [sinfo_args]
        sinfo_args = tuple(_as_struct_info(s, "a sinfo_arg") for s in (sinfo_args or ()))
        super().__init__(span, op, args, attrs, sinfo_args)


class Tuple(Expr):
    """A tuple of values."""

    fields: tuple

    def __init__(self, fields, span=None):
        fields = tuple(_expect_expr(f, f"tuple field {i}") for i, f in enumerate(fields))
        super().__init__(span, fields)

    def __len__(self):
        return len(self.fields)

    def __getitem__(self, index):
        return self.fields[index]

    def __iter__(self):
        return iter(self.fields)


class TupleGetItem(Expr):
    """Field ``index`` of a tuple."""

    tuple_value: object
    index: int

    def __init__(self, tuple_value, index, span=None):
        if not isinstance(index, numbers.Integral) or index < 0:
            raise IrlabError(f"TupleGetItem index must be a non-negative integer, got {index!r}")
        super().__init__(span, _expect_expr(tuple_value, "TupleGetItem's tuple"), int(index))


class ShapeExpr(Expr):
    """A shape value built from PrimExprs (``R.shape([n, 4])``)."""

    _structural_tree = True  # a leaf value: compared as a tree, sharing ignored

    values: tuple

    def __init__(self, values, span=None):
        super().__init__(span, tuple(as_dim(v) for v in values))
        self._set_struct_info(ShapeStructInfo(self.values))

    def __len__(self):
        return len(self.values)

    def __getitem__(self, index):
        return self.values[index]

    def __iter__(self):
        return iter(self.values)


class PrimValue(Expr):
    """A scalar given by a PrimExpr (Python ints become int64, as in TVM)."""

    _structural_tree = True  # a leaf value: compared as a tree, sharing ignored

    value: object

    def __init__(self, value, span=None):
        if isinstance(value, bool):
            value = tir_expr.IntImm("bool", int(value))
        elif isinstance(value, numbers.Integral):
            value = tir_expr.IntImm("int64", int(value))
        elif not isinstance(value, tir_expr.PrimExpr):
            value = tir_expr.convert(value)
        super().__init__(span, value)
        self._set_struct_info(PrimStructInfo(value.dtype, value))


class StringImm(Expr):
    """A string constant (an argument of packed functions)."""

    _structural_tree = True  # a leaf value: compared as a tree, sharing ignored

    value: str

    def __init__(self, value, span=None):
        super().__init__(span, str(value))
        self._set_struct_info(ObjectStructInfo())


class DataTypeImm(Expr):
    """A dtype constant (``R.dtype("float32")``)."""

    _structural_tree = True  # a leaf value: compared as a tree, sharing ignored

    value: str

    def __init__(self, value, span=None):
        from irlab.runtime.dtype import normalize_dtype

        super().__init__(span, normalize_dtype(value))
        self._set_struct_info(ObjectStructInfo())


class Constant(Expr):
    """A constant tensor (``data`` an ``NDArray``)."""

    data: object

    def __init__(self, data, struct_info=None, span=None):
        if not isinstance(data, NDArray):
            data = nd_array(np.asarray(data))
        super().__init__(span, data)
        sinfo = _as_struct_info(struct_info, "a Constant's struct info")
        self._set_struct_info(sinfo or TensorStructInfo(list(data.shape), data.dtype))

    def _structural_key(self):
        array = self.data.numpy()
        return (array.dtype.str, array.shape, array.tobytes())


class If(Expr):
    """``if cond: true_branch else: false_branch``; branches are ``SeqExpr``s."""

    cond: object
    true_branch: object
    false_branch: object

    def __init__(self, cond, true_branch, false_branch, span=None):
        super().__init__(span, _expect_expr(cond, "If's condition"),
                         _as_seq(true_branch), _as_seq(false_branch))


class SeqExpr(Expr):
    """Binding blocks evaluated in order, then ``body``."""

    blocks: tuple
    body: object

    def __init__(self, blocks, body, span=None):
        blocks = tuple(blocks)
        for i, block in enumerate(blocks):
            if not isinstance(block, BindingBlock):
                raise IrlabError(f"SeqExpr block {i} must be a BindingBlock, "
                                 f"got {type(block).__name__}")
        super().__init__(span, blocks, _expect_expr(body, "SeqExpr's body"))


def _as_seq(expr):
    expr = _expect_expr(expr, "an If branch")
    return expr if isinstance(expr, SeqExpr) else SeqExpr([], expr)


# -- bindings and blocks ------------------------------------------------------------------
class Binding(Node):
    """Base of bindings: each defines ``var``."""

    _non_structural = ("span",)
    span: object
    var: object

    def script(self, *args, **kwargs) -> str:
        """TVMScript text of this binding."""
        from irlab.script.printer import script

        return script(self, **kwargs)


class VarBinding(Binding):
    """``var = value``."""

    _bind_fields = ("var",)
    value: object

    def __init__(self, var, value, span=None):
        if not isinstance(var, Var):
            raise IrlabError(f"a binding defines a relax.Var, got {type(var).__name__}")
        super().__init__(span, var, _expect_expr(value, f"the value bound to {var.name_hint}"))


class MatchCast(Binding):
    """``var = R.match_cast(value, struct_info)``: checks ``value`` against ``struct_info`` at
    run time and defines the symbolic dims that appear there for the first time."""

    _bind_fields = ("_defined_symbols", "var")
    value: object
    struct_info: object

    def __init__(self, var, value, struct_info, span=None):
        if not isinstance(var, Var):
            raise IrlabError(f"match_cast defines a relax.Var, got {type(var).__name__}")
        sinfo = _as_struct_info(struct_info, "match_cast's struct info")
        super().__init__(span, var, _expect_expr(value, "match_cast's value"), sinfo)

    @property
    def _defined_symbols(self):
        return symbolic_vars(self.struct_info)


class BindingBlock(Node):
    """A sequence of bindings (may have side effects)."""

    _non_structural = ("span",)
    span: object
    bindings: tuple

    def __init__(self, bindings, span=None):
        bindings = tuple(bindings)
        for i, b in enumerate(bindings):
            if not isinstance(b, Binding):
                raise IrlabError(f"binding {i} of a block must be a VarBinding or MatchCast, "
                                 f"got {type(b).__name__}")
        super().__init__(span, bindings)

    def __repr__(self):
        from irlab.relax.text import relax_text

        return relax_text(self)

    def script(self, *args, **kwargs) -> str:
        """TVMScript text of this block."""
        from irlab.script.printer import script

        return script(self, **kwargs)


class DataflowBlock(BindingBlock):
    """A pure, control-flow-free block; its ``DataflowVar``s are local to it."""


# -- functions ----------------------------------------------------------------------------
class Function(Expr):
    """``def f(params) -> ret_struct_info: body``. ``is_pure`` False allows side effects.

    Symbolic dims appearing in the parameters' struct infos are defined by the function.
    """

    _bind_fields = ("_defined_symbols", "params")
    _is_module_function = True
    params: tuple
    body: object
    ret_struct_info: object
    is_pure: bool
    attrs: object

    def __init__(self, params, body, ret_struct_info=None, is_pure=True, attrs=None,
                 span=None):
        params = tuple(params)
        for p in params:
            if not isinstance(p, Var):
                raise IrlabError(f"function parameters must be relax.Vars, "
                                 f"got {type(p).__name__}")
        body = _expect_expr(body, "the function body")
        ret = _as_struct_info(ret_struct_info, "the function's ret_struct_info")
        if ret is None and body.struct_info_ is not None and not isinstance(body, Function):
            from irlab.relax.struct_info import erase_to_well_defined

            defined = [v for p in params for v in symbolic_vars(p.struct_info_)]
            ret = erase_to_well_defined(body.struct_info_, defined)
        if attrs is not None and not isinstance(attrs, DictAttrs):
            attrs = DictAttrs(attrs)
        super().__init__(span, params, body, ret, bool(is_pure), attrs)
        if ret is not None and all(p.struct_info_ is not None for p in params):
            self._set_struct_info(FuncStructInfo([p.struct_info_ for p in params], ret,
                                                 self.is_pure))

    @property
    def _defined_symbols(self):
        found = []
        for p in self.params:
            for v in symbolic_vars(p.struct_info_):
                if v not in found:
                    found.append(v)
        return found

    def with_attr(self, key_or_dict, value=None) -> "Function":
        items = key_or_dict if isinstance(key_or_dict, dict) else {key_or_dict: value}
        attrs = dict(self.attrs.items) if self.attrs is not None else {}
        attrs.update(items)
        return _copy_sinfo(self, self.with_fields(attrs=DictAttrs(attrs)))

    def without_attr(self, key) -> "Function":
        if self.attrs is None or key not in self.attrs.keys():
            return self
        attrs = {k: v for k, v in self.attrs.items if k != key}
        return _copy_sinfo(self, self.with_fields(attrs=DictAttrs(attrs) if attrs else None))

    def bind_symbolic_vars(self, binding) -> "Function":
        """This function with symbolic dims replaced (``{"n": 4}`` or ``{n_var: 4}``)."""
        from irlab.relax.symbolic import bind_symbolic_vars

        return bind_symbolic_vars(self, binding)

    def bind_params(self, binding) -> "Function":
        """This function with parameters (by name or Var) replaced by constants."""
        from irlab.relax.transform.bind_params import bind_params

        return bind_params(self, binding)


def is_primitive(func) -> bool:
    """A fused group (attr ``Primitive``, set by FuseOps): FuseTIR merges its call_tirs into one
    PrimFunc and FuseOps does not fuse inside it again. (Relay's notion is
    ``relay.function.is_primitive``.)"""
    return isinstance(func, Function) and func.attrs is not None and \
        "Primitive" in func.attrs.keys()


def _copy_sinfo(old, new):
    if new is not old and old.struct_info_ is not None:
        new._set_struct_info(old.struct_info_)
    return new


class ExternFunc(Expr):
    """A packed function by name (``R.call_packed("name", ...)`` calls one)."""

    _is_module_function = True
    global_symbol: str

    def __init__(self, global_symbol, struct_info=None, span=None):
        super().__init__(span, str(global_symbol))
        sinfo = _as_struct_info(struct_info, "ExternFunc's struct info")
        self._set_struct_info(sinfo or FuncStructInfo.opaque_func())


# -- helpers ------------------------------------------------------------------------------
def const(value, dtype=None) -> Constant:
    """A constant tensor from a number, list or numpy array (``relax.const``). Without a
    dtype, 64-bit ints and floats become int32 / float32 (TVM's rule)."""
    if isinstance(value, NDArray):
        return Constant(value)
    array = np.asarray(value, dtype=dtype)
    if dtype is None:
        array = array.astype({np.dtype("int64"): "int32", np.dtype("float64"): "float32"}.get(
            array.dtype, array.dtype))
    return Constant(nd_array(array))


def get_shape_of(expr):
    """``R.shape_of(expr)``: the run-time shape of a tensor, as a shape value."""
    from irlab.relax.op.base import shape_of

    return shape_of(expr)


def extern(name, struct_info=None) -> ExternFunc:
    """A reference to the packed function ``name``."""
    return ExternFunc(name, struct_info)


def symbolic_vars(sinfo) -> list:
    """The symbolic ``tir.Var``s appearing in a struct info, in order of first appearance."""
    found = []
    stack = [sinfo]
    while stack:
        item = stack.pop()
        if item is None:
            continue
        if isinstance(item, tir_expr.Var):
            if item not in found:
                found.append(item)
        elif isinstance(item, tir_expr.PrimExpr):
            stack.extend(reversed(_prim_children(item)))
        elif isinstance(item, (tuple, list)):
            stack.extend(reversed(item))
        elif isinstance(item, TensorStructInfo):
            stack.append(item.dims)
        elif isinstance(item, ShapeStructInfo):
            stack.append(item.values)
        elif isinstance(item, PrimStructInfo):
            stack.append(item.value)
        elif isinstance(item, TupleStructInfo):
            stack.append(item.fields)
        elif isinstance(item, FuncStructInfo) and item.params is not None:
            stack.append(list(item.params) + [item.ret])
    return found


def _prim_children(expr) -> list:
    return [c for c in expr.children() if isinstance(c, tir_expr.PrimExpr)]

