"""Type inference refuses a tensor no 64-bit address space can hold, naming it, instead of
building and failing inside numpy (issue 20, finding 7)."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relay
from irlab.errors import RelayTypeError


def test_huge_parameter_is_refused_by_name():
    x = relay.var("x", shape=(2 ** 62, 2 ** 62))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    with pytest.raises(RelayTypeError, match=r"^%x: tensor type Tensor\[\(4611686018427387904, "
                                             r"4611686018427387904\), float32\] has .* "
                                             r"more than a 64-bit address space"):
        relay.transform.InferType()(mod)
    with pytest.raises(RelayTypeError, match="%x: tensor type"):
        relay.build(mod, "llvm")


def test_huge_intermediate_is_refused_at_its_call():
    x = relay.var("x", shape=(2 ** 32, 1))
    y = relay.var("y", shape=(1, 2 ** 32))
    mod = tvm.IRModule.from_expr(relay.Function([x, y], relay.sum(x + y)))
    with pytest.raises(RelayTypeError, match=r"^add: tensor type Tensor\[\(4294967296, "
                                             r"4294967296\), float32\]") as info:
        relay.transform.InferType()(mod)
    assert "add(%x, %y)" in str(info.value) and "^^^" in str(info.value)


def test_large_but_addressable_tensors_type_check():
    x = relay.var("x", shape=(2 ** 30, 2 ** 30), dtype="int8")  # 2^60 bytes: only typed
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x], x)))
    assert mod["main"].checked_type.ret_type.shape == (2 ** 30, 2 ** 30)
    small = relay.var("s", shape=(2, 3))
    mod = tvm.IRModule.from_expr(relay.Function([small], relay.nn.relu(small)))
    lib = relay.build(mod, "llvm")
    m = tvm.contrib.graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.run(s=-np.ones((2, 3), "float32"))
    assert (m.get_output(0).numpy() == 0).all()
