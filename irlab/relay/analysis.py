"""Program analyses: free/bound variables, post-order traversal, well-formedness, op counts."""

from __future__ import annotations

from collections import Counter

from irlab.errors import DiagnosticError
from irlab.instrument import register_node_counter
from irlab.ir.expr import GlobalVar, RelayExpr
from irlab.ir.op import Op
from irlab.relay.adt import Match, pattern_vars
from irlab.relay.expr import Call, Let, Var
from irlab.relay.expr_functor import post_order
from irlab.relay.function import Function
from irlab.runtime.registry import register_func


def post_order_visit(expr, fvisit):
    """Call ``fvisit(node)`` once for every node reachable from ``expr``, children first
    (function bodies included), as TVM's ``relay.analysis.post_order_visit``."""
    for node in post_order(expr):
        fvisit(node)


def _binders(node):
    if isinstance(node, Function):
        return node.params
    if isinstance(node, Let):
        return (node.var,)
    if isinstance(node, Match):  # the variables each clause's pattern binds
        return tuple(v for clause in node.clauses for v in pattern_vars(clause.lhs))
    return ()


def bound_vars(expr) -> list:
    """Variables bound by functions, lets and match patterns inside ``expr``, in post-DFS
    order."""
    out = []
    for node in post_order(expr):
        for v in _binders(node):
            if v not in out:
                out.append(v)
    return out


def all_vars(expr) -> list:
    """Every variable appearing in ``expr`` (bound or free), in post-DFS order."""
    seen = {}
    for node in post_order(expr):
        if isinstance(node, Var):
            seen.setdefault(node, None)
        for v in _binders(node):
            seen.setdefault(v, None)
    return list(seen)


def free_vars(expr) -> list:
    """Variables used in ``expr`` but not bound inside it, in post-DFS order (as TVM)."""
    bound = set(bound_vars(expr))
    return [v for v in post_order(expr) if isinstance(v, Var) and v not in bound]


@register_func("relay.ir.as_function")
def as_function(expr):
    """``IRModule.from_expr``'s main: a Relay expression that is not a function becomes one
    of its free variables; functions (Relay or not) stay as they are."""
    if isinstance(expr, RelayExpr) and not isinstance(expr, (Function, GlobalVar)):
        return Function(free_vars(expr), expr)
    return expr


def well_formed(expr) -> bool:
    """True when every variable is bound at most once (no shadowing of a bound variable)."""
    try:
        check_well_formed(expr)
    except DiagnosticError:
        return False
    return True


def check_well_formed(expr):
    """Raise ``DiagnosticError`` naming the variable bound twice."""
    seen = set()
    for node in post_order(expr):
        for v in _binders(node):
            if v in seen:
                raise DiagnosticError(f"variable %{v.name_hint} is bound more than once", v)
            seen.add(v)


def count_ops(expr) -> Counter:
    """How many calls of each operator ``expr`` contains (function bodies included)."""
    counts = Counter()
    for node in post_order(expr):
        if isinstance(node, Call) and isinstance(node.op, Op):
            counts[node.op.name] += 1
    return counts


def count_nodes(expr) -> int:
    """The number of distinct nodes in ``expr`` (shared sub-expressions count once)."""
    return len(post_order(expr))


def _count_for_instruments(func: Function, ops: Counter) -> int:
    """``count_nodes(func)``, adding ``count_ops(func)`` to ``ops`` in the same walk (for the
    instruments' ``module_counts``)."""
    nodes = post_order(func)
    ops.update(node.op.name for node in nodes
               if isinstance(node, Call) and isinstance(node.op, Op))
    return len(nodes)


register_node_counter(Function, _count_for_instruments)
