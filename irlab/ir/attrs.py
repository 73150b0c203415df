"""Typed attribute records of operators (``Conv2DAttrs`` ...) and ``DictAttrs`` of functions.

An attrs class declares its fields once, with defaults, in TVM's field order (the printer shows
non-default fields in that order)::

    class SoftmaxAttrs(Attrs):
        _type_key = "relay.attrs.SoftmaxAttrs"
        axis: int = -1

Values are normalized on construction: lists become tuples, numpy scalars become Python
scalars, so attrs compare and hash by value.
"""

from __future__ import annotations

import numbers

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.node import Node, NodeMeta

_ATTRS_TYPES: dict[str, type] = {}


def normalize_attr_value(value):
    """Lists -> tuples, numpy/TIR scalars -> Python scalars, recursively."""
    if isinstance(value, (list, tuple)):
        return tuple(normalize_attr_value(v) for v in value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return normalize_attr_value(value.tolist())
    inner = getattr(value, "value", None)  # tir.IntImm / FloatImm / StringImm
    if inner is not None and type(value).__name__ in ("IntImm", "FloatImm", "StringImm"):
        return normalize_attr_value(inner)
    return value


class _AttrsMeta(NodeMeta):
    def __new__(mcls, name, bases, namespace, **kwargs):
        annotations = dict(namespace.get("__annotations__", {}))
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        # Fields declared ``float`` take ints too (``a_min=0`` means 0.0), so values compare
        # and print the same however they were written.
        floats = set()
        for base in bases:
            floats |= getattr(base, "_float_fields", set())
        floats |= {k for k, v in annotations.items() if v in (float, "float")}
        cls._float_fields = floats
        key = namespace.get("_type_key")
        if key:
            _ATTRS_TYPES[key] = cls
        return cls


class Attrs(Node, metaclass=_AttrsMeta):
    """Base of typed operator attributes. Compare by value."""

    _value_semantics = True
    _type_key = "Attrs"

    def __init__(self, *args, **kwargs):
        for key in kwargs:
            if key not in self._fields:
                known = ", ".join(self._fields) or "none"
                raise IrlabError(
                    f"{type(self).__name__} has no attribute {key!r} (fields: {known})")
        super().__init__(*args, **kwargs)
        for name in self._fields:
            value = normalize_attr_value(getattr(self, name))
            if name in self._float_fields and isinstance(value, int) and not isinstance(
                    value, bool):
                value = float(value)
            object.__setattr__(self, name, value)

    def keys(self):
        return list(self._fields)

    def __getitem__(self, key):
        if key not in self._fields:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key, default=None):
        return getattr(self, key) if key in self._fields else default

    def non_default_items(self):
        """(name, value) for fields whose value differs from the declared default."""
        defaults = self._defaults
        return [(k, getattr(self, k)) for k in self._fields
                if k not in defaults or normalize_attr_value(defaults[k]) != getattr(self, k)]

    def __repr__(self):
        body = ", ".join(f"{k}={v!r}" for k, v in self.non_default_items())
        return f"{type(self).__name__}({body})"

    __str__ = __repr__


class TestAttrs(Attrs):
    """The attrs record TVM registers for tests of attrs plumbing (``attrs.TestAttrs``):
    ``make_node("attrs.TestAttrs", name="x")``, printed and parsed on any call."""

    __test__ = False  # not a pytest test class
    _type_key = "attrs.TestAttrs"
    axis: int = 10
    name: str = ""
    padding: tuple = ()


def get_attrs_type(type_key: str) -> type:
    if type_key == "DictAttrs":  # free-form attrs: what TVM's custom ops often declare
        return DictAttrs
    try:
        return _ATTRS_TYPES[type_key]
    except KeyError:
        raise IrlabError(f"no attrs type registered under {type_key!r}") from None


class DictAttrs(Node):
    """Free-form attributes of a function (``Primitive=1``, ``Composite="..."``).

    Keeps insertion order for printing; equality ignores order.
    """

    _value_semantics = True
    items: tuple

    def __init__(self, items=None):
        if isinstance(items, DictAttrs):
            items = items.items
        elif isinstance(items, dict):
            items = tuple(items.items())
        pairs = tuple((str(k), normalize_attr_value(v)) for k, v in (items or ()))
        super().__init__(pairs)

    def as_dict(self) -> dict:
        return dict(self.items)

    def keys(self):
        return [k for k, _ in self.items]

    def __getitem__(self, key):
        for k, v in self.items:
            if k == key:
                return v
        raise KeyError(key)

    def get(self, key, default=None):
        for k, v in self.items:
            if k == key:
                return v
        return default

    def __contains__(self, key):
        return any(k == key for k, _ in self.items)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.keys())

    def with_attr(self, key, value) -> "DictAttrs":
        d = self.as_dict()
        d[key] = value
        return DictAttrs(d)

    def __eq__(self, other):
        if not isinstance(other, DictAttrs):
            return NotImplemented
        return dict(self.items) == dict(other.items)

    def __hash__(self):
        return hash(frozenset(self.items))

    def __repr__(self):
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self.items) + "}"


def make_node(type_key: str, **fields):
    """TVM's ``tvm.ir.make_node``: an attrs node from its type key and fields
    (``make_node("DictAttrs", Primitive=1)``, ``make_node("relay.attrs.ConcatenateAttrs",
    axis=1)``)."""
    if type_key == "DictAttrs":
        return DictAttrs(fields)
    return get_attrs_type(type_key)(**fields)
