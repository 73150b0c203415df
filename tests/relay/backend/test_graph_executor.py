"""relay.build -> graph JSON + memory plan + graph executor, on graphs of elementwise ops
(the ops every TOPI family test covers separately)."""

import json
import warnings

import numpy as np
import pytest

import irlab as tvm
from irlab import relay
from irlab.contrib import graph_executor
from irlab.errors import IrlabError
from irlab.relay.backend.graph_plan_memory import plan_memory


def _chain(n=6, shape=(8, 16)):
    x = relay.var("x", shape=shape, dtype="float32")
    y = x
    for i in range(n):
        y = relay.exp(y) if i % 2 == 0 else relay.log(relay.add(y, relay.const(1.0)))
    return tvm.IRModule.from_expr(relay.Function([x], y))


def _reference(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_chain_matches_the_interpreter_at_every_opt_level(opt_level):
    mod = _chain()
    a = np.random.default_rng(0).random((8, 16)).astype("float32")
    with tvm.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, "llvm")
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.set_input("x", a)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), _reference(mod, a), rtol=1e-5)


def test_graph_json_follows_tvms_schema_and_reuses_storage():
    mod = _chain(6)
    with tvm.transform.PassContext(opt_level=0):  # no fusion: one kernel per op
        lib = relay.build(mod, "llvm")
    g = json.loads(lib.get_graph_json())
    assert set(g) == {"nodes", "arg_nodes", "heads", "attrs", "node_row_ptr"}
    ops = [n for n in g["nodes"] if n["op"] == "tvm_op"]
    assert all(n["name"].startswith("tvmgen_default_fused_") for n in ops)
    assert ops[0]["attrs"] == {"func_name": ops[0]["name"], "flatten_data": "0",
                               "num_inputs": "1", "num_outputs": "1"}
    assert g["attrs"]["shape"][0] == "list_shape" and g["attrs"]["dltype"][0] == "list_str"
    sids = g["attrs"]["storage_id"][1]
    assert len(set(sids)) < len(sids)  # intermediates share storage
    params = lib.get_params()
    assert set(params) == {f"p{i}" for i in range(len(params))}
    assert [g["nodes"][i]["name"] for i in g["arg_nodes"]][0] == "x"


def test_identical_functions_compile_once():
    x = relay.var("x", shape=(4, 4), dtype="float32")
    y = relay.exp(relay.exp(x))
    with tvm.transform.PassContext(opt_level=0):
        lib = relay.build(tvm.IRModule.from_expr(relay.Function([x], y)), "llvm")
    names = [n["attrs"]["func_name"] for n in json.loads(lib.get_graph_json())["nodes"]
             if n["op"] == "tvm_op"]
    assert len(names) == 2 and len(set(names)) == 1
    assert lib.get_lib().get_func_names() == names[:1]


def test_plan_memory_keeps_inputs_and_outputs_and_frees_dead_values():
    nodes = [{"op": "null", "name": "x", "inputs": []}]
    for i in range(4):
        nodes.append({"op": "tvm_op", "name": f"f{i}", "inputs": [[i, 0, 0]],
                      "attrs": {"func_name": f"f{i}"}})
    shapes = [[16]] * 5
    dtypes = ["float32"] * 5
    sids, sizes = plan_memory(nodes, [[4, 0, 0]], shapes, dtypes, list(range(6)))
    assert sids[0] not in sids[1:]  # the input keeps its own storage
    assert len(set(sids[1:4])) == 2  # a chain needs two alternating buffers
    assert sids[4] not in sids[:4] or sids[4] in sids[1:4]
    assert all(s == 64 for s in sizes)


def test_tuple_outputs_and_params_and_legacy_unpacking():
    x = relay.var("x", shape=(4, 8), dtype="float32")
    w = relay.var("w", shape=(4, 8), dtype="float32")
    out = relay.Tuple([relay.add(x, w), relay.exp(x)])
    mod = tvm.IRModule.from_expr(relay.Function([x, w], out))
    wv = np.random.default_rng(1).random((4, 8)).astype("float32")
    xv = np.random.default_rng(2).random((4, 8)).astype("float32")
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, "llvm", params={"w": wv})
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    assert m.get_input_info()[0] == {"x": (4, 8)}
    m.run(x=xv)
    assert m.get_num_outputs() == 2
    np.testing.assert_allclose(m.get_output(0).numpy(), xv + wv, rtol=1e-6)
    np.testing.assert_allclose(m.get_output(1).numpy(), np.exp(xv), rtol=1e-6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graph, lib2, params = lib
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    m2 = graph_executor.create(graph, lib2, tvm.cpu())
    m2.set_input(**params)
    m2.set_input(0, xv)
    m2.run()
    np.testing.assert_allclose(m2.get_output(0).numpy(), xv + wv, rtol=1e-6)


def test_bad_inputs_raise():
    mod = _chain(2)
    lib = relay.build(mod, "llvm")
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    with pytest.raises(IrlabError, match="expected shape"):
        m.set_input("x", np.zeros((3, 3), "float32"))
    with pytest.raises(IrlabError, match="expected dtype"):
        m.set_input("x", np.zeros((8, 16), "float64"))
    with pytest.raises(IrlabError, match="no input"):
        m.set_input("nope", np.zeros((8, 16), "float32"))
    with pytest.raises(IrlabError, match="out of range"):
        m.get_output(3)


def test_benchmark_and_profile_report_times():
    lib = relay.build(_chain(4), "llvm")
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.set_input("x", np.ones((8, 16), "float32"))
    result = m.benchmark(number=2, repeat=2)
    assert len(result.results) == 2 and result.mean > 0
    times = m.profile(number=2, repeat=1)
    assert times and all(t > 0 for t in times.values())


def test_run_calls_kernels_bound_to_their_views(monkeypatch):
    """The argument checks run once per thread (when the storage is made), not on every run:
    a small model's run is a few kernel calls of a few us, which the checks would double."""
    from irlab.runtime.compiled import CompiledFunction

    x = relay.var("x", shape=(8, 16), dtype="float32")
    w = relay.const(np.random.default_rng(1).random((16, 16)).astype("float32"))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.nn.dense(x, w))))
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, "llvm")
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    a = np.random.default_rng(0).random((8, 16)).astype("float32")
    m.set_input("x", a)

    def checked_call(self, *args, **kwargs):
        raise AssertionError("run() re-checked the arguments of a bound kernel")

    monkeypatch.setattr(CompiledFunction, "__call__", checked_call)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), _reference(mod, a), rtol=1e-5)
    a2 = a + 1.0
    m.set_input("x", a2)  # set_input copies into the bound view: the next run sees it
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), _reference(mod, a2), rtol=1e-5)
