"""ToANormalForm, ToGraphNormalForm, ToBasicBlockNormalForm: TVM's cases, every model, random
graphs, and a 10,000-op chain."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import irlab as tvm
from irlab import relay
from irlab.instrument import modules_identical
from irlab.ir import assert_structural_equal, structural_equal
from irlab.relay import transform
from irlab.relay.expr_functor import expr_children, post_order
from irlab.relay.interpreter import create_executor
from irlab.relay.testing import run_opt_pass
from irlab.relay.transform.normal_form import needs_basic_block_lifting
from irlab.testing.check import random_value
from irlab.testing.strategies import relay_modules

from _model_references import MODEL_NAMES, bound_model, check_model

_ATOMIC = (relay.Var, relay.GlobalVar, relay.Op)


def _run(expr, passes):
    passes = passes if isinstance(passes, list) else [passes]
    with tvm.transform.PassContext(opt_level=3):
        return run_opt_pass(expr, transform.Sequential(passes))


def _value(expr, *args, mod=None):
    result = create_executor(mod=mod).evaluate(expr)
    if isinstance(expr, (relay.Function, relay.GlobalVar)):
        result = result(*args)
    return result.numpy()


def _has_let(expr):
    return any(isinstance(n, relay.Let) for n in post_order(expr))


def _typed(expr):
    return run_opt_pass(expr, transform.InferType())


# -- ToANormalForm (TVM's tests/python/relay/test_pass_to_a_normal_form.py) --------------------
def test_explicit_bound():
    x = relay.const(1)
    y = relay.add(x, x)
    z = relay.add(y, y)
    f = relay.Function([], relay.add(z, z))
    assert not _has_let(f)
    anf = _run(f, transform.ToANormalForm())
    assert _has_let(anf)
    assert _value(f) == _value(anf) == 8


def test_order():
    """Bindings follow the scopes and post-DFS order, not construction order."""
    z, y, x = relay.const(3), relay.const(2), relay.const(1)
    anf = _run(x + y * z, [transform.ToANormalForm(), transform.InferType()])
    a, b, c, d, e = (relay.Var(n) for n in "abcde")
    expected = relay.Let(a, x, relay.Let(b, y, relay.Let(c, z, relay.Let(
        d, b * c, relay.Let(e, a + d, e)))))
    assert_structural_equal(anf, _typed(expected))


def test_if():
    cond = relay.const(True)
    anf = _run(relay.If(cond, relay.const(2), relay.const(3)),
               [transform.ToANormalForm(), transform.InferType()])
    a, b, c, d = (relay.Var(n) for n in "abcd")
    branches = relay.If(c, relay.Let(a, relay.const(2), a), relay.Let(b, relay.const(3), b))
    expected = relay.Let(c, cond, relay.Let(d, branches, d))
    assert_structural_equal(anf, _typed(expected))


def test_let_as_subexpr():
    """A let used as a value is flattened into the enclosing scope."""
    x = relay.Var("x")
    c = relay.const(1)
    let = relay.Let(x, c + c, x)
    anf = _run(let * let, [transform.ToANormalForm(), transform.InferType()])
    v0, v1, v2 = (relay.Var(n) for n in ("v0", "v1", "v2"))
    expected = relay.Let(v0, c, relay.Let(x, v0 + v0, relay.Let(v1, x, relay.Let(
        v2, v1 * v1, v2))))
    assert_structural_equal(anf, _typed(expected))


def _recursive_module():
    """f(n) = n * 2 + f(n - 1), f(0) = 0, as a global function."""
    mod = tvm.IRModule()
    i64 = relay.TensorType((), "int64")
    f = relay.GlobalVar("f")
    n = relay.Var("n", i64)
    m = n * relay.const(2, "int64")
    body = relay.If(relay.equal(n, relay.const(0, "int64")), m,
                    m + f(n - relay.const(1, "int64")))
    mod[f] = relay.Function([n], body, i64)
    return mod, f


@pytest.mark.parametrize("pass_", [transform.ToANormalForm, transform.ToBasicBlockNormalForm])
def test_recursion(pass_):
    mod, f = _recursive_module()
    assert _value(f, np.int64(5), mod=mod) == 30
    out = pass_()(mod)
    assert _value(out.get_global_var("f"), np.int64(5), mod=out) == 30
    if pass_ is transform.ToBasicBlockNormalForm:
        assert not needs_basic_block_lifting(transform.InferType()(out)["f"])


def test_let():
    x, y = relay.Var("x"), relay.Var("y")
    body = relay.Let(x, relay.const(4.0), relay.Let(y, x, x + y))
    assert _value(body) == _value(_run(body, transform.ToANormalForm())) == 8


def test_function():
    x = relay.Var("x", relay.TensorType((), "float32"))
    f = relay.Function([x], x + x)
    anf = _run(f, transform.ToANormalForm())
    assert isinstance(anf, relay.Function)
    d = np.float32(4)
    assert _value(f, d) == _value(anf, d) == 8


def test_primitive_functions_stay_as_they_are():
    p = relay.var("p", shape=(2,))
    prim = relay.Function([p], relay.exp(relay.exp(p))).with_attr("Primitive", 1)
    x = relay.var("x", shape=(2,))
    anf = _run(relay.Function([x], prim(prim(x))), transform.ToANormalForm())
    fns = [n for n in post_order(anf) if isinstance(n, relay.Function) and n is not anf]
    assert len(fns) == 1 and not _has_let(fns[0])


# -- ToGraphNormalForm (TVM's tests/python/relay/test_pass_to_graph_normal_form.py) ------------
def _implicit_share():
    x, y, z = relay.Var("x"), relay.Var("y"), relay.Var("z")
    body = relay.Let(z, relay.add(y, y), relay.add(z, z))
    body = relay.Let(y, relay.add(x, x), body)
    return relay.Function([], relay.Let(x, relay.const(1), body))


def test_implicit_share():
    f = _implicit_share()
    g = _run(f, transform.ToGraphNormalForm())
    assert _has_let(f) and not _has_let(g)
    assert _value(f) == _value(g) == 8


def test_round_trip():
    f = _implicit_share()
    g = _run(f, transform.ToGraphNormalForm())
    h = _run(g, transform.ToANormalForm())
    assert not _has_let(g) and _has_let(h)
    assert _value(f) == _value(g) == _value(h) == 8


def test_recursive_binding_stays_a_let():
    n = relay.var("n", shape=(), dtype="int32")
    f = relay.Var("f")
    body = relay.If(relay.equal(n, relay.const(0)), relay.const(0),
                    relay.add(n, f(relay.subtract(n, relay.const(1)))))
    fn = relay.Function([n], body, ret_type=relay.TensorType((), "int32"))
    prog = relay.Let(f, fn, f(relay.const(4)))
    g = _run(relay.Function([], prog), transform.ToGraphNormalForm())
    lets = [node for node in post_order(g) if isinstance(node, relay.Let)]
    assert len(lets) == 1 and lets[0].body is lets[0].var
    assert _value(g) == 10


# -- ToBasicBlockNormalForm (TVM's tests/python/relay/test_pass_to_basic_block_normal_form.py) --
def test_no_explicit_bind():
    x = relay.const(1)
    y = relay.add(x, x)
    z = relay.add(y, y)
    f = relay.Function([], relay.add(z, z))
    bblock = _run(f, transform.ToBasicBlockNormalForm())
    assert not _has_let(bblock)
    assert _value(bblock) == 8
    assert not needs_basic_block_lifting(bblock)


def test_top_level_nested_if():
    x = relay.var("x", shape=(), dtype="bool")
    y = relay.var("y", shape=(), dtype="float32")
    z = relay.var("z", shape=(), dtype="float32")
    cond_t, cond_f = relay.const(True), relay.const(False)
    one, three = relay.const(1, "float32"), relay.const(3, "float32")
    y2, z2 = relay.add(y, y), relay.add(z, z)
    body = relay.If(x, relay.If(cond_t, relay.add(z2, y2), relay.add(three, y2)),
                    relay.If(cond_f, z2, one))
    bblock = _run(body, [transform.ToBasicBlockNormalForm(), transform.InferType()])
    vy2, vz2 = relay.var("y2"), relay.var("z2")
    true_branch = relay.Let(vy2, relay.add(y, y), relay.If(
        cond_t, relay.add(vz2, vy2), relay.add(three, vy2)))
    expected = relay.Let(vz2, relay.add(z, z), relay.If(
        x, true_branch, relay.If(cond_f, vz2, one)))
    assert_structural_equal(bblock, _typed(expected), map_free_vars=True)


def test_nested_if():
    x = relay.var("x", shape=(), dtype="bool")
    y = relay.var("y", shape=(), dtype="float32")
    cond_t, cond_f = relay.const(True), relay.const(False)
    one, two, three = (relay.const(v, "float32") for v in (1, 2, 3))
    y2 = relay.add(y, y)
    body = relay.If(x, relay.If(cond_t, y2, relay.add(three, y2)), relay.If(cond_f, two, one))
    bblock = _run(body, [transform.ToBasicBlockNormalForm(), transform.InferType()])
    vy2 = relay.var("y2")
    true_branch = relay.Let(vy2, relay.add(y, y), relay.If(cond_t, vy2, relay.add(three, vy2)))
    expected = relay.If(x, true_branch, relay.If(cond_f, two, one))
    assert_structural_equal(bblock, _typed(expected), map_free_vars=True)
    fn = relay.Function(relay.analysis.free_vars(bblock), bblock)
    assert not needs_basic_block_lifting(fn)


def test_bbnf_let():
    def unchanged(body):
        body = _typed(body)
        assert_structural_equal(_run(body, transform.ToBasicBlockNormalForm()), body)

    x, y, z = relay.Var("x"), relay.Var("y"), relay.Var("z")
    c, d = relay.const(3.0), relay.const(4.0)
    unchanged(relay.Let(x, d, x))
    unchanged(relay.Let(x, d, relay.add(x, x)))
    unchanged(relay.Let(y, c, relay.Let(x, d, relay.Let(z, x + y, x + z))))
    # let %y = %x; %x  =>  let %y = %x; %y  (the alias is used from then on, as in TVM)
    body = _typed(relay.Let(x, d, relay.Let(y, x, x)))
    x2, y2 = relay.Var("x"), relay.Var("y")
    expected = _typed(relay.Let(x2, d, relay.Let(y2, x2, y2)))
    got = _run(body, transform.ToBasicBlockNormalForm())
    assert_structural_equal(_typed(got), expected)


def test_bbnf_if():
    one, two = relay.const(1, "float32"), relay.const(2, "float32")
    x = relay.var("x", shape=(), dtype="float32")
    v1 = relay.add(x, one)
    body = relay.If(relay.equal(x, two), relay.multiply(v1, two), relay.multiply(v1, one))
    vv1 = relay.var("v1")
    expected = relay.Let(vv1, relay.add(x, one), relay.If(
        relay.equal(x, two), relay.multiply(vv1, two), relay.multiply(vv1, one)))
    for before, after, free in [(body, expected, True),
                                (relay.Function([x], body), relay.Function([x], expected),
                                 False)]:
        bblock = _run(before, [transform.ToBasicBlockNormalForm(), transform.InferType()])
        assert_structural_equal(bblock, _typed(after), map_free_vars=free)


def test_higher_order():
    x = relay.var("x", shape=(1,))
    y = relay.var("y", shape=(1,))
    z = relay.var("z", shape=(1,))
    x2 = relay.add(x, x)
    returns = relay.Function([x], relay.Tuple([relay.Function([y], relay.add(x2, y)),
                                               relay.Function([z], relay.add(x2, z))]))
    s = relay.var("s", shape=(1,))
    shared = relay.add(s, s)
    c = relay.var("c", shape=(), dtype="bool")
    nested = relay.Function([c, s], relay.If(c, relay.Function([x], relay.add(x, shared)),
                                             relay.Function([z], relay.add(z, shared))))
    for func in (returns, nested):
        assert needs_basic_block_lifting(_typed(func))
        bblock = _run(func, transform.ToBasicBlockNormalForm())
        assert not needs_basic_block_lifting(_typed(bblock))


def test_pass_info():
    for make, name, opt in [(transform.ToANormalForm, "ToANormalForm", 1),
                            (transform.ToGraphNormalForm, "ToGraphNormalForm", 1),
                            (transform.ToBasicBlockNormalForm, "ToBasicBlockNormalForm", 1)]:
        info = make().info
        assert (info.name, info.opt_level, info.required) == (name, opt, [])


# -- deep programs ----------------------------------------------------------------------------
def test_deep_chain_round_trip():
    """10,000 ops through ToANormalForm and back: no recursion limit, same program."""
    x = relay.var("x", shape=(2,))
    y = x
    for i in range(10000):
        y = relay.negative(y) if i % 2 else relay.exp(y)
    mod = tvm.IRModule.from_expr(relay.Function([x], y))
    anf = transform.ToANormalForm()(mod)
    lets, body = 0, anf["main"].body
    while isinstance(body, relay.Let):
        lets, body = lets + 1, body.body
    assert lets == 10000
    assert modules_identical(transform.ToBasicBlockNormalForm()(mod), mod)
    back = transform.ToGraphNormalForm()(anf)
    assert structural_equal(back["main"].body, mod["main"].body)


# -- every model ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_compute_the_same(name):
    mod = bound_model(name)
    assert modules_identical(transform.ToBasicBlockNormalForm()(mod), mod)  # one scope only
    anf = transform.ToANormalForm()(mod)
    back = transform.ToGraphNormalForm()(anf)
    assert_structural_equal(back, mod)  # the round trip gives the very same graph back
    check_model(name, anf)


# -- random graphs ----------------------------------------------------------------------------
def _outputs(mod, args):
    result = create_executor("debug", mod=mod).evaluate()(*args)
    flat, stack = [], [result]
    while stack:
        value = stack.pop()
        if isinstance(value, tuple):
            stack.extend(reversed(value))
        else:
            flat.append(value.numpy())
    return flat


def _assert_same_values(before, after):
    rng = np.random.default_rng(0)
    args = [random_value(p.checked_type, rng) for p in before["main"].params]
    with np.errstate(all="ignore"):
        for want, got in zip(_outputs(before, args), _outputs(after, args)):
            np.testing.assert_array_equal(got, want)  # NaN equals NaN here


def _rewritten_nodes(func):
    """Nodes of ``func`` outside primitive function bodies (which stay as written)."""
    order, seen, stack = [], set(), [func]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        if isinstance(node, relay.Function) and node.get_attr("Primitive"):
            continue
        stack.extend(expr_children(node))
    return order


def _assert_a_normal_form(func):
    """Operands are variables; scopes (let and if bodies, function bodies) are let chains
    ending in a variable; no non-atomic node has two users."""
    uses = {}
    for node in _rewritten_nodes(func):
        if isinstance(node, relay.Function) and node.get_attr("Primitive"):
            continue
        scoped = []
        if isinstance(node, relay.Let):
            scoped, operands = [node.body], []
        elif isinstance(node, relay.If):
            scoped, operands = [node.true_branch, node.false_branch], [node.cond]
        elif isinstance(node, relay.Function):
            scoped, operands = [node.body], []
        else:
            operands = expr_children(node)
        for child in operands:
            assert isinstance(child, _ATOMIC), f"non-atomic operand {type(child).__name__}"
        for child in scoped:
            assert isinstance(child, _ATOMIC + (relay.Let,)), type(child).__name__
        for child in expr_children(node):
            if not isinstance(child, _ATOMIC + (relay.Constant,)):
                uses[child] = uses.get(child, 0) + 1
    shared = [n for n, count in uses.items() if count > 1]
    assert not shared, "a non-atomic sub-expression is shared outside a let"


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(relay_modules())
def test_random_graphs(mod):
    mod = transform.InferType()(mod)
    anf = transform.InferType()(transform.ToANormalForm()(mod))
    _assert_a_normal_form(anf["main"])
    _assert_same_values(mod, anf)
    back = transform.ToGraphNormalForm()(anf)
    assert not _has_let(back["main"])
    _assert_same_values(mod, back)
    bblock = transform.InferType()(transform.ToBasicBlockNormalForm()(mod))
    assert not needs_basic_block_lifting(bblock["main"])
    _assert_same_values(mod, bblock)
