"""The rewrite simplifier as data: each rule's readable name *is* its definition.

A rule is written ``"lhs => rhs"`` or ``"lhs => rhs when guard"`` in Python syntax:

- ``x``, ``y``, ``z``, ``cond`` match any expression (a repeated name must match an equal one);
  ``c1``, ``c2``, ``c3`` match integer constants; ``0``, ``1``, ``True``, ``False`` themselves.
- ``+ - *`` are TIR arithmetic, ``//`` and ``%`` are floordiv/floormod, and ``floordiv``,
  ``floormod``, ``min``, ``max``, ``select`` are available as calls.
- The right side is built with ``irlab.tir.op`` (so ``c1 * c2`` folds to a constant).
- The guard is built the same way and must be *provable* by the analyzer (bounds), e.g.
  ``when 0 <= y < c1``.

``rewrite(expr, analyzer, fired)`` applies the rules bottom-up until none fires, with the
engine every IR shares (``irlab.ir.rewrite``): the rules are indexed by the node class of
their left side, and after each rewrite the result's operands are rewritten before the node's
rules are tried again.
"""

from __future__ import annotations

import ast
import re

from irlab.runtime.dtype import parse_dtype
from irlab.ir.rewrite import RewriteRule, RuleDriver, RuleTable
from irlab.ir.structural import structural_equal
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir.functor import DEEP, ExprMutator, post_order_below

_BINOPS = {ast.Add: (E.Add, O.add), ast.Sub: (E.Sub, O.subtract), ast.Mult: (E.Mul, O.multiply),
           ast.FloorDiv: (E.FloorDiv, O.floordiv), ast.Mod: (E.FloorMod, O.floormod)}
_CALLS = {"floordiv": (E.FloorDiv, O.floordiv), "floormod": (E.FloorMod, O.floormod),
          "truncdiv": (E.Div, O.truncdiv), "truncmod": (E.Mod, O.truncmod),
          "min": (E.Min, O.min), "max": (E.Max, O.max), "select": (E.Select, None)}
_CMPS = {ast.Lt: (E.LT, O.less), ast.LtE: (E.LE, O.less_equal), ast.Gt: (E.GT, O.greater),
         ast.GtE: (E.GE, O.greater_equal), ast.Eq: (E.EQ, O.equal),
         ast.NotEq: (E.NE, O.not_equal)}
_BOOLOPS = {ast.And: (E.And, O.logical_and), ast.Or: (E.Or, O.logical_or)}
_CONST_WILDCARD = re.compile(r"c\d+$")


class Rule(RewriteRule):
    """One named rewrite; ``root`` is the node class its left side matches (its index key).

    ``match(e)`` gives the bindings of the left side's names (checked for float operands and
    wrapping dtypes where the rule does not hold), ``build`` the right side when the guard is
    provable.
    """

    def __init__(self, name):
        body, _, guard = name.partition(" when ")
        lhs, _, rhs = body.partition(" => ")
        self.lhs = ast.parse(lhs, mode="eval").body
        self.rhs = ast.parse(rhs, mode="eval").body
        self.guard = ast.parse(guard, mode="eval").body if guard else None
        self.root = _root_class(self.lhs)
        super().__init__(name, (self.root,))
        self.integers_only = name in INTEGERS_ONLY
        self.no_overflow = name not in WRAP_SAFE
        # An instance attribute, not a method: rules are matched hundreds of thousands of
        # times in a build, and the compiled pattern is one call away.
        self.match = _compile_match(self.lhs, self.integers_only, self.no_overflow)

    def __repr__(self):
        return f"Rule({self.name!r})"

    def build(self, e, env, analyzer):
        """The right side for the bindings ``env`` of ``e``, or None when the guard is not
        provable."""
        if self.guard is not None:
            cond = _build(self.guard, env)
            ok = bool(cond) if isinstance(cond, (bool, int)) else analyzer._prove_quietly(cond)
            if not ok:
                return None
        result = _build(self.rhs, env)
        if isinstance(result, bool):
            return O.const(result, "bool")
        if isinstance(result, int):
            return _typed_const(result, e.dtype)
        return result


