"""relay.build remembers what it built: the same program, params, target and PassContext give
the same factory; any difference (a weight's value, the opt level, a param) rebuilds."""

import numpy as np

import irlab as tvm
from irlab import relay


def _mod(value):
    x = relay.var("x", shape=(4,), dtype="float32")
    w = relay.var("w", shape=(4,), dtype="float32")
    body = relay.add(relay.multiply(x, w), relay.const(np.full(4, value, "float32")))
    return tvm.IRModule.from_expr(relay.Function([x, w], body))


def test_rebuild_hits_and_differences_miss():
    w = np.arange(4, dtype="float32")
    first = relay.build(_mod(1.0), "llvm", params={"w": w})
    assert relay.build(_mod(1.0), "llvm", params={"w": w}) is first
    assert relay.build(_mod(2.0), "llvm", params={"w": w}) is not first  # constant's value
    assert relay.build(_mod(1.0), "llvm", params={"w": w + 1}) is not first  # param's value
    with tvm.transform.PassContext(opt_level=0):
        assert relay.build(_mod(1.0), "llvm", params={"w": w}) is not first
    assert relay.build(_mod(1.0), "llvm -num-cores=1", params={"w": w}) is not first
    m = tvm.contrib.graph_executor.GraphModule(
        relay.build(_mod(2.0), "llvm", params={"w": w + 1})["default"](tvm.cpu()))
    m.run(x=np.ones(4, "float32"))
    np.testing.assert_allclose(m.get_output(0).numpy(), (w + 1) + 2.0)


def test_the_caches_keep_only_their_newest_entries():
    from irlab.runtime.lru import LRUCache

    cache = LRUCache(2)
    cache["a"], cache["b"] = 1, 2
    assert cache.get("a") == 1  # a is now the newest
    cache["c"] = 3
    assert list(cache) == ["a", "c"] and cache.get("b") is None


def test_params_of_a_new_program_are_hashed_beside_the_build(monkeypatch):
    import threading

    from irlab.relay import build_module

    monkeypatch.setattr(build_module, "_built", build_module.LRUCache(4))
    threads = []
    real = build_module._params_digest
    monkeypatch.setattr(build_module, "_params_digest", lambda params: threads.append(
        threading.current_thread().name) or real(params))
    w = np.arange(4, dtype="float32")
    first = relay.build(_mod(3.0), "llvm", params={"w": w})
    assert threads == ["irlab-params-digest"]  # a new program: in the background
    assert relay.build(_mod(3.0), "llvm", params={"w": w}) is first
    assert relay.build(_mod(3.0), "llvm", params={"w": w + 1}) is not first
    assert threads[1:] == [threading.current_thread().name] * 2  # known program: decides now
