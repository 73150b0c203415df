"""The pattern nodes of the dataflow pattern language and their constructors.

A pattern describes a piece of a Relay graph. Leaves match anything (``wildcard()``), a
variable (``is_var``), a constant (``is_constant``) or one given expression/operator
(``is_expr``, ``is_op``); calling a pattern builds a call pattern; ``|`` is an alternative::

    conv = is_op("nn.conv2d")(wildcard(), is_constant())
    pat = is_op("nn.relu")(conv.optional(lambda x: is_op("nn.bias_add")(x, wildcard())))
    pat.match(relu_of_conv)          # -> True / False

A pattern node used twice stands for the *same* expression both times: ``x = wildcard();
is_op("add")(x, x)`` only matches ``add(a, a)``. Patterns compare by identity.
"""

from __future__ import annotations

from typing import Callable

from irlab.errors import IrlabError
from irlab.ir.attrs import DictAttrs, normalize_attr_value
from irlab.runtime.dtype import normalize_dtype
from irlab.ir.expr import RelayExpr
from irlab.ir.node import Node
from irlab.ir.op import Op
from irlab.ir.type import Type


def _as_pattern(value, what):
    if isinstance(value, DFPattern):
        return value
    if isinstance(value, RelayExpr):  # convenience: an expression stands for itself
        return ExprPattern(value)
    raise IrlabError(f"{what} must be a pattern (DFPattern), got {type(value).__name__}")


def _pattern_list(values, what):
    if values is None:
        return None
    if isinstance(values, (DFPattern, RelayExpr)) or not hasattr(values, "__iter__"):
        raise IrlabError(f"{what} must be a list of patterns or None")
    return tuple(_as_pattern(v, f"{what}[{i}]") for i, v in enumerate(values))


class DFPattern(Node):
    """Base of all patterns: call sugar, ``|``, arithmetic sugar and the constraint builders."""

    def __call__(self, *args):
        args = None if len(args) == 1 and args[0] is None else list(args)
        return CallPattern(self, args)

    def __or__(self, other):
        return AltPattern(self, other)

    def __add__(self, other):
        return is_op("add")(self, other)

    def __sub__(self, other):
        return is_op("subtract")(self, other)

    def __mul__(self, other):
        return is_op("multiply")(self, other)

    def __truediv__(self, other):
        return is_op("divide")(self, other)

    def has_attr(self, attrs: dict) -> "AttrPattern":
        """Also require attributes: op attrs on an ``Op``, call attrs on a ``Call``,
        function attrs on a ``Function`` (values compared by value)."""
        return AttrPattern(self, attrs)

    def has_type(self, ttype: Type) -> "TypePattern":
        return TypePattern(self, ttype)

    def has_dtype(self, dtype) -> "DataTypePattern":
        return DataTypePattern(self, dtype)

    def has_shape(self, shape) -> "ShapePattern":
        return ShapePattern(self, shape)

    def match(self, expr) -> bool:
        """Whether ``expr`` matches this pattern."""
        from irlab.relay.dataflow_pattern.matcher import match

        return match(self, expr)

    def partition(self, expr, attrs=None, check: Callable = lambda x: True):
        """Replace every match by a call of a function holding the matched subgraph."""
        from irlab.relay.dataflow_pattern.rewrite import partition

        return partition(self, expr, attrs, check)

    def dominates(self, parent: "DFPattern", path: "DFPattern" = None) -> "DominatorPattern":
        """This pattern (the child) dominates ``parent`` through nodes matching ``path``."""
        return DominatorPattern(parent, wildcard() if path is None else path, self)

    def optional(self, option_constructor: Callable) -> "AltPattern":
        """Match this pattern, or ``option_constructor(self)`` (an optional user of it)."""
        return self | option_constructor(self)

    def astext(self) -> str:
        return _PatternPrinter().text(self)

    def __str__(self):
        return self.astext()

    __repr__ = __str__


class ExprPattern(DFPattern):
    """Matches one expression, compared structurally (an ``Op`` by identity)."""

    expr: object

    def __init__(self, expr):
        if not isinstance(expr, RelayExpr):
            raise IrlabError(f"is_expr takes a Relay expression, got {type(expr).__name__}")
        super().__init__(expr)


class VarPattern(DFPattern):
    """Matches a ``Var``; named patterns only match variables with that name hint."""

    name: str

    def __init__(self, name_hint: str = ""):
        super().__init__(str(name_hint))

    @property
    def name_hint(self) -> str:
        return self.name


class ConstantPattern(DFPattern):
    """Matches any ``Constant``."""

    def __init__(self):
        super().__init__()


class WildcardPattern(DFPattern):
    """Matches any expression."""

    def __init__(self):
        super().__init__()


