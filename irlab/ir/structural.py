"""Structural equality and hashing of IR, independent of object identity.

``structural_equal(a, b)`` walks both sides field by field (the fields each node class declares)
and maps variables by their binding site: ``fn (%x) { %x }`` equals ``fn (%y) { %y }``.
Free variables compare by identity unless ``map_free_vars=True``. Non-leaf nodes must be shared
alike on both sides (a DAG is not equal to its unfolded tree), but only for Relay expressions:
TIR nodes are trees whose sharing does not matter (as in TVM). Both walks are iterative.

Node classes take part through three class attributes:
- ``_bind_fields``: fields holding the variables a node defines (Function.params, Let.var);
- ``_is_variable = True``: the node is a variable, compared through the mapping;
- ``_structural_key()``: a leaf's comparable/hashable value (a Constant's bytes).
"""

from __future__ import annotations

import difflib
import hashlib

from irlab.errors import StructuralMismatchError
from irlab.ir.attrs import Attrs
from irlab.ir.expr import GlobalVar, RelayExpr
from irlab.ir.module import IRModule
from irlab.ir.node import Node
from irlab.ir.type import GlobalTypeVar, IncompleteType


def _is_var(node) -> bool:
    return getattr(type(node), "_is_variable", False)


def _bound_vars(node):
    for name in getattr(type(node), "_bind_fields", ()):
        value = getattr(node, name)
        if isinstance(value, (tuple, list)):
            yield from value
        elif value is not None:
            yield value


class _Mismatch(Exception):
    def __init__(self, lhs, rhs, why):
        self.lhs, self.rhs, self.why = lhs, rhs, why


class _Equal:
    def __init__(self, map_free_vars):
        self.map_free_vars = map_free_vars
        self.var_map: dict = {}
        self.var_map_rev: dict = {}
        self.node_map: dict = {}
        self.node_map_rev: dict = {}

    def bind(self, lhs, rhs, stack):
        if lhs in self.var_map or rhs in self.var_map_rev:
            if self.var_map.get(lhs) is not rhs:
                raise _Mismatch(lhs, rhs, "variable defined twice")
            return
        self.var_map[lhs] = rhs
        self.var_map_rev[rhs] = lhs
        # Annotations of a defined variable are part of the structure.
        stack.append((type(lhs)._structural_fields, lhs, rhs))

    def run(self, lhs, rhs):
        stack = [(None, lhs, rhs)]
        while stack:
            fields, a, b = stack.pop()
            if fields is not None:  # compare the listed fields of two nodes of the same class
                for name in reversed(fields):
                    if name == "name_hint" and _is_var(a):
                        continue
                    stack.append((None, getattr(a, name), getattr(b, name)))
                continue
            self.compare(a, b, stack)

    def compare(self, a, b, stack):
        # No shortcut for ``a is b``: a shared subtree can still use variables that the two
        # sides bind differently (a reordered loop nest reuses its body object).
        if a is b and not isinstance(a, (Node, tuple, list)):
            return
        if _unknown_type(a) and _unknown_type(b):
            return  # no annotation and ``_`` (an IncompleteType) both say "not known"
        if isinstance(a, (tuple, list)):
            if not isinstance(b, (tuple, list)) or len(a) != len(b):
                raise _Mismatch(a, b, "sequences differ in length")
            for x, y in reversed(list(zip(a, b))):
                stack.append((None, x, y))
            return
        if not isinstance(a, Node) or not isinstance(b, Node):
            if type(a) is not type(b) and not (_number(a) and _number(b)):
                raise _Mismatch(a, b, "values differ")
            if a != b and not (a != a and b != b) and not _close_floats(a, b):
                raise _Mismatch(a, b, "values differ")  # (NaN equals NaN here)
            return
        if type(a) is not type(b):
            raise _Mismatch(a, b, f"{type(a).__name__} vs {type(b).__name__}")
        if _is_var(a):
            mapped = self.var_map.get(a)
            if mapped is not None:
                if mapped is not b:
                    raise _Mismatch(a, b, "variables do not correspond")
                return
            if b in self.var_map_rev:
                raise _Mismatch(a, b, "variables do not correspond")
            if a is b or self.map_free_vars:
                self.bind(a, b, stack)
                return
            raise _Mismatch(a, b, "different free variables")
        if isinstance(a, (GlobalVar, GlobalTypeVar)):
            if a.name_hint != b.name_hint:
                raise _Mismatch(a, b, "different global names")
            return
        key = getattr(a, "_structural_key", None)
        if key is not None:
            if key() != b._structural_key():
                raise _Mismatch(a, b, "values differ")
            return
        if isinstance(a, Attrs):  # field by field, so float attrs get the float tolerance
            stack.append((type(a)._structural_fields, a, b))
            return
        if a._value_semantics:
            if not _has_type_vars(a):
                if a != b:
                    raise _Mismatch(a, b, "values differ")
                return
            # A type over type variables (``fn [A](A) -> A``): field by field, mapping the
            # variables it binds.
            for va, vb in zip(_bound_vars(a), _bound_vars(b)):
                self.bind(va, vb, stack)
            stack.append((type(a)._structural_fields, a, b))
            return
        if not self.record(a, b):
            return
        for va, vb in zip(_bound_vars(a), _bound_vars(b)):
            self.bind(va, vb, stack)
        if len(list(_bound_vars(a))) != len(list(_bound_vars(b))):
            raise _Mismatch(a, b, "different number of bound variables")
        stack.append((type(a)._structural_fields, a, b))

    def record(self, a, b) -> bool:
        """Note that a corresponds to b; False if that pair was already compared."""
        prev = self.node_map.get(a)
        if prev is b:
            return False
        if not (isinstance(a, RelayExpr) and isinstance(b, RelayExpr)) or \
                getattr(a, "_structural_tree", False):
            # Only Relay expressions are graph nodes (as in TVM): TIR expressions, ranges,
            # statements are trees, so a pass reusing one Ramp or Range in several places
            # equals its parsed, unshared copy. Leaf values of a higher IR (Relax's shapes in
            # struct info) say ``_structural_tree``: printed text cannot show their sharing.
            return True
        if prev is not None:
            if prev is not b:
                raise _Mismatch(a, b, "sub-expression shared differently")
            return False
        if b in self.node_map_rev:
            raise _Mismatch(a, b, "sub-expression shared differently")
        self.node_map[a] = b
        self.node_map_rev[b] = a
        return True


