"""The IR node base: immutable objects whose fields are declared once, as class annotations.

A node class lists its fields as annotations::

    class Call(RelayExpr):
        op: RelayExpr
        args: tuple
        attrs: Attrs | None

From that one list the metaclass derives ``__slots__``, ``_fields`` (inherited fields first),
a positional/keyword constructor, ``with_fields``, children iteration and, for value classes,
``__eq__``/``__hash__``. Structural equality (``irlab.ir.structural_equal``) walks ``_fields``.

Two kinds of node:
- *identity nodes* (Relay expressions, TIR statements): ``a == b`` is ``a is b``; they hash by
  identity so they are cheap memo keys.
- *value nodes* (types, attrs): set ``_value_semantics = True`` and they compare by their fields.

Fields named in ``_non_structural`` (``span``, caches) are slots but are ignored by equality,
hashing and ``with_fields`` copies keep them unless given.
"""

from __future__ import annotations

from typing import Any, Iterator


class NodeMeta(type):
    """Builds ``__slots__`` and ``_fields`` from the annotations written in the class body."""

    def __new__(mcls, name, bases, namespace, **kwargs):
        annotations = namespace.get("__annotations__", {})
        own = tuple(k for k, v in annotations.items() if not str(v).startswith("ClassVar"))
        inherited: tuple = ()
        for base in bases:
            inherited += tuple(f for f in getattr(base, "_fields", ()) if f not in inherited)
        # A default written in the class body (``strides: tuple = (1, 1)``) would clash with
        # the slot of the same name: move it into ``_defaults``.
        defaults = {}
        for base in reversed(bases):
            defaults.update(getattr(base, "_defaults", {}))
        for f in own:
            if f in namespace:
                defaults[f] = namespace.pop(f)
        namespace["_defaults"] = defaults
        namespace["__slots__"] = tuple(f for f in own if f not in inherited) + tuple(
            namespace.get("__slots__", ())
        )
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        cls._fields = inherited + tuple(f for f in own if f not in inherited)
        non_structural = set()
        for klass in cls.__mro__:
            non_structural |= set(klass.__dict__.get("_non_structural", ()))
        cls._structural_fields = tuple(f for f in cls._fields if f not in non_structural)
        base = globals().get("Node")  # None while Node itself is being created
        if base is not None and "__hash__" not in namespace \
                and cls.__hash__ in (base.__hash__, object.__hash__):
            # identity nodes hash in C (object's): they are the memo keys of every pass
            cls.__hash__ = base.__hash__ if cls._value_semantics else object.__hash__
        return cls


class Node(metaclass=NodeMeta):
    """Base of every IR object. Immutable once constructed."""

    _value_semantics = False
    _non_structural = ()

    def __init__(self, *args, **kwargs):
        fields = self._fields
        if not kwargs and len(args) == len(fields):  # fast path: every field given in order
            setattr_ = object.__setattr__
            for name, value in zip(fields, args):
                setattr_(self, name, value)
            return
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes at most {len(fields)} fields")
        values = dict(zip(fields, args))
        for key, value in kwargs.items():
            if key not in fields:
                raise TypeError(f"{type(self).__name__} has no field {key!r}")
            if key in values:
                raise TypeError(f"{type(self).__name__} got field {key!r} twice")
            values[key] = value
        defaults = self._defaults
        for name in fields:
            object.__setattr__(self, name, values[name] if name in values else defaults.get(name))

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable; use with_fields(...)")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable")

    # -- generic helpers derived from _fields ---------------------------------------------
    def field_values(self) -> dict[str, Any]:
        """All declared fields by name (not ``fields()``: Relay's Tuple has a field of that
        name)."""
        return {name: getattr(self, name) for name in self._fields}

    def with_fields(self, **changes) -> "Node":
        """A copy with some fields replaced; returns ``self`` when nothing changes."""
        # plain loops, no generator or helper call: every copy-on-write rebuild comes here
        for key, value in changes.items():
            if getattr(self, key) is not value:
                break
        else:
            return self
        values = {name: getattr(self, name) for name in self._fields}
        values.update(changes)
        return type(self)(**values)

    def children(self) -> Iterator[Any]:
        """The structural field values, lists flattened, in declaration order."""
        for name in self._structural_fields:
            value = getattr(self, name)
            if isinstance(value, (tuple, list)):
                yield from value
            else:
                yield value

    def same_as(self, other) -> bool:
        """Identity comparison, as TVM's ``same_as``."""
        return self is other

    # -- value semantics ------------------------------------------------------------------
    def __eq__(self, other):
        if not self._value_semantics:
            return self is other
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._structural_fields)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        if not self._value_semantics:
            return id(self)
        return hash((type(self).__name__,) + tuple(
            getattr(self, f) for f in self._structural_fields))

    def __reduce__(self):
        # Pickling/copying goes through the constructor with all fields (slots have no __dict__).
        return (_rebuild, (type(self), self.field_values()))

    def __repr__(self):
        text = getattr(self, "astext", None)
        if callable(text):
            try:
                return text()
            except Exception:  # a repr must never raise; fall back to the field dump
                pass
        args = ", ".join(f"{k}={v!r}" for k, v in self.field_values().items())
        return f"{type(self).__name__}({args})"


def _rebuild(cls, values):
    return cls(**values)
