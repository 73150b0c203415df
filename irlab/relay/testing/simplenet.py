"""The conv + batch_norm + relu "simplenet" of seed 001 (a GraphExecutor walkthrough)."""

from __future__ import annotations

from irlab import relay
from irlab.relay.testing import layers
from irlab.relay.testing.init import create_workload


def simplenet(data, name, channels, kernel_size=(3, 3), strides=(1, 1), padding=(1, 1),
              epsilon=1e-5):
    """``relu(batch_norm(conv2d(data)))`` with weights ``<name>_conv_weight``, ``<name>_bn_*``."""
    conv = layers.conv2d(data=data, channels=channels, kernel_size=kernel_size, strides=strides,
                         padding=padding, data_layout="NCHW", name=name + "_conv")
    bn = layers.batch_norm_infer(data=conv, epsilon=epsilon, name=name + "_bn")
    return relay.nn.relu(data=bn)


def get_net(batch_size=1, channels=32, image_shape=(3, 224, 224), strides=(2, 2),
            dtype="float32"):
    """The seed's function: ``simplenet(data, "graph", 32, strides=(2, 2))`` over free vars."""
    data = relay.var("data", shape=(batch_size,) + tuple(image_shape), dtype=dtype)
    act = simplenet(data, "graph", channels, strides=strides)
    return relay.Function(relay.analysis.free_vars(act), act)


def get_workload(batch_size=1, channels=32, image_shape=(3, 224, 224), strides=(2, 2),
                 dtype="float32", seed=0):
    """``(mod, params)`` of the simplenet; params ``graph_conv_weight``, ``graph_bn_gamma``,
    ``graph_bn_beta``, ``graph_bn_moving_mean``, ``graph_bn_moving_var``."""
    net = get_net(batch_size, channels, image_shape, strides, dtype)
    return create_workload(net, seed=seed)