# TVM compares floating-point fields with this absolute tolerance, so an attribute written
# as 1e-5 equals one read back from a float32 constant (9.99999974e-06).
FLOAT_ATOL = 1e-9


def _unknown_type(value) -> bool:
    return value is None or isinstance(value, IncompleteType)


def _has_type_vars(value) -> bool:
    """Whether a value node (a type) mentions a type variable, which compares by mapping."""
    if isinstance(value, (tuple, list)):
        return any(_has_type_vars(v) for v in value)
    if not isinstance(value, Node):
        return False
    if _is_var(value):
        return True
    return value._value_semantics and any(_has_type_vars(v) for v in value.children())


def _close_floats(a, b) -> bool:
    return isinstance(a, float) and isinstance(b, float) and abs(a - b) < FLOAT_ATOL


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _module_pairs(lhs: IRModule, rhs: IRModule):
    lnames = {gv.name_hint for gv in lhs.functions}
    rnames = {gv.name_hint for gv in rhs.functions}
    if lnames != rnames:
        raise _Mismatch(lhs, rhs, f"function names differ: {sorted(lnames)} vs {sorted(rnames)}")
    ltypes = {t.name_hint: d for t, d in lhs.type_definitions.items()}
    rtypes = {t.name_hint: d for t, d in rhs.type_definitions.items()}
    if set(ltypes) != set(rtypes):
        raise _Mismatch(lhs, rhs, f"type definitions differ: {sorted(ltypes)} vs "
                                  f"{sorted(rtypes)}")
    return [(ltypes[n], rtypes[n]) for n in sorted(ltypes)] + \
        [(lhs[n], rhs[n]) for n in sorted(lnames)]


def _find_mismatch(lhs, rhs, map_free_vars):
    checker = _Equal(map_free_vars)
    if isinstance(lhs, IRModule) or isinstance(rhs, IRModule):
        if not (isinstance(lhs, IRModule) and isinstance(rhs, IRModule)):
            return _Mismatch(lhs, rhs, "module vs non-module")
        try:
            pairs = _module_pairs(lhs, rhs)
        except _Mismatch as m:
            return m
        lhs, rhs = [p[0] for p in pairs], [p[1] for p in pairs]
    try:
        checker.run(lhs, rhs)
    except _Mismatch as m:
        return m
    return None


def structural_equal(lhs, rhs, map_free_vars=False) -> bool:
    """True when ``lhs`` and ``rhs`` have the same structure (variables mapped by definition)."""
    return _find_mismatch(lhs, rhs, map_free_vars) is None