class CallPattern(DFPattern):
    """Matches a call; ``args=None`` matches any arguments."""

    op: object
    args: object

    def __init__(self, op, args):
        super().__init__(_as_pattern(op, "the callee of a call pattern"),
                         _pattern_list(args, "call pattern args"))


class FunctionPattern(DFPattern):
    """Matches a ``Function``; ``params=None`` matches any parameters."""

    params: object
    body: object

    def __init__(self, params, body):
        super().__init__(_pattern_list(params, "function pattern params"),
                         _as_pattern(body, "function pattern body"))


class TuplePattern(DFPattern):
    """Matches a ``Tuple``; ``fields=None`` matches any fields."""

    fields: object

    def __init__(self, fields):
        super().__init__(_pattern_list(fields, "tuple pattern fields"))

    def __getitem__(self, index: int):
        if self.fields is None or index >= len(self.fields):
            raise IndexError("TuplePattern index out of range")
        return self.fields[index]

    def __len__(self):
        return 0 if self.fields is None else len(self.fields)


class TupleGetItemPattern(DFPattern):
    """Matches ``tuple.index``; ``index=None`` (stored as -1) matches any index."""

    tuple: object
    index: int

    def __init__(self, tuple_value, index=None):
        super().__init__(_as_pattern(tuple_value, "the tuple of a TupleGetItem pattern"),
                         -1 if index is None else int(index))


class IfPattern(DFPattern):
    """Matches ``if (cond) {true_branch} else {false_branch}``."""

    cond: object
    true_branch: object
    false_branch: object

    def __init__(self, cond, true_branch, false_branch):
        super().__init__(_as_pattern(cond, "if condition"),
                         _as_pattern(true_branch, "if true branch"),
                         _as_pattern(false_branch, "if false branch"))


class LetPattern(DFPattern):
    """Matches ``let var = value; body``."""

    var: object
    value: object
    body: object

    def __init__(self, var, value, body):
        super().__init__(_as_pattern(var, "let var"), _as_pattern(value, "let value"),
                         _as_pattern(body, "let body"))


class AltPattern(DFPattern):
    """Matches ``left``, or else ``right``."""

    left: object
    right: object

    def __init__(self, left, right):
        super().__init__(_as_pattern(left, "the left alternative"),
                         _as_pattern(right, "the right alternative"))


class TypePattern(DFPattern):
    """Matches ``pattern`` on expressions whose type is ``type``."""

    pattern: object
    type: object

    def __init__(self, pattern, ttype):
        if not isinstance(ttype, Type):
            raise IrlabError(f"has_type takes a Type, got {type(ttype).__name__}")
        super().__init__(_as_pattern(pattern, "the typed pattern"), ttype)


class DataTypePattern(DFPattern):
    """Matches ``pattern`` on tensors of dtype ``dtype``."""

    pattern: object
    dtype: str

    def __init__(self, pattern, dtype):
        super().__init__(_as_pattern(pattern, "the typed pattern"), normalize_dtype(dtype))


class ShapePattern(DFPattern):
    """Matches ``pattern`` on tensors of shape ``shape``."""

    pattern: object
    shape: tuple

    def __init__(self, pattern, shape):
        shape = normalize_attr_value(tuple(shape))
        if not all(isinstance(d, int) for d in shape):
            raise IrlabError(f"has_shape takes a list of integers, got {shape!r}")
        super().__init__(_as_pattern(pattern, "the shaped pattern"), shape)


class AttrPattern(DFPattern):
    """Matches ``pattern`` on expressions carrying the attributes ``attrs``."""

    pattern: object
    attrs: object

    def __init__(self, pattern, attrs):
        if not isinstance(attrs, DictAttrs):
            if not isinstance(attrs, dict):
                raise IrlabError(f"has_attr takes a dict, got {type(attrs).__name__}")
            attrs = DictAttrs(attrs)
        super().__init__(_as_pattern(pattern, "the attributed pattern"), attrs)


class DominatorPattern(DFPattern):
    """``child`` post-dominates ``parent``; every node between them matches ``path``."""

    parent: object
    path: object
    child: object

    def __init__(self, parent, path, child):
        super().__init__(_as_pattern(parent, "dominator parent"),
                         _as_pattern(path, "dominator path"),
                         _as_pattern(child, "dominator child"))


# ---------------------------------------------------------------------------------------------
# constructors (TVM's names)
def is_var(name: str = "") -> VarPattern:
    return VarPattern(name)


def is_constant() -> ConstantPattern:
    return ConstantPattern()


def is_expr(expr) -> ExprPattern:
    return ExprPattern(expr)


