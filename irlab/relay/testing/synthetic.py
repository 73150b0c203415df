"""A synthetic graph of any size: ``width`` lanes of elementwise ops that mix with their
neighbours at every step, with no weights and no name scopes, so nothing groups it: the
explorer's stress test for laying out and drawing thousands of flat nodes (issue 21).

    step k, lane i:  lane[i] = op_k(lane[i], lane[(i + 1) % width])   (binary steps)
                     lane[i] = relu(lane[i])                            (every third step)
"""

from __future__ import annotations

from irlab import relay
from irlab.relay.testing.init import create_workload

_BINARY = (relay.add, relay.multiply, relay.subtract, relay.maximum)


def get_net(num_nodes=5000, width=4, shape=(1, 16), dtype="float32"):
    """A ``relay.Function`` of one input whose graph has about ``num_nodes`` nodes (its calls
    and the input; within ``width`` of it) ending in the sum of the lanes."""
    if width < 1 or num_nodes < width:
        raise ValueError(f"need 1 <= width <= num_nodes, got width {width}, "
                         f"num_nodes {num_nodes}")
    data = relay.var("data", shape=shape, dtype=dtype)
    lanes = [relay.nn.relu(data) if i % 2 else relay.negative(data) for i in range(width)]
    made = width
    step = 0
    while made + width < num_nodes:
        if step % 3 == 2:
            lanes = [relay.nn.relu(lane) for lane in lanes]
        else:
            op = _BINARY[step % len(_BINARY)]
            lanes = [op(lanes[i], lanes[(i + 1) % width]) for i in range(width)]
        made += width
        step += 1
    out = lanes[0]
    for lane in lanes[1:]:
        out = relay.add(out, lane)
    return relay.Function([data], out)


def get_workload(num_nodes=5000, width=4, shape=(1, 16), dtype="float32"):
    """``(mod, params)`` of :func:`get_net` (``params`` is empty: the graph has no weights)."""
    return create_workload(get_net(num_nodes, width, shape, dtype))