def _text(x) -> str:
    astext = getattr(x, "astext", None)
    if callable(astext):
        try:
            return astext()
        except Exception:  # a diff must still show something
            pass
    return repr(x)


def assert_structural_equal(lhs, rhs, map_free_vars=False):
    """Raise ``StructuralMismatchError`` with the first mismatch and a text diff of both sides."""
    mismatch = _find_mismatch(lhs, rhs, map_free_vars)
    if mismatch is None:
        return
    left, right = _text(lhs), _text(rhs)
    diff = "\n".join(difflib.unified_diff(left.splitlines(), right.splitlines(), "lhs", "rhs",
                                          lineterm=""))
    first = f"{mismatch.why}: {_short(mismatch.lhs)}  vs  {_short(mismatch.rhs)}"
    raise StructuralMismatchError(
        f"structural mismatch: {first}\n{diff or '(the printed texts are identical)'}")


def _short(x, limit=120) -> str:
    text = _text(x).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- hashing ------------------------------------------------------------------------------
class _Hasher:
    def __init__(self, map_free_vars):
        self.map_free_vars = map_free_vars
        self.var_index: dict = {}
        self.memo: dict = {}

    def run(self, root) -> int:
        # Iterative post-order: a node's hash is computed after its field values'.
        stack = [(root, False)]
        while stack:
            node, ready = stack.pop()
            if ready:
                self.memo[id(node)] = self.combine(node)
                continue
            if id(node) in self.memo:
                continue
            if isinstance(node, Node) and _is_var(node):
                self.memo[id(node)] = self.var_hash(node)
                continue
            stack.append((node, True))
            if isinstance(node, Node) and not node._value_semantics:
                for var in _bound_vars(node):
                    self.define(var)
            for child in reversed(self.parts(node)):
                if isinstance(child, (Node, tuple, list)) and id(child) not in self.memo:
                    stack.append((child, False))
        return self.memo[id(root)]

    def define(self, var):
        if var not in self.var_index:
            self.var_index[var] = len(self.var_index)

    def var_hash(self, var) -> int:
        if var not in self.var_index:
            if not self.map_free_vars:
                return hash(("free", id(var)))
            self.define(var)
        # Annotations that are identity nodes (a Relax Var's struct info, which may hold
        # symbolic dims) are left out: their plain hash would be their identity.
        annotation = [value for value in (getattr(var, f) for f in type(var)._structural_fields
                                          if f != "name_hint")
                      if not (isinstance(value, Node) and not value._value_semantics)
                      and not _has_type_vars(value)]
        return hash(("var", self.var_index[var], _plain(annotation)))

    @staticmethod
    def parts(node):
        if isinstance(node, (tuple, list)):
            return list(node)
        if isinstance(node, Node):
            if node._value_semantics or getattr(node, "_structural_key", None) is not None:
                return []
            if isinstance(node, GlobalVar):
                return []
            return [getattr(node, f) for f in node._structural_fields]
        return []

    def value(self, x):
        if isinstance(x, (Node, tuple, list)):
            return self.memo[id(x)]
        return _plain(x)

    def combine(self, node) -> int:
        if isinstance(node, (tuple, list)):
            return hash(("seq",) + tuple(self.value(x) for x in node))
        if isinstance(node, GlobalVar):
            return hash(("global", node.name_hint))
        key = getattr(node, "_structural_key", None)
        if key is not None:
            return hash((type(node).__name__, key()))
        if node._value_semantics:
            # type variables compare by mapping, not identity: hash around them
            return hash((type(node).__name__, "polymorphic")) if _has_type_vars(node) \
                else hash(node)
        return hash((type(node).__name__,) + tuple(self.value(x) for x in self.parts(node)))


def _plain(x):
    try:
        return hash(x)
    except TypeError:
        return hash(repr(x))


def structural_hash(node, map_free_vars=False) -> int:
    """A hash consistent with ``structural_equal``: equal programs hash alike."""
    if isinstance(node, IRModule):
        items = sorted((gv.name_hint, f) for gv, f in node.functions.items())
        return hash(tuple((name, _Hasher(map_free_vars).run(f)) for name, f in items))
    return _Hasher(map_free_vars).run(node)


def structural_fingerprint(node) -> str:
    """A short hex digest of ``structural_hash`` (stable within one process)."""
    return hashlib.sha1(str(structural_hash(node)).encode()).hexdigest()[:16]
