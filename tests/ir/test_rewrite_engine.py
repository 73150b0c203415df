"""The shared rewrite-rule engine (irlab.ir.rewrite): indexing, per-node fixpoint, step limit,
rollback of rejected results, rule counts, sweeps to a fixpoint; and the three rule kinds
(arith, SimplifyExpr, dataflow patterns) built on it."""

import numpy as np
import pytest

from irlab import relay, tir
from irlab.arith import Analyzer
from irlab.arith.rewrite_rules import RULES, RULES_BY_NODE, Rule as ArithRule
from irlab.errors import IrlabError
from irlab.ir.rewrite import (RewriteRule, RuleCounts, RuleDriver, RuleTable,
                              rewrite_to_fixpoint)
from irlab.relay.dataflow_pattern import DFPatternCallback, is_op, rewrite, wildcard
from irlab.relay.dataflow_pattern.rewrite import pattern_keys
from irlab.relay.testing import run_infer_type
from irlab.relay.transform import simplify_expr


class Fn(RewriteRule):
    """A toy rule over tuples ``(kind, *operands)``: ``fn(node)`` gives the result or None."""

    def __init__(self, name, keys, fn):
        super().__init__(name, keys)
        self.fn = fn

    def build(self, node, bindings, context):
        return self.fn(node)


def kind(node):
    return node[0] if isinstance(node, tuple) else None


def test_table_indexes_by_key_keeping_order():
    a = Fn("a", ["add"], lambda n: None)
    any_rule = Fn("any", None, lambda n: None)
    b = Fn("b", ["add", "mul"], lambda n: None)
    table = RuleTable([a, any_rule, b])
    assert table["add"] == (a, any_rule, b)
    assert table["mul"] == (any_rule, b)
    assert table["sub"] == (any_rule,)  # a key no rule names: the rules for any key
    assert table[None] == ()
    assert "a" in repr(table)


def test_driver_rewrites_to_a_fixpoint_and_counts():
    # ("neg", ("neg", x)) => x, applied repeatedly at one node.
    rule = Fn("neg(neg(x)) => x", ["neg"],
              lambda n: n[1][1] if kind(n[1]) == "neg" else None)
    counts = RuleCounts()
    driver = RuleDriver(RuleTable([rule]), kind, counts)
    node = ("neg", ("neg", ("neg", ("neg", "x"))))
    assert driver.rewrite_at(node) == "x"
    assert counts == {"neg(neg(x)) => x": 2}
    assert counts.total_fired() == 2
    assert driver.rewrite_at("y") == "y"


def test_driver_step_limit_stops_rules_that_undo_each_other():
    flip = Fn("flip", ["a", "b"], lambda n: ("b" if n[0] == "a" else "a",) + n[1:])
    fired = []
    driver = RuleDriver(RuleTable([flip]), kind, fired.append, max_steps=5)
    assert driver.rewrite_at(("a", 1)) == ("b", 1)
    assert fired == ["flip"] * 5


def test_driver_rolls_back_a_rejected_result():
    bad = Fn("bad", ["f"], lambda n: ("wrong",))
    good = Fn("good", ["f"], lambda n: ("right",))
    fired = []
    driver = RuleDriver(RuleTable([bad, good]), kind, fired.append,
                        validate=lambda new, old: new != ("wrong",))
    assert driver.rewrite_at(("f",)) == ("right",)
    assert fired == ["good"]


def test_driver_descends_before_each_step():
    # descend rewrites operands (here: strings upper-cased); the rule then sees the result.
    seen = []
    rule = Fn("seen", ["f"], lambda n: seen.append(n))
    driver = RuleDriver(RuleTable([rule]), kind, [].append,
                        descend=lambda n: (n[0], n[1].upper()))
    assert driver.rewrite_at(("f", "x")) == ("f", "X")
    assert seen == [("f", "X")]


def test_rewrite_to_fixpoint_costs_and_limit():
    calls = []

    def sweep(value):
        calls.append(value)
        return max(value - 1, 0), value > 0, 2

    assert rewrite_to_fixpoint(sweep, 3, limit=100) == 0
    assert calls == [3, 2, 1, 0]
    assert rewrite_to_fixpoint(sweep, 10, limit=4) == 8  # two changing sweeps of cost 2

    def give_up(value):
        raise IrlabError(f"stuck at {value}")

    with pytest.raises(IrlabError, match="stuck at 8"):
        rewrite_to_fixpoint(sweep, 10, limit=4, on_limit=give_up)


