"""The rewrite-rule engine every IR shares: named rules, indexed by a key, applied at a node
until none fires, whole sweeps repeated until nothing changes.

The engine knows nothing of any IR. A dialect supplies what it alone knows:

- its rules (``RewriteRule``): a readable ``name``, the ``keys`` they are indexed by (a node
  class for TIR's arithmetic, an operator name for Relay calls; None: every key), ``match``
  (bindings, or None) and ``build`` (the replacement, or None);
- how to reach a node's key (``key_of``) and, for rewriters that revisit what a rule built,
  how to rewrite a node's children first (``descend``);
- optionally ``validate(new, old)``: a result it rejects is rolled back (the next rule is
  tried), e.g. a Relay rewrite that would change the expression's type;
- its bottom-up traversal (each IR's own mutator), which calls ``RuleDriver.rewrite_at``.

Every rewrite is reported by name to ``fired`` (a callable: ``list.append``, or a
``RuleCounts``): that is what ``Analyzer.rules_fired`` and SimplifyExpr's ``rules_fired``
show. Users: ``irlab.arith.rewrite_rules`` (keyed by node class, rules parsed from
``"lhs => rhs when guard"``), ``irlab.relay.transform.simplify_expr`` (keyed by operator name,
rules are dataflow patterns) and ``irlab.relay.dataflow_pattern.rewrite`` (whose callbacks
are rules)::

    table = RuleTable(rules)               # rules by key, in order
    driver = RuleDriver(table, key_of=type, fired=counts)
    new = driver.rewrite_at(node)          # rules applied here until none fires
"""

from __future__ import annotations

from collections import Counter


class RewriteRule:
    """A named rewrite of the nodes whose key is one of ``keys`` (None: any node with a key).

    ``apply(node, context)`` is ``build(node, match(node), context)`` when the match succeeds;
    subclasses define ``match`` (bindings, or None when the rule does not apply) and ``build``
    (the replacement, or None when a guard fails). The default ``match`` binds the node itself.
    """

    __slots__ = ("name", "keys")

    def __init__(self, name, keys=None):
        self.name = name
        self.keys = None if keys is None else tuple(keys)

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"

    def match(self, node):
        """The bindings of the rule's left side in ``node``, or None."""
        return node

    def build(self, node, bindings, context):
        """The replacement of ``node`` (``bindings`` from ``match``), or None."""
        raise NotImplementedError(f"{type(self).__name__} must define build(node, bindings, "
                                  f"context)")

    def apply(self, node, context=None):
        """The rewritten node, or None when the rule does not apply."""
        bindings = self.match(node)
        return None if bindings is None else self.build(node, bindings, context)


class RuleTable(dict):
    """Rules indexed by key, each key's rules in the order given (a rule with no keys is tried
    for every key, at its place in the order). ``table[key]`` is a tuple; built on first use
    for a key not listed by any rule, and kept. The key None has no rules."""

    def __init__(self, rules):
        super().__init__()
        self.rules = tuple(rules)
        self._any = tuple(r for r in self.rules if r.keys is None)
        for rule in self.rules:
            for key in rule.keys or ():
                if key not in self:
                    self[key] = self._for_key(key)

    def __missing__(self, key):
        rules = () if key is None else self._any
        self[key] = rules
        return rules

    def _for_key(self, key):
        return tuple(r for r in self.rules if r.keys is None or key in r.keys)

    def __repr__(self):
        return f"RuleTable({[r.name for r in self.rules]!r})"


class RuleCounts(Counter):
    """How often each rule fired; callable with a rule's name, as ``fired`` is."""

    def __call__(self, name):
        self[name] += 1

    def total_fired(self) -> int:
        return sum(self.values())


def _no_descent(node):
    return node


class RuleDriver:
    """Applies a ``RuleTable`` at one node until no rule fires (``rewrite_at``).

    Each step first rewrites the node's children (``descend``; the identity for a traversal
    that has already done so), then tries the node's rules in order: the first that builds a
    result (accepted by ``validate``, when given) replaces the node and is reported to
    ``fired``. ``max_steps`` rewrites of one node at most: a safety net against rules that
    undo each other.
    """

    def __init__(self, table, key_of, fired, context=None, descend=None, validate=None,
                 max_steps=32):
        self.table = table
        self.key_of = key_of
        self.fired = fired
        self.context = context
        self.descend = _no_descent if descend is None else descend
        self.validate = validate
        self.max_steps = max_steps

    def __repr__(self):
        return f"RuleDriver({len(self.table.rules)} rules, max_steps={self.max_steps})"

    def rewrite_at(self, node):
        """``node`` rewritten by the rules until none applies (or ``max_steps`` rewrites)."""
        table, key_of, descend = self.table, self.key_of, self.descend
        context, validate, fired = self.context, self.validate, self.fired
        for _ in range(self.max_steps):
            node = descend(node)
            # the first rule that builds an accepted result replaces the node (one loop:
            # this runs for every node of every simplified expression)
            for rule in table[key_of(node)]:
                bindings = rule.match(node)
                if bindings is None:
                    continue
                new = rule.build(node, bindings, context)
                if new is None or (validate is not None and not validate(new, node)):
                    continue
                fired(rule.name)
                break
            else:
                return node
            node = new
        return node


def rewrite_to_fixpoint(sweep, value, limit, on_limit=None):
    """Repeat ``sweep`` until one changes nothing; returns the last value.

    ``sweep(value)`` returns ``(new_value, changed, cost)``; the costs of changing sweeps add
    up, and once they reach ``limit`` the result is ``on_limit(value)`` (which may raise; by
    default the value reached so far).
    """
    spent = 0
    while True:
        value, changed, cost = sweep(value)
        if not changed:
            return value
        spent += cost
        if spent >= limit:
            return value if on_limit is None else on_limit(value)


__all__ = ["RewriteRule", "RuleTable", "RuleCounts", "RuleDriver", "rewrite_to_fixpoint"]