def _compile_match(lhs, integers_only, no_overflow):
    """``match(e)``: the bindings of the left side ``lhs`` in ``e``, or None (also when the
    rule does not hold for ``e``'s dtypes). The root's two operands (``a``, ``b``) are matched
    here directly: one call fewer per attempt, and rules are tried ~30,000 times a model."""
    operands = _operand_patterns(lhs)
    if operands is None:
        root = _compile(lhs)

        def match(e):
            env = {}
            if not root(e, env) or (integers_only and _has_float_operand(e)) or (
                    no_overflow and _wrapping_operand(e)):
                return None
            return env
        return match
    cls, match_a, match_b = _root_class(lhs), _compile(operands[0]), _compile(operands[1])

    def match_operands(e):
        env = {}
        if type(e) is not cls or not match_a(e.a, env) or not match_b(e.b, env) or (
                integers_only and _has_float_operand(e)) or (
                no_overflow and _wrapping_operand(e)):
            return None
        return env
    return match_operands


def _operand_patterns(pat):
    """The patterns of the operands ``a`` and ``b`` of a two-operand root, else None."""
    if isinstance(pat, ast.BinOp):
        return pat.left, pat.right
    if isinstance(pat, ast.Compare):
        return pat.left, pat.comparators[0]
    if isinstance(pat, ast.BoolOp):
        return pat.values[0], pat.values[1]
    if isinstance(pat, ast.Call) and pat.func.id != "select":
        return pat.args[0], pat.args[1]
    return None


def _typed_const(value, dtype):
    """A folded constant of the rule's dtype, wrapped as that dtype's arithmetic wraps."""
    return O.const(O._wrap(value, dtype), dtype)


def _wraps(dtype) -> bool:
    """Integer dtypes whose arithmetic wraps (int8/int16, unsigned): only the ``WRAP_SAFE``
    rules hold there. int32/int64 overflow is undefined, as in TVM, so every rule applies."""
    t = parse_dtype(dtype)
    return t.code == "uint" or (t.code == "int" and t.bits < 32)


def _wrapping_operand(e):
    for field in ("a", "true_value"):
        operand = getattr(e, field, None)
        if operand is not None:
            return _wraps(operand.dtype)
    return _wraps(e.dtype)


def _has_float_operand(e):
    return any(getattr(getattr(e, f, None), "dtype", "").startswith(("float", "bfloat"))
               for f in ("a", "b"))


def _root_class(node):
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)][0]
    if isinstance(node, ast.Call):
        return _CALLS[node.func.id][0]
    if isinstance(node, ast.Compare):
        return _CMPS[type(node.ops[0])][0]
    if isinstance(node, ast.BoolOp):
        return _BOOLOPS[type(node.op)][0]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return E.Not
    raise ValueError(f"a rule's left side must be an operation, got {ast.dump(node)}")


def _same(a, b):
    if isinstance(a, E.Var) or isinstance(b, E.Var):
        return a is b
    return structural_equal(a, b)


def _match(pat, e, env):
    """Match pattern ``pat`` against ``e``, extending ``env``."""
    if isinstance(pat, ast.Name):
        if _CONST_WILDCARD.match(pat.id) and not isinstance(e, E.IntImm):
            return False
        if pat.id in env:
            return _same(env[pat.id], e)
        env[pat.id] = e
        return True
    if isinstance(pat, ast.Constant):
        if isinstance(pat.value, bool):
            return isinstance(e, E.IntImm) and e.dtype == "bool" and e.value == int(pat.value)
        return isinstance(e, (E.IntImm, E.FloatImm)) and e.value == pat.value
    if isinstance(pat, ast.UnaryOp) and isinstance(pat.op, ast.Not):
        return isinstance(e, E.Not) and _match(pat.operand, e.a, env)
    if isinstance(pat, ast.BinOp):
        return (type(e) is _BINOPS[type(pat.op)][0] and _match(pat.left, e.a, env)
                and _match(pat.right, e.b, env))
    if isinstance(pat, ast.Compare):
        return (type(e) is _CMPS[type(pat.ops[0])][0] and _match(pat.left, e.a, env)
                and _match(pat.comparators[0], e.b, env))
    if isinstance(pat, ast.BoolOp):
        return (type(e) is _BOOLOPS[type(pat.op)][0] and _match(pat.values[0], e.a, env)
                and _match(pat.values[1], e.b, env))
    if isinstance(pat, ast.Call):
        cls = _CALLS[pat.func.id][0]
        if type(e) is not cls:
            return False
        kids = (e.condition, e.true_value, e.false_value) if cls is E.Select else (e.a, e.b)
        return all(_match(p, k, env) for p, k in zip(pat.args, kids))
    raise ValueError(f"unsupported pattern {ast.dump(pat)}")


