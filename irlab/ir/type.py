"""Relay types: ``PrimType``, ``TensorType``, ``TupleType``, ``FuncType``, ``IncompleteType``,
and the types of polymorphism, algebraic data types and references (``TypeVar``,
``GlobalTypeVar``, ``TypeCall``, ``RelayRefType``).

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

    def __eq__(self, other):
        """Types compare by value; a type over type variables compares structurally, the
        variables it binds mapped (``fn [A](A) -> A`` equals ``fn [B](B) -> B``), as TVM."""
        result = super().__eq__(other)
        if result is not False or not isinstance(other, Type) or not mentions_type_var(self):
            return result
        from irlab.ir.structural import structural_equal

        return structural_equal(self, other)

    def __hash__(self):
        if mentions_type_var(self):  # consistent with the structural __eq__ above
            return hash((type(self).__name__, "polymorphic"))
        return super().__hash__()

    def astext(self) -> str:
        return type_to_text(self)

    def __str__(self):
        return type_to_text(self)

    __repr__ = __str__


def mentions_type_var(value) -> bool:
    """Whether a type (or a sequence of them) mentions a ``TypeVar``."""
    if isinstance(value, (TensorType, PrimType, IncompleteType)):
        return False
    if isinstance(value, (tuple, list)):
        return any(mentions_type_var(v) for v in value)
    if isinstance(value, TypeVar):
        return True
    if isinstance(value, Type) and value._value_semantics:
        return any(mentions_type_var(v) for v in value.children())
    return False


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
    if getattr(dim, "_is_any_dim", False):  # tir.Any: known only at run time
        return dim
    value = getattr(dim, "value", None)  # tir.IntImm
    if isinstance(value, numbers.Integral):
        return int(value)
    raise IrlabError(f"shape entries must be integers, got {dim!r}")


class TensorType(Type):
    """A tensor of ``shape`` (a tuple of ints; ``tir.Any()`` for a dimension known only at run
    time) and ``dtype``. Rank 0 is a scalar."""

    shape: tuple
    dtype: str

    def __init__(self, shape, dtype="float32"):
        if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
            shape = (shape,)
        if type(shape) is tuple and all(type(d) is int and d >= 0 for d in shape):
            dims = shape  # the common case (a numpy shape, a relation's result): already plain
        else:
            try:
                dims = tuple(_to_dim(d) for d in shape)
            except TypeError:
                raise IrlabError(f"tensor shape must be a sequence of integers, "
                                 f"got {shape!r}") from None
            if any(isinstance(d, int) and d < 0 for d in dims):
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
    """The type of a function: ``fn (arg_types) -> ret_type``; a polymorphic function's type
    binds its ``type_params`` (``fn [A](A) -> A``)."""

    _bind_fields = ("type_params",)
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


class TypeKind:
    """What a type variable stands for (TVM's ``TypeKind``): a type, or an ADT's name."""

    Type = 0
    ShapeVar = 1
    BaseType = 2
    Constraint = 4
    AdtHandle = 5
    TypeData = 6


class TypeVar(Type):
    """A type parameter of a polymorphic function or ADT (``fn [A](%x: A) -> A``).

    Each object is a distinct variable, whatever its name; structural equality maps the
    variables a ``Function``, ``FuncType`` or ``TypeData`` binds."""

    _value_semantics = False
    _is_variable = True
    name_hint: str
    kind: int

    def __init__(self, name_hint, kind=TypeKind.Type):
        super().__init__(str(name_hint), int(kind))

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


class GlobalTypeVar(Type):
    """The name of an algebraic data type in an ``IRModule`` (``List``); calling it with
    type arguments gives the type ``List[A]`` (a ``TypeCall``). Compared by name."""

    _value_semantics = False
    name_hint: str
    kind: int

    def __init__(self, name_hint, kind=TypeKind.AdtHandle):
        super().__init__(str(name_hint), int(kind))

    def __call__(self, *args):
        return TypeCall(self, args)

    def __eq__(self, other):
        return isinstance(other, GlobalTypeVar) and other.name_hint == self.name_hint

    def __hash__(self):
        return hash(("GlobalTypeVar", self.name_hint))


class TypeCall(Type):
    """An ADT applied to type arguments: ``List[int32]`` is ``TypeCall(List, [int32])``."""

    func: Type
    args: tuple

    def __init__(self, func, args):
        super().__init__(func, tuple(args))


class RelayRefType(Type):
    """The type of a mutable reference cell holding a ``value`` (``ref(%x)``)."""

    value: Type

    def __init__(self, value):
        super().__init__(value)


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
        params = ", ".join(type_to_text(a) for a in ty.type_params)
        params = f"[{params}]" if params else ""
        return f"fn {params}({args}) -> {type_to_text(ty.ret_type)}"
    if isinstance(ty, (TypeVar, GlobalTypeVar)):
        return ty.name_hint
    if isinstance(ty, TypeCall):
        if not ty.args:
            return type_to_text(ty.func)
        return f"{type_to_text(ty.func)}[{', '.join(type_to_text(a) for a in ty.args)}]"
    if isinstance(ty, RelayRefType):
        return f"ref({type_to_text(ty.value)})"
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
