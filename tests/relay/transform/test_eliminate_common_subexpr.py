"""EliminateCommonSubexpr: TVM's before/expected cases, every model, random graphs."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import irlab as tvm
from irlab import relay
from irlab.errors import IrlabError
from irlab.instrument import modules_identical
from irlab.ir import assert_structural_equal, structural_equal
from irlab.ir.op import Op
from irlab.relay import transform
from irlab.relay.expr_functor import ExprMutator, post_order
from irlab.relay.testing import run_opt_pass
from irlab.testing.check import check_numerics
from irlab.testing.strategies import relay_modules

from _model_references import MODEL_NAMES, bound_model, check_model


def _expected(f):
    return run_opt_pass(f, transform.InferType())


# -- ported from TVM's tests/python/relay/test_pass_eliminate_common_subexpr.py ----------------
def _relu_add_graph():
    x = relay.var("x", shape=(1, 16))
    y1 = relay.add(relay.nn.relu(x), relay.const(1.0, "float32"))
    y2 = relay.add(relay.nn.relu(x), relay.const(1.0, "float32"))
    return relay.Function([x], relay.add(y1, y2))


def test_simple():
    x = relay.var("x", shape=(1, 16))
    y = relay.add(relay.nn.relu(x), relay.const(1.0, "float32"))
    expected = _expected(relay.Function([x], relay.add(y, y)))
    z = run_opt_pass(_relu_add_graph(), transform.EliminateCommonSubexpr())
    assert_structural_equal(z, expected)


def test_callback():
    x = relay.var("x", shape=(1, 16))
    y = relay.nn.relu(x)
    y1 = relay.add(y, relay.const(1.0, "float32"))
    y2 = relay.add(y, relay.const(1.0, "float32"))
    expected = _expected(relay.Function([x], relay.add(y1, y2)))

    def fskip(expr):
        return isinstance(expr, relay.Call) and expr.op.name == "add"

    z = run_opt_pass(_relu_add_graph(), transform.EliminateCommonSubexpr(fskip))
    assert_structural_equal(z, expected)


def test_tuple_get_item():
    def graph(duplicate):
        x = relay.var("x", shape=(1, 16, 1, 1))
        stats = [relay.var(n, shape=(16,)) for n in ("var", "mean", "beta", "gamma")]
        var, mean, beta, gamma = stats
        bn = relay.nn.batch_norm(x, gamma, beta, mean, var, epsilon=1e-5)
        t1 = bn[0]
        t2 = bn[0] if duplicate else t1
        return relay.Function([x, *stats], relay.add(t1, t2))

    z = run_opt_pass(graph(True), transform.EliminateCommonSubexpr())
    assert_structural_equal(z, _expected(graph(False)))


# -- our own cases ----------------------------------------------------------------------------
def test_equal_scalar_constants_merge_but_tensors_need_identity():
    x = relay.var("x", shape=(4,))
    a = relay.add(x, relay.const(2.0))
    b = relay.add(x, relay.const(2.0))  # another scalar constant of the same value: merged
    c1 = relay.add(x, relay.const(np.ones(4, "float32")))
    c2 = relay.add(x, relay.const(np.ones(4, "float32")))  # tensors: compared by identity
    f = relay.Function([x], relay.Tuple([a, b, c1, c2]))
    z = run_opt_pass(f, transform.EliminateCommonSubexpr())
    fields = z.body.fields
    assert fields[0] is fields[1]
    assert fields[2] is not fields[3]


def test_attrs_must_match():
    x = relay.var("x", shape=(2, 3, 4))
    f = relay.Function([x], relay.Tuple([relay.sum(x, axis=1), relay.sum(x, axis=2),
                                         relay.sum(x, axis=1)]))
    z = run_opt_pass(f, transform.EliminateCommonSubexpr())
    a, b, c = z.body.fields
    assert a is c and a is not b


def test_stateful_ops_and_function_calls_stay():
    x = relay.var("x", shape=(4,))
    p = relay.var("p", shape=(4,))
    g = relay.Function([p], relay.exp(p))
    d1 = relay.nn.dropout(x, 0.5)
    d2 = relay.nn.dropout(x, 0.5)
    f = relay.Function([x], relay.Tuple([d1, d2, g(x), g(x)]))
    z = run_opt_pass(f, transform.EliminateCommonSubexpr())
    fields = z.body.fields
    assert fields[0].tuple_value is not fields[1].tuple_value  # dropout is TOpIsStateful
    assert fields[2] is not fields[3]                          # calls of functions: never


def test_merges_inside_branches_and_functions():
    c = relay.var("c", shape=(), dtype="bool")
    x = relay.var("x", shape=(3,))
    p = relay.var("p", shape=(3,))
    inner = relay.Function([p], relay.add(relay.exp(p), relay.exp(p)))
    body = relay.If(c, relay.add(relay.tanh(x), relay.tanh(x)), inner(x))
    z = run_opt_pass(relay.Function([c, x], body), transform.EliminateCommonSubexpr())
    then_add = z.body.true_branch
    assert then_add.args[0] is then_add.args[1]
    fn_add = z.body.false_branch.op.body
    assert fn_add.args[0] is fn_add.args[1]


def test_fskip_must_be_callable():
    with pytest.raises(IrlabError, match="fskip"):
        transform.EliminateCommonSubexpr(fskip=3)


def test_pass_info():
    info = transform.EliminateCommonSubexpr().info
    assert (info.name, info.opt_level, info.required) == ("EliminateCommonSubexpr", 3,
                                                          ["InferType"])


def test_unchanged_program_is_returned_as_is():
    x = relay.var("x", shape=(2,))
    mod = transform.InferType()(tvm.IRModule.from_expr(relay.Function([x], relay.exp(x))))
    assert transform.EliminateCommonSubexpr()(mod)["main"] is mod["main"]


# -- every model ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_compute_the_same(name):
    mod = bound_model(name)
    after = transform.EliminateCommonSubexpr()(mod)
    if not modules_identical(mod, after):
        check_model(name, after)
    keys = _call_keys(after["main"])
    assert len(keys) == len(set(keys))


# -- random graphs ----------------------------------------------------------------------------
def _by_position(mod):
    """@main with parameters renamed p0, p1...: random graphs repeat parameter names, and
    check_numerics feeds inputs by name."""
    func = mod["main"]
    params = [relay.var(f"p{i}", p.type_annotation) for i, p in enumerate(func.params)]
    body = relay.bind(func.body, dict(zip(func.params, params)))
    out = mod.copy()
    out["main"] = relay.Function(params, body, func.ret_type, func.type_params, func.attrs)
    return out


def _call_keys(func):
    """(op, attrs, argument identities) of every operator call with arguments."""
    keys = []
    for node in post_order(func):
        if isinstance(node, relay.Call) and isinstance(node.op, Op) and node.args:
            args = tuple(id(a) if not isinstance(a, relay.Constant) or a.data.numpy().ndim
                         else ("scalar", a.data.numpy().dtype.str, a.data.numpy().tobytes())
                         for a in node.args)
            keys.append((node.op.name, node.attrs, args))
    return keys


class _Duplicate(ExprMutator):
    """A fresh copy of every operator call, projection and scalar constant (scopes, tuples and
    function calls stay shared): CSE must fold the copy back onto the original."""

    def visit_call(self, call):
        if not isinstance(call.op, Op):
            return call
        return relay.Call(call.op, [self.visit(a) for a in call.args], call.attrs)

    def visit_tuple_getitem(self, item):
        return relay.TupleGetItem(self.visit(item.tuple_value), item.index)

    def visit_constant(self, const):
        return relay.Constant(const.data) if const.data.numpy().ndim == 0 else const

    def visit_tuple(self, tup):
        return tup

    def visit_let(self, let):
        return let

    def visit_if(self, ite):
        return ite

    def visit_function(self, fn):
        return fn


def _innermost(expr):
    lets = []
    while isinstance(expr, relay.Let):
        lets.append(expr)
        expr = expr.body
    return lets, expr


def _with_duplicate(mod):
    func = mod["main"]
    lets, body = _innermost(func.body)
    out = relay.Tuple([body, _Duplicate().visit(body)])
    for let in reversed(lets):
        out = relay.Let(let.var, let.value, out)
    return tvm.IRModule.from_expr(relay.Function(func.params, out))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(relay_modules())
def test_random_graphs_fold_a_copy_back(mod):
    mod = transform.InferType()(_with_duplicate(mod))
    after = transform.EliminateCommonSubexpr()(mod)
    original, copy = _innermost(after["main"].body)[1].fields
    assert structural_equal(original, copy)
    if isinstance(original, (relay.Call, relay.TupleGetItem)) and (
            isinstance(original, relay.TupleGetItem) or isinstance(original.op, Op)):
        assert original is copy
    with np.errstate(all="ignore"):
        check_numerics(_by_position(mod), _by_position(after))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(relay_modules())
def test_random_graphs(mod):
    mod = transform.InferType()(mod)
    after = transform.EliminateCommonSubexpr()(mod)
    keys = _call_keys(after["main"])
    assert len(keys) == len(set(keys)), "two calls compute the same value"
    assert structural_equal(transform.EliminateCommonSubexpr()(after), after)
    with np.errstate(all="ignore"):
        check_numerics(_by_position(mod), _by_position(after))


def test_equal_tuples_merge_so_their_consumers_do():
    """``concatenate([y, c])`` built twice: the two tuples are one, so the two concatenates
    are too; the program computes the same."""
    x = relay.var("x", shape=(1, 4))
    c = relay.const(np.ones((1, 4), "float32"))
    y = relay.exp(x)
    before = relay.Function([x], relay.add(relay.concatenate([y, c], axis=0),
                                           relay.concatenate([y, c], axis=0)))
    after = run_opt_pass(before, transform.EliminateCommonSubexpr())
    assert after.body.args[0] is after.body.args[1]
    cat = relay.concatenate([y, c], axis=0)
    assert structural_equal(after, _expected(relay.Function([x], relay.add(cat, cat))))
    check_numerics(tvm.IRModule.from_expr(before), tvm.IRModule.from_expr(after))
