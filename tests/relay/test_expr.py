"""Relay expression constructors, operator sugar, IRModule and analyses."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.errors import IrlabError
from irlab.ir import TensorType


def test_var_forms():
    assert relay.var("x", shape=(1, 3)).type_annotation == TensorType((1, 3), "float32")
    assert relay.var("x", "int32").type_annotation == TensorType((), "int32")
    assert relay.var("x", relay.TensorType((2,), "int8")).type_annotation.dtype == "int8"
    assert relay.var("x").type_annotation is None
    with pytest.raises(ValueError):
        relay.var("x", TensorType((1,)), shape=(1,))


def test_const_dtype_rules():
    assert relay.const(1).data.dtype == "int32"
    assert relay.const(1.0).data.dtype == "float32"
    assert relay.const(True).data.dtype == "bool"
    assert relay.const(np.zeros(3)).data.dtype == "float32"  # float64 narrowed as TVM
    assert relay.const(np.zeros(3, "float16")).data.dtype == "float16"
    assert relay.const(np.zeros(3), "float64").data.dtype == "float64"
    assert relay.const(irlab.nd.array(np.zeros(2, "int64"))).data.dtype == "int64"


def test_operator_sugar_builds_calls():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    assert (x + y).op.name == "add" and (x - y).op.name == "subtract"
    assert (x * y).op.name == "multiply" and (x / y).op.name == "divide"
    assert (-x).op.name == "negative" and (x < y).op.name == "less"
    assert x.astype("int32").attrs.dtype == "int32"
    with pytest.raises(IrlabError, match="relay.const"):
        x + 1
    # == stays identity: nodes are dict keys
    assert (x == x) is True and (x == y) is False
    assert len({x: 1, y: 2}) == 2


def test_tuple_wrapper_and_getitem():
    t = relay.Tuple([relay.var("a", shape=(1,)), relay.var("b", shape=(2,))])
    w = relay.TupleWrapper(t, 2)
    assert w[1].index == 1 and w[-1].index == 1 and w.astuple() is t and len(w) == 2
    with pytest.raises(IndexError):
        w[2]


def test_call_rejects_non_expressions():
    with pytest.raises(IrlabError):
        relay.Call(relay.op.get("add"), [relay.var("x"), 3])
    with pytest.raises(IrlabError):
        relay.Function(["x"], relay.var("x"))


def test_irmodule_api():
    x = relay.var("x", shape=(2,))
    mod = irlab.IRModule.from_expr(relay.exp(x))
    main = mod["main"]
    assert isinstance(main, relay.Function) and list(main.params) == [x]
    gv = mod.get_global_var("main")
    assert mod[gv] is main and "main" in mod
    f = relay.Function([x], relay.negative(x))
    mod["neg"] = f
    assert [g.name_hint for g in mod.get_global_vars()] == ["main", "neg"]
    other = irlab.IRModule({"extra": f})
    mod.update(other)
    assert "extra" in mod
    with pytest.raises(IrlabError, match="cannot find global function @nope"):
        mod["nope"]
    with pytest.raises(IrlabError):
        mod.get_global_var("nope")


def test_free_vars_order_and_analyses():
    data = relay.var("data", shape=(1, 2))
    w = relay.var("w")
    b = relay.var("b")
    out = relay.add(relay.multiply(data, w), b)
    assert [v.name_hint for v in relay.analysis.free_vars(out)] == ["data", "w", "b"]
    fn = relay.Function([data], out)
    assert [v.name_hint for v in relay.analysis.free_vars(fn)] == ["w", "b"]
    assert relay.analysis.bound_vars(fn) == [data]
    seen = []
    relay.analysis.post_order_visit(out, lambda n: seen.append(type(n).__name__))
    assert seen[-1] == "Call" and seen.count("Var") == 3 and seen.count("Op") == 2
    assert relay.analysis.count_ops(out) == {"add": 1, "multiply": 1}


def test_bind_params_by_name():
    x = relay.var("x", shape=(2,))
    w = relay.var("w", shape=(2,))
    fn = relay.Function([x, w], x * w)
    bound = relay.build_module.bind_params_by_name(fn, {"w": np.ones(2, "float32")})
    assert [p.name_hint for p in bound.params] == ["x"]
    assert isinstance(bound.body.args[1], relay.Constant)


def test_var_vid_is_its_identity():
    """TVM's ``Var.vid``: the same for the same variable, different for a namesake."""
    from irlab import relay

    x, other = relay.var("x", "float32"), relay.var("x", "float32")
    assert x.vid.same_as(x.vid) and not x.vid.same_as(other.vid)
    assert x.vid.name_hint == "x"
