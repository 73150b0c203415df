"""An operator defined from Python in one block (TVM's relay.op.op registration chain, seed
002 part 1) type-checks, fuses and builds with relay.build, and computes what numpy does."""

import json

import numpy as np
import pytest

import irlab
from irlab import relay, te
from irlab.contrib import graph_executor
from irlab.errors import IrlabError
from irlab.ir.type import TensorType
from irlab.relay.op import op as _op


def _define_square_plus(name):
    """``name(x, y) = x * x + y`` over tensors of one shape, in one block."""
    _op.register(name, "x * x + y")
    op = _op.get(name)
    op.set_num_inputs(2)
    op.add_argument("x", "Tensor", "squared").add_argument("y", "Tensor", "added")
    op.set_support_level(10)

    def rel(arg_types, attrs):
        x, y = arg_types
        if x.shape != y.shape:
            raise IrlabError(f"{name}: shapes differ: {x.shape} vs {y.shape}")
        return TensorType(x.shape, x.dtype)

    op.add_type_rel("SquarePlusRel", rel)
    _op.register_pattern(name, _op.OpPattern.ELEMWISE)
    _op.register_compute(name, lambda attrs, inputs, out_type: [te.compute(
        inputs[0].shape, lambda *i: inputs[0](*i) * inputs[0](*i) + inputs[1](*i))])
    _op.register_injective_schedule(name)
    return op


def _run(mod, opt_level, **inputs):
    with irlab.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, "llvm")
    m = graph_executor.GraphModule(lib["default"](irlab.cpu()))
    m.run(**inputs)
    return m.get_output(0).numpy(), lib


@pytest.mark.parametrize("opt_level", [0, 3])
def test_user_op_builds_fuses_and_runs(opt_level):
    op = _define_square_plus(f"test.square_plus{opt_level}")
    x, y = relay.var("x", shape=(4, 37)), relay.var("y", shape=(4, 37))
    body = relay.nn.relu(relay.Call(op, [x, y]))
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(relay.Function([x, y], body)))
    assert str(mod["main"].body.checked_type) == str(TensorType((4, 37), "float32"))
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((4, 37)).astype("float32") for _ in range(2))
    got, lib = _run(mod, opt_level, x=a, y=b)
    np.testing.assert_allclose(got, np.maximum(a * a + b, 0), rtol=1e-6)
    kernels = [n for n in json.loads(lib.get_graph_json())["nodes"] if n["op"] == "tvm_op"]
    assert len(kernels) == (1 if opt_level else 2)  # ELEMWISE: fused with the relu


def test_user_op_type_errors_name_the_op():
    op = _define_square_plus("test.square_plus_bad")
    x, y = relay.var("x", shape=(4, 3)), relay.var("y", shape=(3, 4))
    mod = irlab.IRModule.from_expr(relay.Function([x, y], relay.Call(op, [x, y])))
    with pytest.raises(IrlabError, match="shapes differ"):
        relay.transform.InferType()(mod)


def test_named_relation_and_missing_compute():
    _op.register("test.ident", "identity, no compute")
    op = _op.get("test.ident").set_num_inputs(1).add_type_rel("Identity")
    _op.register_injective_schedule("test.ident")
    x = relay.var("x", shape=(2, 2))
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(
        relay.Function([x], relay.Call(op, [x]))))
    assert mod["main"].body.checked_type.shape == (2, 2)
    with pytest.raises(IrlabError, match="no compute"):
        relay.build(mod, "llvm")
    with pytest.raises(IrlabError, match="no type relation named 'Nope'"):
        op.add_type_rel("Nope")


def test_user_op_between_layout_changes_is_left_alone():
    """Passes ask the op for what they need; a user op says nothing of layouts, so
    ConvertLayout hands it its input back in the original layout (and FoldScaleAxis,
    CombineParallel... skip it): the program computes the same."""
    op = _define_square_plus("test.square_plus_layout")
    assert op.get_attr("FInferCorrectLayout") is None
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 4, 3, 3))
    y = relay.var("y", shape=(1, 4, 6, 6))
    conv = relay.nn.conv2d(x, w, padding=(1, 1))
    body = relay.nn.relu(relay.Call(op, [conv, y]))
    mod = irlab.IRModule.from_expr(relay.Function([x, w, y], body))
    with irlab.transform.PassContext(opt_level=3):
        converted = irlab.transform.Sequential([
            relay.transform.InferType(),
            relay.transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]})])(mod)
    text = converted.astext()
    assert 'data_layout="NHWC"' in text and 'dst_layout="NCHW"' in text
    rng = np.random.default_rng(1)
    inputs = {"x": rng.standard_normal((1, 4, 6, 6)).astype("float32"),
              "w": rng.standard_normal((4, 4, 3, 3)).astype("float32"),
              "y": rng.standard_normal((1, 4, 6, 6)).astype("float32")}
    want, _ = _run(mod, 0, **inputs)
    got, _ = _run(converted, 0, **inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_relation_that_raises_is_a_type_error_naming_the_op():
    """A Python relation failing with any exception (an ``assert`` in TVM's tests) is reported
    as an irlab type error naming the relation and the op, as TVM turns it into a TVMError."""
    _op.register("test.assert_rel", "relation that asserts")
    op = _op.get("test.assert_rel").set_num_inputs(1)
    op.add_argument("data", "Tensor", "input")

    def rel(arg_types, attrs):
        assert len(arg_types) == 2, "arg number mismatch"

    op.add_type_rel("AssertRel", rel)
    x = relay.var("x", shape=(2,))
    mod = irlab.IRModule.from_expr(relay.Function([x], relay.Call(op, [x])))
    with pytest.raises(IrlabError, match="'AssertRel' of operator test.assert_rel raised "
                                         "AssertionError: arg number mismatch"):
        relay.transform.InferType()(mod)
