"""Runtime containers the Relax VM passes between instructions (TVM's ``runtime.container``)."""

from __future__ import annotations

from irlab.errors import IrlabError


class ShapeTuple(tuple):
    """A tensor shape as a runtime value: an immutable tuple of Python ints.

    ``ShapeTuple([1, 2]) == (1, 2)`` and it hashes as a tuple, so shape constants dedupe."""

    __slots__ = ()

    def __new__(cls, shape=()):
        try:
            dims = tuple(int(d) for d in shape)
        except (TypeError, ValueError):
            raise IrlabError(f"ShapeTuple takes integers, got {shape!r}") from None
        return super().__new__(cls, dims)

    def __eq__(self, other):
        """Equal to a tuple or list of the same dims (as TVM's ShapeTuple)."""
        if isinstance(other, list):
            return list(self) == other
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__

    def __repr__(self):
        return f"ShapeTuple({list(self)})"


class String(str):
    """A runtime string (TVM's ``runtime.String``): a Python ``str``."""

    __slots__ = ()


__all__ = ["ShapeTuple", "String"]
