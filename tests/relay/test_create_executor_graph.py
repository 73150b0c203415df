"""create_executor("graph") compiles @main and runs it on the graph executor (no prior import
of irlab.contrib.graph_executor needed: the registry loads the provider on first lookup)."""

import subprocess
import sys

import numpy as np
import pytest

import irlab as tvm
from irlab import relay


def test_graph_executor_matches_the_interpreter():
    x = relay.var("x", shape=(4, 8), dtype="float32")
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.softmax(relay.exp(x))))
    data = np.random.default_rng(0).normal(size=(4, 8)).astype("float32")
    want = relay.create_executor("debug", mod=mod).evaluate()(data).numpy()
    for kind in ("graph", "vm"):
        got = relay.create_executor(kind, mod=mod, device=tvm.cpu(),
                                    target="llvm").evaluate()(data).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(tvm.TVMError, match="pass mod="):
        relay.create_executor("graph")


def test_factory_finds_the_graph_executor_in_a_fresh_process():
    code = ("import numpy as np, irlab as tvm\nfrom irlab import relay\n"
            "x = relay.var('x', shape=(3,))\n"
            "lib = relay.build(tvm.IRModule.from_expr(relay.Function([x], x + x)), 'llvm')\n"
            "m = lib['default'](tvm.cpu()); m.set_input('x', np.ones(3, 'float32')); m.run()\n"
            "print(m.get_output(0).numpy().tolist())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[2.0, 2.0, 2.0]"