def test_arith_rules_are_engine_rules_indexed_by_node_class():
    assert all(isinstance(r, RewriteRule) for r in RULES)
    names = [r.name for r in RULES_BY_NODE[tir.Add]]
    assert names[:2] == ["x + 0 => x", "0 + x => x"]
    x = tir.Var("x", "int32")
    rule = ArithRule("x + 0 => x")
    zero, one = tir.IntImm("int32", 0), tir.IntImm("int32", 1)
    assert rule.apply(tir.Add(x, zero), Analyzer()) is x
    assert rule.apply(tir.Add(x, one), Analyzer()) is None
    analyzer = Analyzer()
    assert analyzer.rewrite_simplify(tir.Mul(tir.Add(x, zero), one)) is x
    # x * 1 is then folded by the operator that rebuilds the product, not by a rule
    assert analyzer.rules_fired == ["x + 0 => x"]
    # a rewriter given its own rules, as a {node class: [rules]} dict
    from irlab.arith.rewrite_rules import Rewriter
    fired = []
    own = Rewriter(Analyzer(), fired.append, {tir.Add: [rule]})
    assert own.visit_expr(tir.Sub(tir.Add(x, zero), zero)) is x  # x - 0 refolded
    assert fired == ["x + 0 => x"]


def test_simplify_expr_rules_are_engine_rules_indexed_by_op():
    rules = simplify_expr.SIMPLIFY_EXPR_RULES
    assert all(isinstance(r, RewriteRule) and isinstance(r, DFPatternCallback) for r in rules)
    table = RuleTable(rules)
    assert [r.name for r in table["cast"]][:2] == ["cast(x, dtype(x)) => x",
                                                    "cast(cast(x)) => cast(x)"]
    assert "op(full(c), x) => op(c, x)" in [r.name for r in table["nn.relu"]]
    assert simplify_expr.RULES["clip"].ops == ("clip",)


class SubToAdd(DFPatternCallback):
    def __init__(self):
        super().__init__()
        self.a, self.b = wildcard(), wildcard()
        self.pattern = is_op("subtract")(self.a, self.b)

    def callback(self, pre, post, node_map):
        return node_map[self.a][0] + relay.negative(node_map[self.b][0])


def test_dataflow_callbacks_are_engine_rules_and_counted():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    expr = relay.subtract(relay.subtract(x, y), y)
    counts = RuleCounts()
    out = rewrite(SubToAdd(), expr, fired=counts)
    assert isinstance(SubToAdd(), RewriteRule) and SubToAdd().name == "SubToAdd"
    assert counts == {"SubToAdd": 2}
    func = relay.Function([x, y], out)
    result = relay.create_executor(kind="debug").evaluate(func)(
        np.array([5.0, 7.0], "float32"), np.array([1.0, 2.0], "float32"))
    np.testing.assert_allclose(result.numpy(), [3.0, 3.0])


def test_pattern_keys():
    assert pattern_keys(is_op("add")(wildcard(), wildcard())) == ("add",)
    assert pattern_keys((is_op("transpose") | is_op("layout_transform"))(None)) == \
        ("transpose", "layout_transform")
    assert pattern_keys(wildcard()(None)) is None
    assert pattern_keys(wildcard()) is None


def test_a_callback_runs_per_node_in_the_driver():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    counts = RuleCounts()
    driver = RuleDriver(RuleTable([SubToAdd()]), lambda n: getattr(n.op, "name", None)
                        if isinstance(n, relay.Call) else None, counts)
    out = driver.rewrite_at(relay.subtract(x, y))
    assert out.op.name == "add" and counts == {"SubToAdd": 1}
    assert driver.rewrite_at(relay.add(x, y)).op.name == "add"  # not indexed: untouched


def test_a_simplify_rule_runs_under_dataflow_rewrite():
    # SimplifyExpr's rules are DFPatternCallbacks: the grouper-driven rewrite runs them too.
    x = relay.var("x", shape=(4, 6))
    expr = run_infer_type(relay.reshape(relay.reshape(x, (2, 12)), (24,)))
    counts = RuleCounts()
    out = rewrite(simplify_expr.RULES["reshape"], expr, fired=counts)
    assert out.op.name == "reshape" and out.args[0] is x
    assert counts == {"reshape(reshape(x)) => reshape(x)": 1}
    unchanged = run_infer_type(relay.reshape(x, (24,)))
    assert rewrite(simplify_expr.RULES["reshape"], unchanged) is unchanged


def test_a_callback_may_set_its_own_keys():
    class Keyed(SubToAdd):
        def __init__(self):
            super().__init__()
            self.keys = ("subtract", "add")

    assert Keyed().keys == ("subtract", "add") and SubToAdd().keys == ("subtract",)
    assert [r.name for r in RuleTable([Keyed()])["add"]] == ["Keyed"]