def _compile(pat):
    """A function ``(e, env) -> bool`` doing what ``_match(pat, e, env)`` does, with the
    pattern's dispatch done once (rules are matched hundreds of thousands of times)."""
    if isinstance(pat, ast.Name):
        name = pat.id
        if _CONST_WILDCARD.match(name):
            def match_const(e, env):
                if not isinstance(e, E.IntImm):
                    return False
                if name in env:
                    return _same(env[name], e)
                env[name] = e
                return True
            return match_const

        def match_name(e, env):
            if name in env:
                return _same(env[name], e)
            env[name] = e
            return True
        return match_name
    if isinstance(pat, ast.Constant):
        value = pat.value
        if isinstance(value, bool):
            as_int = int(value)
            return lambda e, env: (isinstance(e, E.IntImm) and e.dtype == "bool"
                                   and e.value == as_int)
        return lambda e, env: isinstance(e, (E.IntImm, E.FloatImm)) and e.value == value
    if isinstance(pat, ast.UnaryOp) and isinstance(pat.op, ast.Not):
        operand = _compile(pat.operand)
        return lambda e, env: isinstance(e, E.Not) and operand(e.a, env)
    if isinstance(pat, (ast.BinOp, ast.Compare, ast.BoolOp)):
        if isinstance(pat, ast.BinOp):
            cls, left, right = _BINOPS[type(pat.op)][0], pat.left, pat.right
        elif isinstance(pat, ast.Compare):
            cls, left, right = _CMPS[type(pat.ops[0])][0], pat.left, pat.comparators[0]
        else:
            cls, left, right = _BOOLOPS[type(pat.op)][0], pat.values[0], pat.values[1]
        match_a, match_b = _compile(left), _compile(right)
        return lambda e, env: type(e) is cls and match_a(e.a, env) and match_b(e.b, env)
    if isinstance(pat, ast.Call):
        cls = _CALLS[pat.func.id][0]
        args = [_compile(a) for a in pat.args]
        if cls is E.Select:
            def match_select(e, env):
                if type(e) is not cls:
                    return False
                return all(m(k, env) for m, k in
                           zip(args, (e.condition, e.true_value, e.false_value)))
            return match_select

        def match_call(e, env):
            if type(e) is not cls:
                return False
            return all(m(k, env) for m, k in zip(args, (e.a, e.b)))
        return match_call
    raise ValueError(f"unsupported pattern {ast.dump(pat)}")


def _plain(x):
    """A Python int for a constant, else the expression itself (so constants fold in Python)."""
    return x.value if isinstance(x, E.IntImm) and x.dtype != "bool" else x


def _build(node, env):
    """Build the expression of ``node`` with the matched ``env``; constants stay Python ints."""
    if isinstance(node, ast.Name):
        if node.id in env:
            return _plain(env[node.id])
        raise ValueError(f"unbound name {node.id!r} in a rule")
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        value = _build(node.operand, env)
        if isinstance(node.op, ast.Not):
            return (not value) if isinstance(value, (bool, int)) else O.logical_not(value)
        return -value if isinstance(value, int) else O.negate(value)
    if isinstance(node, ast.BinOp):
        a, b = _build(node.left, env), _build(node.right, env)
        if isinstance(a, int) and isinstance(b, int):
            return _PY_BINOPS[type(node.op)](a, b)
        if isinstance(a, int) and not isinstance(a, bool):  # folded constants: the other
            a = _typed_const(a, b.dtype)                    # side's dtype, not int32
        if isinstance(b, int) and not isinstance(b, bool):
            b = _typed_const(b, a.dtype)
        return _BINOPS[type(node.op)][1](a, b)
    if isinstance(node, ast.Compare):
        parts, left = [], _build(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            right = _build(right_node, env)
            if isinstance(left, int) and isinstance(right, int):
                parts.append(_PY_CMPS[type(op)](left, right))
            else:
                parts.append(_CMPS[type(op)][1](left, right))
            left = right
        return _conjoin(parts)
    if isinstance(node, ast.BoolOp):
        values = [_build(v, env) for v in node.values]
        if isinstance(node.op, ast.And):
            return _conjoin(values)
        result = values[0]
        for v in values[1:]:
            result = (result or v) if isinstance(result, bool) and isinstance(v, bool) \
                else O.logical_or(result, v)
        return result
    if isinstance(node, ast.Call):
        args = [_build(a, env) for a in node.args]
        name = node.func.id
        if name == "select":
            return E.Select(*args)
        if all(isinstance(a, int) for a in args):
            return {"floordiv": lambda x, y: x // y, "floormod": lambda x, y: x % y,
                    "min": min, "max": max}[name](*args)
        return _CALLS[name][1](*args)
    raise ValueError(f"unsupported rule syntax {ast.dump(node)}")


def _conjoin(parts):
    result = True
    for p in parts:
        if isinstance(result, bool) and isinstance(p, bool):
            result = result and p
        elif result is True:
            result = p
        elif p is not True:
            result = O.logical_and(result, p) if result is not False else False
    return result


_PY_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
              ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
              ast.Mod: lambda a, b: a % b}
