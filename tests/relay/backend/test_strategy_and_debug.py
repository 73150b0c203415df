"""Strategy overrides from user code, LowerTE naming, and the debug executor."""

import numpy as np

import irlab as tvm
from irlab import relay, te
from irlab.contrib import graph_executor
from irlab.contrib.debugger import debug_executor
from irlab.ir.op import Op
from irlab.relay.backend.te_compiler import MAX_NAME, fused_name, lower_function
from irlab.relay.op.op_strategy import OpStrategy, register_strategy


def _dense_func():
    x = relay.var("x", shape=(4, 8), dtype="float32")
    w = relay.var("w", shape=(16, 8), dtype="float32")
    f = relay.Function([x, w], relay.nn.dense(x, w)).with_attr("Primitive", 1)
    return relay.transform.InferType()(tvm.IRModule.from_expr(f))["main"]


def test_a_user_strategy_with_a_higher_level_wins_and_runs():
    op = Op.get("nn.dense")
    saved = op._entry.attrs["FTVMStrategy"]
    calls = []

    def my_compute(attrs, inputs, out_type):
        calls.append("compute")
        x, w = inputs
        k = te.reduce_axis((0, 8), name="k")
        return [te.compute((4, 16), lambda i, j: te.sum(x[i, k] * w[j, k], axis=k),
                           name="my_dense")]

    def my_schedule(attrs, sch, outs, target):
        calls.append("schedule")

    def my_strategy(attrs, inputs, out_type, target):
        strategy = OpStrategy()
        strategy.add_implementation(my_compute, my_schedule, "mine", plevel=1)
        return strategy

    try:
        register_strategy("nn.dense", my_strategy, level=11)
        lowered = lower_function(_dense_func(), tvm.target.Target("llvm"))
        assert lowered.anchor[0].name == "mine" and calls == ["compute", "schedule"]
        lib = tvm.build(lowered.prim_func)
        rng = np.random.default_rng(0)
        x, w = rng.random((4, 8), "float32"), rng.random((16, 8), "float32")
        out = np.zeros((4, 16), "float32")
        lib[lowered.name](x, w, out)
        np.testing.assert_allclose(out, x @ w.T, rtol=1e-5)
        register_strategy("nn.dense", lambda *a: None, level=5)  # a lower level is ignored
        assert lower_function(_dense_func(), tvm.target.Target("llvm")).anchor[0].name == "mine"
    finally:
        op._entry.attrs["FTVMStrategy"] = saved
    assert lower_function(_dense_func(), tvm.target.Target("llvm")).anchor[0].name != "mine"


def test_long_fused_names_are_cut_with_a_hash():
    x = relay.var("x", shape=(4,), dtype="float32")
    y = x
    for _ in range(12):
        y = relay.nn.relu(relay.exp(y))
    f = relay.Function([x], y)
    name = fused_name(f)
    assert len(name) == MAX_NAME and name.startswith("tvmgen_default_fused_exp_nn_relu")
    g = relay.Function([x], relay.sigmoid(y))
    assert fused_name(g) != name  # the hash tells long names apart


def test_debug_executor_times_every_kernel():
    x = relay.var("x", shape=(8, 8), dtype="float32")
    y = relay.nn.softmax(relay.exp(relay.nn.relu(x)))
    with tvm.transform.PassContext(opt_level=0):
        lib = relay.build(tvm.IRModule.from_expr(relay.Function([x], y)), "llvm")
    m = debug_executor.create(lib.get_graph_json(), lib.get_lib(), tvm.cpu())
    a = np.random.default_rng(1).random((8, 8)).astype("float32")
    m.set_input("x", a)
    m.run()
    times = m.profile()
    assert len(times) == 3 and all(t > 0 for t in times.values())
    assert "Node Name" in m.report() and "Total" in m.report()
    plain = graph_executor.create(lib.get_graph_json(), lib.get_lib(), tvm.cpu())
    plain.set_input("x", a)
    plain.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), plain.get_output(0).numpy())
