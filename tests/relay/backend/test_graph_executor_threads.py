"""The graph executor's state: per-thread inputs/outputs (two threads sharing one module get
their own results), and clear errors for inputs not set, outputs read before ``run()``,
``set_input`` without a key or value and read-only output arrays (issue 20, findings 5, 7)."""

import sys
import threading

import numpy as np
import pytest

import irlab as tvm
from irlab import relay
from irlab.contrib import graph_executor
from irlab.errors import IrlabError

W = np.arange(12, dtype="float32").reshape(3, 4) / 10


def build_module(with_param=True):
    """``dense(x, w) + 1`` with ``w`` a param (bound at build time) or a second input."""
    x = relay.var("x", shape=(2, 4))
    w = relay.var("w", shape=(3, 4))
    mod = tvm.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w) + relay.const(1.0)))
    lib = relay.build(mod, "llvm", params={"w": W} if with_param else None)
    return graph_executor.GraphModule(lib["default"](tvm.cpu()))


def expected(x):
    return x @ W.T + 1


def test_threads_share_one_module():
    """Each thread sets its own input, runs and reads: never the other thread's result."""
    m = build_module()
    wrong, errors = [], []
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def work(k):
        try:
            for i in range(300):
                x = np.full((2, 4), k * 100 + i, "float32")
                m.set_input("x", x)
                m.run()
                if not np.allclose(m.get_output(0).numpy(), expected(x)):
                    wrong.append((k, i))
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(before)
    assert errors == [] and wrong == []


def test_inputs_set_in_another_thread_are_not_used():
    m = build_module()
    m.set_input("x", np.ones((2, 4), "float32"))
    caught = []

    def other():
        try:
            m.run()
        except IrlabError as err:
            caught.append(str(err))

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert len(caught) == 1 and "not set: x" in caught[0] and "thread" in caught[0]
    m.run()  # this thread's input is there
    np.testing.assert_allclose(m.get_output(0).numpy(), expected(np.ones((2, 4))), rtol=1e-6)


def test_run_before_set_input_names_the_missing_inputs():
    m = build_module(with_param=False)
    with pytest.raises(IrlabError, match=r"not set: w, x"):
        m.run()
    m.set_input("x", np.ones((2, 4), "float32"))
    with pytest.raises(IrlabError, match=r"not set: w\b"):
        m.run()


def test_params_bound_at_build_time_count_as_set():
    m = build_module(with_param=True)
    x = np.full((2, 4), 2.0, "float32")
    m.set_input("x", x)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), expected(x), rtol=1e-6)


def test_get_output_before_run_raises():
    m = build_module()
    m.set_input("x", np.ones((2, 4), "float32"))
    with pytest.raises(IrlabError, match="run"):
        m.get_output(0)


def test_set_input_without_key_or_value_raises():
    m = build_module()
    with pytest.raises(IrlabError, match="without a key"):
        m.set_input(None, np.ones((2, 4), "float32"))
    with pytest.raises(IrlabError, match="no value for input 'x'"):
        m.set_input("x", None)
    with pytest.raises(IrlabError, match="no value for input 'x'"):
        m.set_input(x=None)


def test_get_output_into_arrays():
    m = build_module()
    x = np.ones((2, 4), "float32")
    m.run(x=x)
    out = np.zeros((2, 3), "float32")
    assert m.get_output(0, out) is out
    np.testing.assert_allclose(out, expected(x), rtol=1e-6)
    into = tvm.nd.empty((2, 3), "float32")
    m.get_output(0, into)
    np.testing.assert_allclose(into.numpy(), expected(x), rtol=1e-6)
    frozen = np.zeros((2, 3), "float32")
    frozen.flags.writeable = False
    with pytest.raises(IrlabError, match="read-only"):
        m.get_output(0, frozen)
    with pytest.raises(IrlabError, match="read-only"):
        m.get_output(0, tvm.nd.NDArray(frozen) if hasattr(tvm.nd, "NDArray") else
                     tvm.runtime.ndarray.NDArray(frozen))
    with pytest.raises(IrlabError, match=r"float32\[3, 3\]"):
        m.get_output(0, np.zeros((3, 3), "float32"))
