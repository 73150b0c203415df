"""Relay expressions: ``Var``, ``Constant``, ``Call``, ``Tuple``, ``TupleGetItem``, ``Let``, ``If``.

Expressions are immutable identity nodes forming a DAG: a sub-expression used twice is the same
object. ``ExprWithOp`` adds TVM's operator sugar (``a + b`` builds ``add(a, b)``).
"""

from __future__ import annotations

import numbers

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.attrs import Attrs, DictAttrs
from irlab.ir.expr import ArithmeticSugar, GlobalVar, RelayExpr
from irlab.ir.op import Op
from irlab.ir.type import TensorType, Type
from irlab.runtime.ndarray import NDArray, array as nd_array
from irlab.runtime.registry import register_func

Expr = RelayExpr


def expect_expr(value, what):
    """``value`` as a Relay expression (a TupleWrapper gives its tuple); a clear error naming
    ``what`` otherwise (constructors of every Relay node kind check their operands with it)."""
    if isinstance(value, TupleWrapper):
        return value.astuple()
    if not isinstance(value, RelayExpr):
        hint = " (wrap numbers with relay.const first)" if isinstance(value, numbers.Number) else ""
        raise IrlabError(f"{what} must be a Relay expression, got {type(value).__name__}{hint}")
    return value


class ExprWithOp(ArithmeticSugar, RelayExpr):
    """Operator sugar shared by most expressions, as TVM's ``ExprWithOp``."""

    def _binary(self, name, other, swap=False):
        from irlab.relay.op import tensor as _tensor

        other = expect_expr(other, f"the other operand of {name}")
        fn = getattr(_tensor, name)
        return fn(other, self) if swap else fn(self, other)

    def __lt__(self, other):
        return self._binary("less", other)

    def __gt__(self, other):
        return self._binary("greater", other)

    def __le__(self, other):
        return self._binary("less_equal", other)

    def __ge__(self, other):
        return self._binary("greater_equal", other)

    def __neg__(self):
        from irlab.relay.op import tensor as _tensor

        return _tensor.negative(self)

    # Identity nodes: == stays identity (TVM does not overload it on Relay exprs).
    __eq__ = RelayExpr.__eq__
    __hash__ = RelayExpr.__hash__

    def astype(self, dtype):
        from irlab.relay.op import tensor as _tensor

        return _tensor.cast(self, dtype)

    def __call__(self, *args):
        return Call(self, args)

    def astext(self, show_meta_data=True, annotate=None) -> str:
        from irlab.relay.printer import astext

        return astext(self, show_meta_data=show_meta_data)

    def __str__(self):
        from irlab.relay.printer import pretty_print

        return pretty_print(self)

    __repr__ = __str__


class Var(ExprWithOp):
    """A local variable. Each ``Var`` object is a distinct variable, whatever its name."""

    _is_variable = True
    name_hint: str
    type_annotation: object

    def __init__(self, name_hint, type_annotation=None, span=None):
        if isinstance(type_annotation, str):
            type_annotation = TensorType((), type_annotation)
        if type_annotation is not None and not isinstance(type_annotation, Type):
            raise IrlabError(f"type annotation of var {name_hint!r} must be a Type, "
                             f"got {type(type_annotation).__name__}")
        super().__init__(span, str(name_hint), type_annotation)

    @property
    def vid(self):
        """TVM's ``Id`` of the variable (what makes it distinct): an irlab ``Var`` is its
        own identity, so ``a.vid.same_as(b.vid)`` is ``a is b``."""
        return self


class Constant(ExprWithOp):
    """A constant tensor; ``data`` is an ``NDArray``."""

    data: object

    def __init__(self, data, span=None):
        if not isinstance(data, NDArray):
            data = nd_array(data)
        super().__init__(span, data)

    def _structural_key(self):
        array = np.asarray(self.data)  # the data itself: numpy() would copy it once more
        return (array.dtype.str, array.shape, array.tobytes())


class Call(ExprWithOp):
    """A call of an ``Op``, ``Function``, ``GlobalVar``, ``Var`` or ``Constructor`` on ``args``.

    ``type_args`` (the type arguments of a polymorphic callee, filled by type inference) are
    derived information, left out of structural equality: a parsed module is type-checked,
    a built one may not be."""

    _non_structural = ("type_args",)
    op: object
    args: tuple
    attrs: object
    type_args: tuple

    def __init__(self, op, args, attrs=None, type_args=None, span=None):
        if not isinstance(op, RelayExpr):
            raise IrlabError(f"Call target must be an Op, Function, GlobalVar or Var, "
                             f"got {type(op).__name__}")
        args = tuple(expect_expr(a, f"argument {i} of the call")
                     for i, a in enumerate(args))
        if attrs is not None and not isinstance(attrs, (Attrs, DictAttrs)):
            raise IrlabError(f"Call attrs must be an Attrs object, got {type(attrs).__name__}")
        super().__init__(span, op, args, attrs, tuple(type_args or ()))


class Tuple(ExprWithOp):
    """A tuple of expressions."""

    fields: tuple

    def __init__(self, fields, span=None):
        fields = tuple(expect_expr(f, f"tuple field {i}") for i, f in enumerate(fields))
        super().__init__(span, fields)

    def __len__(self):
        return len(self.fields)

    def __getitem__(self, index):
        if index >= len(self.fields):
            raise IndexError("tuple index out of range")
        return self.fields[index]

    def astype(self, dtype):
        raise IrlabError("astype cannot be applied to a tuple")

    @property
    def _structural_tree(self):
        """The empty tuple is a constant, not a graph node (as in TVM): ``let %_ = (); ()``
        equals a Let that uses one ``()`` object twice."""
        return not self.fields


