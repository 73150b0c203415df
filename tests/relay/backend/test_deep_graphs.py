"""Builds that scale with graph depth (issue 20, finding 6): a chain of hundreds of fused
add+relu layers builds at opt levels 0 and 3 and computes what numpy does; FuseOps splits the
chain by ``relay.FuseOps.max_depth``; the TIR simplifier, the TVMScript printer, the graph
codegen and the LLVM and C code generators neither overflow the stack nor redo work on deep
expressions. No timing assertions: work is counted."""

import json

import numpy as np
import pytest

import irlab as tvm
from irlab import relay, te
from irlab.arith import Analyzer
from irlab.contrib import graph_executor
from irlab.relay.expr_functor import post_order
from irlab.relay.function import Function
from irlab.relay.testing import chain
from irlab.tir import expr as E
from irlab.tir.buffer import Range
from irlab.tir.transform import Simplify


def _run_chain(num_layers, opt_level, config=None):
    mod, params = chain.get_workload(num_layers, shape=(1, 4, 3, 5))
    with tvm.transform.PassContext(opt_level=opt_level, config=config):
        lib = relay.build(mod, target="llvm", params=params)
    x = np.random.default_rng(1).standard_normal((1, 4, 3, 5)).astype("float32")
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.set_input("x", x)
    m.run()
    return m.get_output(0).numpy(), chain.reference(x, params, num_layers), lib


@pytest.mark.parametrize("opt_level", [0, 3])
def test_300_layer_chain_builds_and_matches_numpy(opt_level):
    # before: RecursionError in tir.Simplify (opt 3) and in graph_codegen (opt 0)
    got, want, _ = _run_chain(300, opt_level)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _fused_sizes(num_layers, config=None):
    mod, params = chain.get_workload(num_layers)
    mod = relay.transform.InferType()(mod)
    with tvm.transform.PassContext(opt_level=3, config=config):
        fused = relay.transform.FuseOps()(mod)["main"]
    funcs = [n for n in post_order(fused.body) if isinstance(n, Function)]
    return [sum(1 for n in post_order(f.body) if isinstance(n, relay.Call)) for f in funcs]


def test_fuse_ops_splits_a_deep_chain_by_max_depth():
    sizes = _fused_sizes(300)  # 600 ops, TVM's default max_depth 256
    assert sum(sizes) == 600 and max(sizes) <= 256 and len(sizes) == 3
    sizes = _fused_sizes(30, {"relay.FuseOps.max_depth": 16})
    assert sum(sizes) == 60 and max(sizes) <= 16 and len(sizes) == 4


def test_chain_split_by_a_small_max_depth_matches_numpy():
    got, want, lib = _run_chain(40, 3, {"relay.FuseOps.max_depth": 8})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    ops = [n for n in json.loads(lib.get_graph_json())["nodes"] if n["op"] == "tvm_op"]
    assert len(ops) == 10 and len(lib.lowered) == 1  # ten calls of one 8-op kernel


def _deep_float_func(depth):
    """``B[i] = max(...max(max(A[i] + 1, 0) + 2, 0)..., 0)`` nested ``depth`` times."""
    a = te.placeholder((8,), "float32", name="A")

    def body(i):
        value = a[i]
        for k in range(depth):
            value = tvm.tir.max(value + float(k % 3 + 1), 0.0)
        return value

    b = te.compute((8,), body, name="B")
    return te.create_prim_func([a, b])


def test_simplify_of_a_deep_expression_neither_recurses_nor_repeats(monkeypatch):
    calls = []
    original = Analyzer.simplify

    def counting(self, expr, trace=False):
        calls.append(expr)
        return original(self, expr, trace)

    monkeypatch.setattr(Analyzer, "simplify", counting)
    func = _deep_float_func(1500)  # before: RecursionError
    out = Simplify()(tvm.IRModule({"main": func}))["main"]
    assert out.body is not None
    # each statement-level expression goes to the Analyzer once (before: once per subtree,
    # the square of the depth in work)
    assert len(calls) < 20


def test_analyzer_on_deep_index_and_float_chains():
    # before: RecursionError in the rewriter and the canonical simplifier
    i = E.Var("i", "int32")
    expr = i
    for k in range(3000):
        expr = E.Max(expr, E.IntImm("int32", -1)) if k % 2 else E.Add(expr, E.IntImm("int32", 1))
    analyzer = Analyzer()
    analyzer.bind(i, Range.from_min_extent(0, 4))
    out = analyzer.simplify(expr)  # max(x + 1, -1) is x + 1 for x >= 0
    assert isinstance(out, E.Add) and out.a is i and out.b.value == 1500
    value = E.Cast("float32", i)
    for _ in range(3000):
        value = E.Max(E.Add(value, E.FloatImm("float32", 1.0)), E.FloatImm("float32", 0.0))
    assert Analyzer().simplify(value).dtype == "float32"


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_deep_expression_prints_and_compiles(target):
    # before: RecursionError in the TVMScript printer (the build's program key), then in
    # the code generators
    func = _deep_float_func(1500).with_attr("global_symbol", "deep")
    assert func.script().count("T.max(") == 1500
    lib = tvm.build(func, target=target)
    x = np.random.default_rng(2).standard_normal(8).astype("float32")
    y = np.zeros(8, "float32")
    lib["deep"](x, y)
    want = x
    for k in range(1500):
        want = np.maximum(want + np.float32(k % 3 + 1), np.float32(0))
    np.testing.assert_allclose(y, want, rtol=1e-5)


def test_one_deep_kernel_when_max_depth_allows_it():
    # 400 ops in one kernel: before, RecursionError in LowerTE's TE builder and in
    # tir.VectorizeLoop (which also re-vectorized shared sub-expressions once per use)
    got, want, lib = _run_chain(200, 3, {"relay.FuseOps.max_depth": 1000})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert len(lib.lowered) == 1
