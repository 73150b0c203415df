"""Pattern matching on algebraic data types: patterns, ``Clause`` and ``Match`` (TVM's
``relay.adt``).

``match (%xs) { Cons(%h, _) => %h, Nil => 0 }`` is a ``Match`` of ``%xs`` with two clauses;
each clause's pattern binds the variables its right-hand side uses. ``complete=False``
(``match?``) allows values no clause matches.
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.adt import Constructor, TypeData
from irlab.ir.node import Node
from irlab.relay.expr import ExprWithOp, Var, expect_expr


class Pattern(Node):
    """Base of the patterns a ``Clause`` matches."""

    span: object
    _non_structural = ("span",)


class PatternWildcard(Pattern):
    """``_``: matches anything, binds nothing."""

    def __init__(self, span=None):
        super().__init__(span)


class PatternVar(Pattern):
    """``%x``: matches anything and binds it to ``var``."""

    _bind_fields = ("var",)
    var: Var

    def __init__(self, var, span=None):
        if not isinstance(var, Var):
            raise IrlabError(f"PatternVar binds a relay.Var, got {type(var).__name__}")
        super().__init__(span, var)


class PatternConstructor(Pattern):
    """``Cons(p0, p1)``: a value built by ``constructor`` whose fields match ``patterns``."""

    constructor: Constructor
    patterns: tuple

    def __init__(self, constructor, patterns=None, span=None):
        if not isinstance(constructor, Constructor):
            raise IrlabError(f"PatternConstructor needs a Constructor, got "
                             f"{type(constructor).__name__}")
        patterns = tuple(patterns or ())
        if len(patterns) != len(constructor.inputs):
            raise IrlabError(f"constructor {constructor.name_hint} takes "
                             f"{len(constructor.inputs)} fields, the pattern has "
                             f"{len(patterns)}")
        super().__init__(span, constructor, patterns)


class PatternTuple(Pattern):
    """``(p0, p1)``: a tuple whose fields match ``patterns``."""

    patterns: tuple

    def __init__(self, patterns=None, span=None):
        super().__init__(span, tuple(patterns or ()))


def pattern_vars(pattern) -> list:
    """The variables a pattern binds, left to right."""
    if isinstance(pattern, PatternVar):
        return [pattern.var]
    if isinstance(pattern, (PatternConstructor, PatternTuple)):
        return [v for p in pattern.patterns for v in pattern_vars(p)]
    return []


class Clause(Node):
    """``lhs => rhs``: when the matched value fits the pattern ``lhs``, the match is ``rhs``."""

    lhs: Pattern
    rhs: object

    def __init__(self, lhs, rhs):
        if not isinstance(lhs, Pattern):
            raise IrlabError(f"a clause's left-hand side must be a Pattern, got "
                             f"{type(lhs).__name__}")
        super().__init__(lhs, expect_expr(rhs, "clause right-hand side"))


class Match(ExprWithOp):
    """``match (data) { clauses }``: the right-hand side of the first clause that matches."""

    data: object
    clauses: tuple
    complete: bool

    def __init__(self, data, clauses, complete=True, span=None):
        clauses = tuple(clauses)
        for c in clauses:
            if not isinstance(c, Clause):
                raise IrlabError(f"Match takes Clauses, got {type(c).__name__}")
        super().__init__(span, expect_expr(data, "matched value"), clauses, bool(complete))


__all__ = ["Constructor", "TypeData", "Pattern", "PatternWildcard", "PatternVar",
           "PatternConstructor", "PatternTuple", "Clause", "Match", "pattern_vars"]
