"""A chain of ``num_layers`` fused add+relu layers, ``x = relu(x + c_i)``: the deep graph that
measures how builds scale with graph size (``benchmarks/bench_chain.py``).

Each ``c_i`` is a per-channel weight of shape ``(channels, 1, 1)`` (a parameter named
``c<i>``, bound as a constant by ``relay.build(..., params=...)``). FuseOps puts up to
``relay.FuseOps.max_depth`` of these ops in one kernel, so each kernel computes one deep
expression.
"""

from __future__ import annotations

import numpy as np


def get_workload(num_layers, shape=(1, 16, 8, 8), dtype="float32", seed=0):
    """``(mod, params)``: ``mod["main"]`` takes ``x`` then ``c0 .. c<num_layers - 1>``."""
    from irlab import nd, relay
    from irlab.ir.module import IRModule

    rng = np.random.default_rng(seed)
    x = relay.var("x", shape=shape, dtype=dtype)
    weights, params = [], {}
    y = x
    for i in range(num_layers):
        c = relay.var(f"c{i}", shape=(shape[1], 1, 1), dtype=dtype)
        weights.append(c)
        params[c.name_hint] = nd.array(rng.standard_normal((shape[1], 1, 1)).astype(dtype))
        y = relay.nn.relu(relay.add(y, c))
    return IRModule.from_expr(relay.Function([x, *weights], y)), params


def reference(x, params, num_layers):
    """The chain computed by numpy."""
    y = x
    for i in range(num_layers):
        y = np.maximum(y + params[f"c{i}"].numpy(), 0)
    return y