_PY_CMPS = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
            ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
            ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}

# -- the rules, grouped by the node they rewrite -----------------------------------------
RULE_NAMES = [
    # identities and constant re-association
    "x + 0 => x", "0 + x => x", "x - 0 => x", "x - x => 0", "x * 1 => x", "1 * x => x",
    "x * 0 => 0", "0 * x => 0",
    "(x + c1) + c2 => x + (c1 + c2)", "(x - c1) + c2 => x + (c2 - c1)",
    "(x + c1) - c2 => x + (c1 - c2)", "(x * c1) * c2 => x * (c1 * c2)",
    "(x + y) - y => x", "(x + y) - x => y",
    "x * c1 + x * c2 => x * (c1 + c2)", "x * c1 + x => x * (c1 + 1)",
    # floor division and modulo by constants (what split and fuse produce)
    "floordiv(x, 1) => x", "(x * c1) // c1 => x when c1 != 0",
    "floordiv(x * c1 + y, c1) => x when 0 <= y < c1",
    "floordiv(x * c1 + y, c1) => x + floordiv(y, c1) when c1 > 0",
    "floordiv(x, c1) => 0 when 0 <= x < c1",
    "floordiv(floordiv(x, c1), c2) => floordiv(x, c1 * c2) when c1 > 0 and c2 > 0",
    "floormod(x, 1) => 0", "floormod(x * c1, c1) => 0 when c1 != 0",
    "floormod(x * c1 + y, c1) => y when 0 <= y < c1",
    "floormod(x * c1 + y, c1) => floormod(y, c1) when c1 > 0",
    "floormod(x, c1) => x when 0 <= x < c1",
    "floormod(floormod(x, c1), c2) => floormod(x, c2) when c2 > 0 and c1 % c2 == 0",
    "floordiv(x, c1) * c1 + floormod(x, c1) => x",
    "floormod(x, c1) + floordiv(x, c1) * c1 => x",
    # min / max
    "min(x, x) => x", "max(x, x) => x",
    "min(x, y) => x when x <= y", "min(x, y) => y when y <= x",
    "max(x, y) => y when x <= y", "max(x, y) => x when y <= x",
    "min(x + c1, x + c2) => x + min(c1, c2)", "max(x + c1, x + c2) => x + max(c1, c2)",
    # select
    "select(True, x, y) => x", "select(False, x, y) => y", "select(cond, x, x) => x",
    # comparisons and logic
    "x < x => False", "x <= x => True", "x == x => True", "x != x => False",
    "x < y => True when x < y", "x < y => False when y <= x",
    "x <= y => True when x <= y", "x <= y => False when y < x",
    "not (x < y) => y <= x", "not (x <= y) => y < x", "not (x == y) => x != y",
    "not (x != y) => x == y", "not not x => x",
    "x and True => x", "True and x => x", "x and False => False", "False and x => False",
    "x or True => True", "True or x => True", "x or False => x", "False or x => x",
    "x and x => x", "x or x => x",
]
# Identities that IEEE floats break (NaN - NaN, inf * 0, NaN == NaN...): ``x != x`` is how a
# program asks "is x NaN?". They apply to integers and booleans only.
INTEGERS_ONLY = {"x - x => 0", "x * 0 => 0", "0 * x => 0", "x <= x => True", "x == x => True",
                 "x != x => False", "(x + y) - y => x", "(x + y) - x => y"}
