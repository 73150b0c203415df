"""Small conventions of TVM's Relay API that TVM's own tests rely on."""

import numpy as np

import irlab
from irlab import relay


def test_const_takes_a_tensor_type_as_dtype():
    c = relay.const(0, relay.scalar_type("int64"))
    assert c.data.dtype == "int64"


def test_broadcast_to_reads_a_constant_shape_as_static():
    x = relay.var("x", shape=(1, 3))
    y = relay.broadcast_to(x, relay.const([2, 3], dtype="int64"))
    assert tuple(y.attrs.shape) == (2, 3)
    out = relay.create_executor("debug", mod=relay.Function([x], y)).evaluate()(
        np.ones((1, 3), "float32"))
    assert out.numpy().shape == (2, 3)


def test_an_unknown_variable_type_equals_no_annotation():
    let = relay.parse_expr("let %x : _ = (); %x")
    x = relay.var("x")
    irlab.ir.assert_structural_equal(let, relay.Let(x, relay.Tuple([]), x))


def test_call_attrs_of_the_test_attrs_type_round_trip():
    x = relay.var("x", shape=(2,))
    fn = relay.Function([x], relay.exp(x))
    p = relay.var("p", shape=(2,))
    call = relay.Call(fn, [p], attrs=irlab.ir.make_node("attrs.TestAttrs", name="n"))
    mod = irlab.IRModule.from_expr(relay.Function([p], call))
    text = mod.astext()
    assert 'name="n", attrs_type_key="attrs.TestAttrs"' in text
    irlab.ir.assert_structural_equal(relay.parse(text), relay.transform.InferType()(mod))


def test_var_vid_is_the_variable_identity():
    x = relay.var("x")
    assert x.vid.same_as(x.vid) and not x.vid.same_as(relay.var("x").vid)


def test_any_dimension_in_tensor_types():
    ty = relay.TensorType((relay.Any(), 3), "float32")
    assert ty == relay.TensorType((irlab.tir.Any(), 3), "float32")
    assert str(ty) == "Tensor[(?, 3), float32]"
    let = relay.parse_expr("let %x : Tensor[(?, 3), float32] = (); %x")
    assert let.var.type_annotation == ty
    irlab.ir.assert_structural_equal(let.var.type_annotation, ty)