class TupleGetItem(ExprWithOp):
    """Field ``index`` of a tuple-valued expression (printed ``%t.0``)."""

    tuple_value: object
    index: int

    def __init__(self, tuple_value, index, span=None):
        tuple_value = expect_expr(tuple_value, "TupleGetItem's tuple")
        super().__init__(span, tuple_value, int(index))


class Let(ExprWithOp):
    """``let var = value; body``."""

    _bind_fields = ("var",)
    var: Var
    value: object
    body: object

    def __init__(self, variable, value, body, span=None):
        if not isinstance(variable, Var):
            raise IrlabError(f"Let binds a Var, got {type(variable).__name__}")
        super().__init__(span, variable, expect_expr(value, "let value"),
                         expect_expr(body, "let body"))


class If(ExprWithOp):
    """``if (cond) { true_branch } else { false_branch }``; ``cond`` is a bool scalar."""

    cond: object
    true_branch: object
    false_branch: object

    def __init__(self, cond, true_branch, false_branch, span=None):
        super().__init__(span, expect_expr(cond, "if condition"),
                         expect_expr(true_branch, "true branch"),
                         expect_expr(false_branch, "false branch"))


class RefCreate(ExprWithOp):
    """``ref(value)``: a new mutable cell holding ``value``."""

    value: object

    def __init__(self, value, span=None):
        super().__init__(span, expect_expr(value, "ref's initial value"))


class RefRead(ExprWithOp):
    """``ref_read(ref)``: the value a cell holds now."""

    ref: object

    def __init__(self, ref, span=None):
        super().__init__(span, expect_expr(ref, "ref_read's reference"))


class RefWrite(ExprWithOp):
    """``ref_write(ref, value)``: store ``value`` in the cell; evaluates to ``()``."""

    ref: object
    value: object

    def __init__(self, ref, value, span=None):
        super().__init__(span, expect_expr(ref, "ref_write's reference"),
                         expect_expr(value, "ref_write's value"))


class TupleWrapper:
    """The tuple result of a multi-output op (``batch_norm``, ``split``); index it or ``astuple()``."""

    def __init__(self, tuple_value, size):
        self.tuple_value = tuple_value
        self.size = size

    def astuple(self):
        return self.tuple_value

    def astext(self):
        return self.tuple_value.astext()

    def __getitem__(self, index):
        if not isinstance(index, numbers.Integral):
            raise IrlabError(f"tuple index must be an integer, got {type(index).__name__}")
        if index < 0:
            index += self.size
        if not 0 <= index < self.size:
            raise IndexError("tuple index out of range")
        return TupleGetItem(self.tuple_value, index)

    def __len__(self):
        return self.size

    def __iter__(self):
        return (self[i] for i in range(self.size))

    def __repr__(self):
        return f"TupleWrapper({self.tuple_value!r}, {self.size})"


def var(name_hint, type_annotation=None, shape=None, dtype="float32", span=None) -> Var:
    """Create a variable: ``var("x", shape=(1, 3))`` or ``var("x", TensorType(...))``."""
    if type_annotation is not None and shape is not None:
        raise ValueError("Can only specify either type_annotation or shape.")
    if shape is not None:
        type_annotation = TensorType(shape, dtype)
    elif isinstance(type_annotation, str):
        type_annotation = TensorType((), type_annotation)
    return Var(name_hint, type_annotation, span)


def const(value, dtype=None, span=None) -> Constant:
    """A constant: Python int -> int32, float -> float32, bool -> bool; arrays keep their dtype,
    except that float64/int64 arrays given without ``dtype`` become float32/int32 (as TVM)."""
    if isinstance(dtype, TensorType):  # relay.const(0, relay.scalar_type("int32"))
        dtype = dtype.dtype
    if isinstance(value, NDArray):
        if dtype is None or dtype == value.dtype:
            return Constant(value, span)  # shares the array, as TVM's relay.const does
        return Constant(value.numpy().astype(dtype), span)
    if isinstance(value, (bool, np.bool_)):
        value = np.array(value, dtype=dtype or "bool")
    elif isinstance(value, (numbers.Number, list, tuple)):
        value = np.array(value, dtype=dtype)
    if not isinstance(value, (np.ndarray, np.generic)):
        raise IrlabError(f"relay.const cannot make a constant from {type(value).__name__}")
    value = np.asarray(value)
    if dtype is None:
        narrowed = {np.dtype("int64"): "int32", np.dtype("float64"): "float32"}
        dtype = narrowed.get(value.dtype)
    if dtype is not None:
        value = value.astype(dtype)
    return Constant(value, span)


def bind(expr, binds: dict):
    """Replace variables by expressions (``relay.bind``); binding a Function's params drops them."""
    from irlab.relay.expr_functor import ExprMutator
    from irlab.relay.function import Function

    class _Binder(ExprMutator):
        def visit_var(self, v):
            return binds.get(v, v)

    if isinstance(expr, Function):
        body = _Binder().visit(expr.body)
        params = [p for p in expr.params if p not in binds]
        if body is expr.body and len(params) == len(expr.params):
            return expr
        return Function(params, body, expr.ret_type, expr.type_params, expr.attrs, expr.span)
    return _Binder().visit(expr)


register_func("relay.ir.Call", lambda op, args, attrs=None: Call(op, args, attrs))

__all__ = ["Expr", "ExprWithOp", "Var", "Constant", "Call", "Tuple", "TupleGetItem", "Let",
           "If", "RefCreate", "RefRead", "RefWrite", "TupleWrapper", "var", "const", "bind",
           "GlobalVar", "Op"]
