"""DeadCodeElimination: TVM's before/expected cases, every model (in A-normal form), random
graphs."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import irlab as tvm
from irlab import relay
from irlab.instrument import modules_identical
from irlab.ir import assert_structural_equal, structural_equal
from irlab.parser import parse
from irlab.relay import transform
from irlab.relay.expr_functor import post_order
from irlab.testing.check import check_numerics
from irlab.testing.strategies import relay_modules

from _model_references import MODEL_NAMES, bound_model, check_model


def _check(before, after, passes):
    """Run ``passes`` on the parsed ``before``; compare with ``after`` once both are typed."""
    passes = passes if isinstance(passes, list) else [passes]
    got = transform.Sequential(passes)(parse(before))
    assert_structural_equal(transform.InferType()(got), transform.InferType()(parse(after)),
                            map_free_vars=True)


# -- ported from TVM's tests/python/relay/test_pass_dead_code_elimination.py -------------------
def test_dead_let():
    _check("def @main(%z: int32) { let %x = 1; %z }", "def @main(%z: int32) { %z }",
           transform.DeadCodeElimination())


def test_one_live_let():
    _check("def @main(%z: int32) { let %x = 1; let %y = 2; add(%x, %x) }",
           "def @main(%z: int32) { let %x = 1; add(%x, %x) }", transform.DeadCodeElimination())


def test_nested_let():
    _check("def @main(%d: int32, %b: int32) { let %a = %b; let %c = %d; %c }",
           "def @main(%d: int32, %b: int32) { let %c = %d; %c }",
           transform.DeadCodeElimination())


_RECURSIVE = """
def @main() {
    let %f = fn (%n: int32, %data: float32) -> float32 {
        if (equal(%n, 0)) { %data } else { %f(subtract(%n, 1), log(%data)) }
    };
    BODY
}
"""


def test_live_recursion():
    program = _RECURSIVE.replace("BODY", "%f(2, 10000f)")
    _check(program, program, [transform.DeadCodeElimination(), transform.InferType()])


def test_dead_recursion():
    _check(_RECURSIVE.replace("BODY", "()"), "def @main() { () }",
           [transform.DeadCodeElimination(), transform.InferType()])


def test_add_with_let():
    _check("def @main() { add((let %a = 1; 3), 2) }", "def @main() { add(3, 2) }",
           [transform.DeadCodeElimination(), transform.InferType()])


def test_tuple_get_item():
    _check("def @main() { let %a = 100; (1, 2, 3, 4).0 }", "def @main() { (1, 2, 3, 4).0 }",
           transform.DeadCodeElimination())


def test_inline_into_function():
    """Single uses are inlined, but never into a function (it may run many times)."""
    before = """
    def @main() {
        let %x = add(1, 1);
        let %f = fn (%y: int32) -> int32 {
          let %z = add(%y, %y);
          add(%x, %z)
        };
        (%f(2), %f(3))
    }"""
    after = """
    def @main() {
        let %x = add(1, 1);
        let %f = fn (%y: int32) -> int32 { add(%x, add(%y, %y)) };
        (%f(2), %f(3))
    }"""
    _check(before, after, transform.DeadCodeElimination(inline_once=True))


def test_impure_op():
    """dropout is TOpIsStateful: its binding stays even when unused."""
    before = """
    def @main(%x: Tensor[(4), float32]) {
        let %d = nn.dropout(%x, rate=0.5);
        let %e = exp(%x);
        %x
    }"""
    after = """
    def @main(%x: Tensor[(4), float32]) {
        let %d = nn.dropout(%x, rate=0.5);
        %x
    }"""
    _check(before, after, transform.DeadCodeElimination())
    _check(before, "def @main(%x: Tensor[(4), float32]) { %x }",
           transform.DeadCodeElimination(ignore_impurity=True))


def test_impure_callee_keeps_the_binding():
    """A call of a function whose body is impure is impure too (TVM's test_impure_func)."""
    before = """
    def @f(%x: Tensor[(4), float32]) {
        let %d = nn.dropout(%x, rate=0.5);
        %x
    }
    def @main(%x: Tensor[(4), float32]) {
        let %y = @f(%x);
        %x
    }"""
    _check(before, before, transform.DeadCodeElimination(inline_once=True))


def test_dead_chain_goes_in_one_run():
    before = "def @main(%x: float32) { let %a = exp(%x); let %b = log(%a); %x }"
    _check(before, "def @main(%x: float32) { %x }", transform.DeadCodeElimination())


def test_inline_once_keeps_shared_bindings():
    before = """
    def @main(%x: float32) {
        let %a = exp(%x);
        let %b = log(%x);
        add(add(%a, %a), %b)
    }"""
    after = "def @main(%x: float32) { let %a = exp(%x); add(add(%a, %a), log(%x)) }"
    _check(before, after, transform.DeadCodeElimination(inline_once=True))


def test_pass_info():
    info = transform.DeadCodeElimination().info
    assert (info.name, info.opt_level, info.required) == ("DeadCodeElimination", 1,
                                                          ["InferType"])


def test_deep_let_chain():
    """10,000 bindings: counted and inlined without recursion."""
    x = relay.var("x", shape=(2,))
    value = x
    bindings = []
    for i in range(10000):
        var = relay.var(f"v{i}")
        bindings.append((var, relay.negative(value)))
        value = var
    dead = relay.var("dead")
    body = value
    for var, val in reversed(bindings):
        body = relay.Let(var, val, body)
    body = relay.Let(dead, relay.exp(x), body)
    mod = transform.InferType()(tvm.IRModule.from_expr(relay.Function([x], body)))
    out = transform.DeadCodeElimination()(mod)
    assert out["main"].body.var.name_hint == "v0"  # the dead binding went, the chain stayed
    inlined = transform.DeadCodeElimination(inline_once=True)(mod)
    assert not any(isinstance(n, relay.Let) for n in post_order(inlined["main"]))


# -- every model, after ToANormalForm (models have no lets of their own) -----------------------
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_compute_the_same(name):
    mod = bound_model(name)
    assert modules_identical(transform.DeadCodeElimination()(mod), mod)
    anf = transform.ToANormalForm()(mod)
    after = transform.DeadCodeElimination(inline_once=True)(anf)
    # Every value of a model is used: single uses are inlined, the shared ones stay bound.
    lets = sum(isinstance(n, relay.Let) for n in post_order(after["main"]))
    assert lets < sum(isinstance(n, relay.Let) for n in post_order(anf["main"]))
    check_model(name, after)


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


def _let_vars_and_uses(func):
    bound, used = set(), set()
    for node in post_order(func):
        if isinstance(node, relay.Let):
            bound.add(node.var)
        for child in _children(node):
            if isinstance(child, relay.Var):
                used.add(child)
    return bound, used


def _children(node):
    if isinstance(node, relay.Let):
        return [node.value, node.body]  # the binder itself is not a use
    if isinstance(node, relay.Function):
        return [node.body]
    from irlab.relay.expr_functor import expr_children

    return expr_children(node)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(relay_modules())
def test_random_graphs(mod):
    mod = transform.InferType()(mod)
    after = transform.DeadCodeElimination()(mod)
    bound, used = _let_vars_and_uses(after["main"])
    assert bound <= used, "a dead binding survived"
    assert structural_equal(transform.DeadCodeElimination()(after), after)
    inlined = transform.DeadCodeElimination(inline_once=True)(mod)
    with np.errstate(all="ignore"):
        check_numerics(_by_position(mod), _by_position(after))
        check_numerics(_by_position(mod), _by_position(inlined))