# Rules that hold in wrapping (modular) integer arithmetic too: identities, constant
# reassociation, like terms. Guarded rules, divisions and min/max of sums assume no overflow.
WRAP_SAFE = {"x + 0 => x", "0 + x => x", "x - 0 => x", "x - x => 0", "x * 1 => x",
             "1 * x => x", "x * 0 => 0", "0 * x => 0", "(x + c1) + c2 => x + (c1 + c2)",
             "(x - c1) + c2 => x + (c2 - c1)", "(x + c1) - c2 => x + (c1 - c2)",
             "(x * c1) * c2 => x * (c1 * c2)", "(x + y) - y => x", "(x + y) - x => y",
             "x * c1 + x * c2 => x * (c1 + c2)", "x * c1 + x => x * (c1 + 1)",
             "floordiv(x, 1) => x", "floormod(x, 1) => 0", "min(x, x) => x", "max(x, x) => x",
             "select(True, x, y) => x", "select(False, x, y) => y", "select(cond, x, x) => x",
             "x < x => False", "x <= x => True", "x == x => True", "x != x => False"}
RULES = [Rule(name) for name in RULE_NAMES]
RULES_BY_NODE = RuleTable(RULES)

_BUILDERS = {cls: build for cls, build in list(_BINOPS.values()) + list(_CMPS.values())
             + list(_BOOLOPS.values())}
_BUILDERS.update({E.Min: O.min, E.Max: O.max, E.Div: O.truncdiv, E.Mod: O.truncmod})


_LEAVES = (E.Var, E.IntImm, E.FloatImm, E.StringImm)


class Rewriter(ExprMutator):
    """Bottom-up rule application to a fixed point at every node: TIR's traversal (memo by
    identity, iterative past a depth) around the shared ``RuleDriver``."""

    MAX_STEPS = 32  # rewrites of one node before giving up (a safety net against cycles)

    def __init__(self, analyzer, fired, rules_by_node=None):
        super().__init__()
        self.analyzer, self.fired = analyzer, fired
        if rules_by_node is None:
            rules_by_node = RULES_BY_NODE
        elif not isinstance(rules_by_node, RuleTable):  # {node class: [rules]}
            rules_by_node = RuleTable(r for rules in rules_by_node.values() for r in rules)
        self.rules = rules_by_node
        self.driver = RuleDriver(self.rules, type, fired, context=analyzer,
                                 descend=self._descend, max_steps=self.MAX_STEPS)

    def visit_expr(self, e):
        if isinstance(e, _LEAVES):  # no rule rewrites a leaf
            return e
        memo = self.memo_map
        hit = memo.get(e)
        if hit is not None:
            return hit
        depth = self._depth
        if depth > DEEP:  # rewrite what is below first, so that recursion stops here
            self._depth = 0
            for node in post_order_below(e, memo):
                self.visit_expr(node)
        self._depth = depth + 1
        try:
            result = self.driver.rewrite_at(e)
        finally:
            self._depth = depth
        memo[e] = memo[result] = result
        return result

    def _descend(self, e):
        """``e`` with its operands rewritten, constants the new operands expose refolded."""
        if isinstance(e, _LEAVES):
            return e
        build = _BUILDERS.get(type(e))
        if build is None:
            new = self._mutate_children(e)
            if new is not e and type(new) in _BUILDERS:
                new = _BUILDERS[type(new)](new.a, new.b)
            return new
        # two operands (a, b): what _mutate_children does, inlined
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        if a is e.a and b is e.b:
            return e
        if a.dtype == b.dtype:
            return build(a, b)  # refold constants the children exposed
        new = e.with_fields(a=a, b=b)  # the node's own check reports the mismatch
        return _BUILDERS[type(new)](new.a, new.b)


def rewrite(expr, analyzer, fired):
    """``expr`` rewritten by ``RULES`` (names of the rules used go to ``fired``)."""
    rewriter = Rewriter(analyzer, fired)
    try:
        return rewriter.visit_expr(expr)
    finally:
        # the driver holds the rewriter's bound _descend: a cycle that would keep the memo
        # of every rewrite alive until the cyclic collector runs
        rewriter.driver = None
