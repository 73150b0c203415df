"""A three-layer perceptron (as ``tvm.relay.testing.mlp``)."""

from __future__ import annotations

from irlab import relay
from irlab.relay.testing.init import create_workload


def get_net(batch_size=1, num_classes=10, image_shape=(1, 28, 28), dtype="float32"):
    """``softmax(fc3(relu(fc2(relu(fc1(batch_flatten(data)))))))`` with 128 and 64 hidden
    units; weights ``fc{1,2,3}_weight`` / ``fc{1,2,3}_bias``."""
    data = relay.var("data", shape=(batch_size,) + tuple(image_shape), dtype=dtype)
    body = relay.nn.batch_flatten(data)
    for i, units in enumerate((128, 64, num_classes), start=1):
        body = relay.nn.dense(body, relay.var(f"fc{i}_weight"), units=units)
        body = relay.nn.bias_add(body, relay.var(f"fc{i}_bias"))
        if i < 3:
            body = relay.nn.relu(body)
    out = relay.nn.softmax(data=body)
    return relay.Function(relay.analysis.free_vars(out), out)


def get_workload(batch_size=1, num_classes=10, image_shape=(1, 28, 28), dtype="float32",
                 seed=0):
    """``(mod, params)`` of the MLP on ``(batch_size,) + image_shape`` data."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype), seed=seed)