def is_op(op_name: str) -> ExprPattern:
    """The operator ``op_name`` (an unknown name raises ``OpNotRegisteredError``)."""
    return ExprPattern(Op.get(op_name))


def is_tuple(fields) -> TuplePattern:
    return TuplePattern(fields)


def is_tuple_get_item(tuple_value, index=None) -> TupleGetItemPattern:
    return TupleGetItemPattern(tuple_value, index)


def is_if(cond, true_branch, false_branch) -> IfPattern:
    return IfPattern(cond, true_branch, false_branch)


def is_let(var, value, body) -> LetPattern:
    return LetPattern(var, value, body)


def wildcard() -> WildcardPattern:
    return WildcardPattern()


def has_type(ttype, pattern=None) -> TypePattern:
    return TypePattern(wildcard() if pattern is None else pattern, ttype)


def has_dtype(dtype, pattern=None) -> DataTypePattern:
    return DataTypePattern(wildcard() if pattern is None else pattern, dtype)


def has_shape(shape, pattern=None) -> ShapePattern:
    return ShapePattern(wildcard() if pattern is None else pattern, shape)


def has_attr(attrs, pattern=None) -> AttrPattern:
    return (wildcard() if pattern is None else pattern).has_attr(attrs)


def dominates(parent, path, child) -> DominatorPattern:
    return DominatorPattern(parent, path, child)


# ---------------------------------------------------------------------------------------------
class _PatternPrinter:
    """Renders a pattern with the constructors that build it (shared nodes are repeated)."""

    def __init__(self):
        self.depth = 0

    def text(self, p) -> str:
        self.depth += 1
        try:
            if self.depth > 64:  # a pattern is a DAG and may be deep: keep the text bounded
                return "..."
            return self._text(p)
        finally:
            self.depth -= 1

    def _list(self, items):
        return "*" if items is None else ", ".join(self.text(i) for i in items)

    def _text(self, p) -> str:
        if isinstance(p, ExprPattern):
            if isinstance(p.expr, Op):
                return f'is_op("{p.expr.name}")'
            return f"is_expr({p.expr.astext() if hasattr(p.expr, 'astext') else p.expr})"
        if isinstance(p, VarPattern):
            return f'is_var("{p.name}")' if p.name else "is_var()"
        if isinstance(p, ConstantPattern):
            return "is_constant()"
        if isinstance(p, WildcardPattern):
            return "wildcard()"
        if isinstance(p, CallPattern):
            return f"{self.text(p.op)}({self._list(p.args)})"
        if isinstance(p, FunctionPattern):
            params = "None" if p.params is None else f"[{self._list(p.params)}]"
            return f"FunctionPattern({params}, {self.text(p.body)})"
        if isinstance(p, TuplePattern):
            return "is_tuple(None)" if p.fields is None else f"is_tuple([{self._list(p.fields)}])"
        if isinstance(p, TupleGetItemPattern):
            index = "" if p.index < 0 else f", {p.index}"
            return f"is_tuple_get_item({self.text(p.tuple)}{index})"
        if isinstance(p, IfPattern):
            return (f"is_if({self.text(p.cond)}, {self.text(p.true_branch)}, "
                    f"{self.text(p.false_branch)})")
        if isinstance(p, LetPattern):
            return f"is_let({self.text(p.var)}, {self.text(p.value)}, {self.text(p.body)})"
        if isinstance(p, AltPattern):
            return f"({self.text(p.left)} | {self.text(p.right)})"
        if isinstance(p, TypePattern):
            return f"{self.text(p.pattern)}.has_type({p.type})"
        if isinstance(p, DataTypePattern):
            return f'{self.text(p.pattern)}.has_dtype("{p.dtype}")'
        if isinstance(p, ShapePattern):
            return f"{self.text(p.pattern)}.has_shape({list(p.shape)})"
        if isinstance(p, AttrPattern):
            return f"{self.text(p.pattern)}.has_attr({p.attrs.as_dict()!r})"
        if isinstance(p, DominatorPattern):
            return (f"dominates({self.text(p.parent)}, {self.text(p.path)}, "
                    f"{self.text(p.child)})")
        return type(p).__name__


__all__ = [
    "DFPattern", "ExprPattern", "VarPattern", "ConstantPattern", "WildcardPattern",
    "CallPattern", "FunctionPattern", "TuplePattern", "TupleGetItemPattern", "IfPattern",
    "LetPattern", "AltPattern", "TypePattern", "DataTypePattern", "ShapePattern", "AttrPattern",
    "DominatorPattern", "is_var", "is_constant", "is_expr", "is_op", "is_tuple",
    "is_tuple_get_item", "is_if", "is_let", "wildcard", "has_type", "has_dtype", "has_shape",
    "has_attr", "dominates",
]
