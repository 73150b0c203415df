"""relay.ScopeBuilder (TVM's statement-style builder of let / if) and relay.backend.Executor."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relay
from irlab.relay.backend import Executor, Runtime


def test_scope_builder_builds_lets_and_if_that_evaluate():
    x = relay.var("x", shape=(), dtype="float32")
    sb = relay.ScopeBuilder()
    y = sb.let("y", relay.add(x, relay.const(1.0)))
    with sb.if_scope(relay.greater(y, relay.const(0.0))):
        sb.ret(y)
    with sb.else_scope():
        sb.ret(relay.negative(y))
    body = sb.get()
    assert isinstance(body, relay.Let) and isinstance(body.body, relay.If)
    func = relay.Function([x], body)
    run = relay.create_executor(mod=tvm.IRModule.from_expr(func)).evaluate()
    assert float(run(np.float32(2.0)).numpy()) == 3.0
    assert float(run(np.float32(-5.0)).numpy()) == 4.0


def test_scope_builder_rejects_missing_ret_and_lone_else():
    sb = relay.ScopeBuilder()
    with pytest.raises(tvm.TVMError, match="ret was not called"):
        sb.get()
    with pytest.raises(tvm.TVMError, match="must follow an if_scope"):
        with sb.else_scope():
            pass


def test_executor_and_runtime_configs():
    ex = Executor("aot", {"link-params": True})
    assert ex["link-params"] is True and "link-params" in ex and str(ex) == "aot"
    assert ex == Executor("aot", {"link-params": True}) and ex != Executor("graph")
    assert "graph" in Executor.list_registered() and str(Runtime("cpp")) == "cpp"
    with pytest.raises(tvm.TVMError, match="no option 'bogus'"):
        Executor("graph", {"bogus": 1})
    mod = tvm.IRModule.from_expr(relay.const(1.0)).with_attr("executor", ex)
    assert mod.get_attr("executor") == ex
