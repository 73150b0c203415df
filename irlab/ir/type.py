"""Relay types: ``PrimType``, ``TensorType``, ``TupleType``, ``FuncType`` and ``IncompleteType``.

Types are values: two ``TensorType((1, 3), "float32")`` are equal and hash alike.
``IncompleteType`` is the exception: each one is a distinct unknown that type inference solves.
"""

from __future__ import annotations

import numbers

from irlab.errors import IrlabError
from irlab.runtime.dtype import normalize_dtype
from irlab.ir.node import Node


class Type(Node):
    """Base of all types."""

    _value_semantics = True

    def astext(self) -> str:
        return type_to_text(self)

    def __str__(self):
        return type_to_text(self)

    __repr__ = __str__


class PrimType(Type):
    """A scalar of a primitive dtype, as used by TIR (``PrimType("int32")``)."""

    dtype: str

    def __init__(self, dtype):
        super().__init__(normalize_dtype(dtype))


def _to_dim(dim):
    """Shape entries are plain Python ints (a TIR IntImm or numpy integer is converted)."""
    if isinstance(dim, bool):
        raise IrlabError(f"shape entries must be integers, got {dim!r}")
    if isinstance(dim, numbers.Integral):
        return int(dim)
    value = getattr(dim, "value", None)  # tir.IntImm
    if isinstance(value, numbers.Integral):
        return int(value)
    raise IrlabError(f"shape entries must be integers, got {dim!r}")


class TensorType(Type):
    """A tensor of static ``shape`` (tuple of ints) and ``dtype``. Rank 0 is a scalar."""

    shape: tuple
    dtype: str

    def __init__(self, shape, dtype="float32"):
        if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
            shape = (shape,)
        try:
            dims = tuple(_to_dim(d) for d in shape)
        except TypeError:
            raise IrlabError(f"tensor shape must be a sequence of integers, got {shape!r}") from None
        if any(d < 0 for d in dims):
            raise IrlabError(f"tensor shape has a negative dimension: {dims}")
        super().__init__(dims, normalize_dtype(dtype))

    @property
    def concrete_shape(self) -> tuple:
        return self.shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


def scalar_type(dtype) -> TensorType:
    """A rank-0 tensor type (``relay.scalar_type("float32")``)."""
    return TensorType((), dtype)


class TupleType(Type):
    """The type of a tuple value: one type per field."""

    fields: tuple

    def __init__(self, fields):
        fields = tuple(fields)
        for f in fields:
            if not isinstance(f, Type):
                raise IrlabError(f"TupleType fields must be types, got {f!r}")
        super().__init__(fields)


class FuncType(Type):
    """The type of a function: ``fn (arg_types) -> ret_type``."""

    arg_types: tuple
    ret_type: Type
    type_params: tuple
    type_constraints: tuple

    def __init__(self, arg_types, ret_type, type_params=(), type_constraints=()):
        super().__init__(tuple(arg_types), ret_type, tuple(type_params or ()),
                         tuple(type_constraints or ()))


class IncompleteType(Type):
    """An unknown type to be solved by type inference. Each instance is a distinct unknown."""

    _value_semantics = False
    kind: int

    def __init__(self, kind=0):
        super().__init__(kind)


def type_to_text(ty) -> str:
    """TVM's Relay text form of a type: ``Tensor[(1, 3), float32]``, ``(T1, T2)``, ``fn (T) -> R``."""
    if ty is None:
        return "_"
    if isinstance(ty, TensorType):
        if not ty.shape:
            return ty.dtype
        if len(ty.shape) == 1:
            return f"Tensor[({ty.shape[0]}), {ty.dtype}]"
        return f"Tensor[({', '.join(str(d) for d in ty.shape)}), {ty.dtype}]"
    if isinstance(ty, TupleType):
        if len(ty.fields) == 1:
            return f"({type_to_text(ty.fields[0])},)"
        return "(" + ", ".join(type_to_text(f) for f in ty.fields) + ")"
    if isinstance(ty, FuncType):
        args = ", ".join(type_to_text(a) for a in ty.arg_types)
        return f"fn ({args}) -> {type_to_text(ty.ret_type)}"
    if isinstance(ty, PrimType):
        return ty.dtype
    if isinstance(ty, IncompleteType):
        return "?"
    raise IrlabError(f"cannot print type {type(ty).__name__}")


def flatten_tuple_type(ty) -> list:
    """The leaf types of ``ty``: itself, or the fields of a tuple type, nested tuples
    flattened in order (TVM's ``FlattenTupleType``; how a backend counts a value's tensors)."""
    if isinstance(ty, TupleType):
        return [leaf for field in ty.fields for leaf in flatten_tuple_type(field)]
    return [ty]
