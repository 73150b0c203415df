"""What an operator's type relation sees, and how it reports (TVM's ``TypeReporter``).

A type relation is a function ``rel(ctx) -> Type`` registered with the op. It reads argument
types through ``ctx`` and returns the output type::

    def dense_rel(ctx):
        data = ctx.tensor(0, "data")
        if not ctx.known(1) and ctx.attrs.units is not None:   # infer an unannotated weight
            ctx.assign(1, TensorType((ctx.attrs.units, data.shape[-1]), data.dtype))
        weight = ctx.tensor(1, "weight")
        ctx.expect(weight.shape[1] == data.shape[-1],
                   f"inner dimensions differ: data {data.shape} vs weight {weight.shape}")
        return TensorType(data.shape[:-1] + (weight.shape[0],), data.dtype)

- ``ctx.arg(i)`` / ``ctx.tensor(i)`` raise ``Defer`` when argument ``i`` is not known yet; the
  solver retries the relation once other relations have filled it in.
- ``ctx.assign(i, ty)`` fills an unknown argument type (or checks it equals ``ty``).
- ``ctx.fail(msg)`` / ``ctx.expect(cond, msg)`` reject the call; the solver turns the message into
  an error naming the op and pointing at the call in the printed program.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.type import IncompleteType, TensorType, TupleType, Type


class Defer(Exception):
    """An argument type is still unknown: try this relation again later."""


class TypeRelationError(IrlabError):
    """A relation rejected its inputs. The message says what was expected and what was found."""


class RelationContext:
    """The view of one call that a type relation works on."""

    def __init__(self, op_name, arg_types, attrs, resolve=None, unify=None, arg_names=None):
        self.op_name = op_name
        self._arg_types = list(arg_types)
        self.attrs = attrs
        self._resolve = resolve or (lambda t: t)
        self._unify = unify
        self._arg_names = list(arg_names or [])

    @property
    def num_args(self) -> int:
        return len(self._arg_types)

    def arg_name(self, i) -> str:
        return self._arg_names[i] if i < len(self._arg_names) else f"argument {i}"

    def known(self, i) -> bool:
        return is_complete(self._resolve(self._arg_types[i]))

    def arg(self, i) -> Type:
        ty = self._resolve(self._arg_types[i])
        if not is_complete(ty):
            raise Defer(i)
        return ty

    def tensor(self, i, name=None) -> TensorType:
        ty = self.arg(i)
        if not isinstance(ty, TensorType):
            self.fail(f"expected a tensor for {name or self.arg_name(i)}, got {ty}")
        return ty

    def tuple(self, i, name=None) -> TupleType:
        ty = self.arg(i)
        if not isinstance(ty, TupleType):
            self.fail(f"expected a tuple for {name or self.arg_name(i)}, got {ty}")
        return ty

    def assign(self, i, ty: Type):
        current = self._resolve(self._arg_types[i])
        if self._unify is None:
            if not is_complete(current):
                self._arg_types[i] = ty
                return
            if current != ty:
                self.fail(f"{self.arg_name(i)}: expected {ty}, got {current}")
            return
        try:
            self._unify(self._arg_types[i], ty)
        except TypeRelationError as err:
            self.fail(f"{self.arg_name(i)}: expected {ty}, got {current} ({err})")

    def fail(self, message):
        raise TypeRelationError(message)

    def expect(self, condition, message):
        if not condition:
            raise TypeRelationError(message)


def is_complete(ty) -> bool:
    """Whether ``ty`` is known all the way down (no IncompleteType, in a tuple's fields too)."""
    if ty is None or isinstance(ty, IncompleteType):
        return False
    if isinstance(ty, TupleType):
        return all(is_complete(f) for f in ty.fields)
    return True


def infer_call_type(op, arg_types, attrs=None) -> Type:
    """Run ``op``'s relation on fully known argument types (a convenience for tests and tools)."""
    rel = op.type_rel
    if rel is None:
        raise IrlabError(f"operator {op.name} has no type relation")
    names = [a.name for a in op.arguments]
    return rel(RelationContext(op.name, arg_types, attrs, arg_names=names))


def solve_relation(op, arg_types, attrs=None):
    """Run ``op``'s relation once on argument types that may be unknown (``IncompleteType``).

    Returns ``(output type, argument types)`` with the unknowns the relation filled in (e.g. a
    conv2d weight derived from ``channels`` and ``kernel_size``); raises ``Defer`` when the
    relation needs an argument it cannot derive.
    """
    solved = {}

    def resolve(t):
        return solved.get(t, t) if isinstance(t, IncompleteType) else t

    def unify(t, ty):
        current = resolve(t)
        if isinstance(current, IncompleteType):
            solved[current] = ty
        elif current != ty:
            raise TypeRelationError(f"{current} vs {ty}")

    ctx = RelationContext(op.name, arg_types, attrs, resolve=resolve, unify=unify,
                          arg_names=[a.name for a in op.arguments])
    return op.type_rel(ctx), [resolve(t) for t in arg_types]
