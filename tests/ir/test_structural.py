"""Structural equality and hashing: variable mapping, sharing, constants, modules."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.errors import StructuralMismatchError
from irlab.ir import assert_structural_equal, structural_equal, structural_hash


def _fn(name_x="x", name_y="y", op=relay.add):
    x = relay.var(name_x, shape=(2, 3))
    y = relay.var(name_y, shape=(2, 3))
    return relay.Function([x, y], op(x, y))


def test_bound_variables_are_mapped_names_ignored():
    a, b = _fn(), _fn("p", "q")
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert not structural_equal(a, _fn(op=relay.subtract))


def test_parameter_order_matters():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(2, 3))
    assert not structural_equal(relay.Function([x, y], x - y), relay.Function([y, x], x - y))


def test_free_vars_identity_unless_mapped():
    x1, x2 = relay.var("x", shape=(1,)), relay.var("x", shape=(1,))
    assert not structural_equal(relay.exp(x1), relay.exp(x2))
    assert structural_equal(relay.exp(x1), relay.exp(x2), map_free_vars=True)
    assert structural_hash(relay.exp(x1), map_free_vars=True) == structural_hash(
        relay.exp(x2), map_free_vars=True)


def test_type_annotations_and_attrs_matter():
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(3, 3))
    assert not structural_equal(relay.Function([x], x), relay.Function([y], y))
    assert not structural_equal(relay.Function([x], relay.cast(x, "int32")),
                                relay.Function([x], relay.cast(x, "int64")))


def test_constants_compare_by_value():
    c1 = relay.const(np.arange(6, dtype="float32").reshape(2, 3))
    c2 = relay.const(np.arange(6, dtype="float32").reshape(2, 3))
    c3 = relay.const(np.ones((2, 3), dtype="float32"))
    assert structural_equal(c1, c2) and structural_hash(c1) == structural_hash(c2)
    assert not structural_equal(c1, c3)
    assert not structural_equal(relay.const(1.0), relay.const(1))


def test_sharing_must_agree():
    x = relay.var("x", shape=(2,))
    shared = relay.exp(x)
    dag = relay.Function([x], relay.add(shared, shared))
    tree = relay.Function([x], relay.add(relay.exp(x), relay.exp(x)))
    assert not structural_equal(dag, tree)


def test_let_binding_mapped():
    x = relay.var("x", shape=(2,))
    v1, v2 = relay.var("v"), relay.var("w")
    a = relay.Function([x], relay.Let(v1, relay.exp(x), relay.add(v1, x)))
    b = relay.Function([x], relay.Let(v2, relay.exp(x), relay.add(v2, x)))
    assert structural_equal(a, b)


def test_modules_and_assert_diff():
    m1 = irlab.IRModule.from_expr(_fn())
    m2 = irlab.IRModule.from_expr(_fn("a", "b"))
    assert structural_equal(m1, m2) and structural_hash(m1) == structural_hash(m2)
    m3 = irlab.IRModule.from_expr(_fn(op=relay.multiply))
    with pytest.raises(StructuralMismatchError) as info:
        assert_structural_equal(m1, m3)
    assert "structural mismatch" in str(info.value)


def test_deep_chain_equal_and_hash_iterative():
    def chain(n):
        x = relay.var("x", shape=(1,))
        e = x
        for _ in range(n):
            e = relay.exp(e)
        return relay.Function([x], e)
    a, b = chain(10000), chain(10000)
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert not structural_equal(a, chain(9999))


def test_a_shared_subtree_under_different_bindings_is_not_equal():
    # fn (%x, %y) { body } vs fn (%y, %x) { body } with the very same body object: identity of
    # the body must not make them equal, the variables are bound in another order.
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    body = relay.subtract(x, y)
    assert not structural_equal(relay.Function([x, y], body), relay.Function([y, x], body))
    assert structural_equal(relay.Function([x, y], body), relay.Function([x, y], body))
