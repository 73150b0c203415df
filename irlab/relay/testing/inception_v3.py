"""Inception-v3 (Szegedy et al., "Rethinking the Inception Architecture", 2016), NCHW.

The layer plan is the paper's (as torchvision lays it out): a convolutional stem, three
35x35 "A" blocks, a grid reduction, four 17x17 "C" blocks with factorized 1x7 / 7x1
convolutions, a second reduction, two 8x8 "E" blocks with split 1x3 / 3x1 branches, global
average pooling and the classifier. Every convolution is conv2d (no bias) + batch_norm + ReLU.
Inference graph only (no auxiliary head, no dropout). 299x299 images give an 8x8 final grid.
"""

from __future__ import annotations

from irlab import relay
from irlab.relay.testing import layers
from irlab.relay.testing.init import create_workload

_BN_EPS = 1e-3


def conv(data, name, channels, kernel=(1, 1), strides=(1, 1), padding=(0, 0)):
    """conv2d + batch_norm + ReLU, weights ``<name>_conv_weight`` and ``<name>_bn_*``."""
    out = layers.conv2d(data=data, channels=channels, kernel_size=kernel, strides=strides,
                        padding=padding, name=name + "_conv")
    out = layers.batch_norm_infer(data=out, epsilon=_BN_EPS, name=name + "_bn")
    return relay.nn.relu(out)


def _pool(data, kind, strides=(1, 1), padding=(0, 0)):
    if kind == "max":
        return relay.nn.max_pool2d(data, pool_size=(3, 3), strides=strides, padding=padding)
    return relay.nn.avg_pool2d(data, pool_size=(3, 3), strides=strides, padding=padding,
                               count_include_pad=False)


def block_a(data, name, pool_features):
    """35x35: 1x1 | 1x1 -> 5x5 | 1x1 -> 3x3 -> 3x3 | avg-pool -> 1x1."""
    b1 = conv(data, name + "_b1", 64)
    b5 = conv(conv(data, name + "_b5a", 48), name + "_b5b", 64, (5, 5), padding=(2, 2))
    b3 = conv(data, name + "_b3a", 64)
    b3 = conv(b3, name + "_b3b", 96, (3, 3), padding=(1, 1))
    b3 = conv(b3, name + "_b3c", 96, (3, 3), padding=(1, 1))
    bp = conv(_pool(data, "avg", padding=(1, 1)), name + "_bp", pool_features)
    return relay.concatenate([b1, b5, b3, bp], axis=1)


def block_b(data, name):
    """35x35 -> 17x17 reduction: strided 3x3 | 1x1 -> 3x3 -> strided 3x3 | max-pool."""
    b3 = conv(data, name + "_b3", 384, (3, 3), strides=(2, 2))
    bd = conv(data, name + "_bda", 64)
    bd = conv(bd, name + "_bdb", 96, (3, 3), padding=(1, 1))
    bd = conv(bd, name + "_bdc", 96, (3, 3), strides=(2, 2))
    bp = _pool(data, "max", strides=(2, 2))
    return relay.concatenate([b3, bd, bp], axis=1)


def block_c(data, name, c7):
    """17x17 with factorized 7x7: 1x1 | 1x1 -> 1x7 -> 7x1 | 1x1 -> (7x1 -> 1x7) x2 |
    avg-pool -> 1x1."""
    row, col = ((1, 7), (0, 3)), ((7, 1), (3, 0))
    b1 = conv(data, name + "_b1", 192)
    b7 = conv(data, name + "_b7a", c7)
    b7 = conv(b7, name + "_b7b", c7, row[0], padding=row[1])
    b7 = conv(b7, name + "_b7c", 192, col[0], padding=col[1])
    bd = conv(data, name + "_bda", c7)
    for i, (shape, channels) in enumerate([(col, c7), (row, c7), (col, c7), (row, 192)]):
        bd = conv(bd, f"{name}_bd{i + 1}", channels, shape[0], padding=shape[1])
    bp = conv(_pool(data, "avg", padding=(1, 1)), name + "_bp", 192)
    return relay.concatenate([b1, b7, bd, bp], axis=1)


def block_d(data, name):
    """17x17 -> 8x8 reduction: 1x1 -> strided 3x3 | 1x1 -> 1x7 -> 7x1 -> strided 3x3 |
    max-pool."""
    b3 = conv(conv(data, name + "_b3a", 192), name + "_b3b", 320, (3, 3), strides=(2, 2))
    b7 = conv(data, name + "_b7a", 192)
    b7 = conv(b7, name + "_b7b", 192, (1, 7), padding=(0, 3))
    b7 = conv(b7, name + "_b7c", 192, (7, 1), padding=(3, 0))
    b7 = conv(b7, name + "_b7d", 192, (3, 3), strides=(2, 2))
    bp = _pool(data, "max", strides=(2, 2))
    return relay.concatenate([b3, b7, bp], axis=1)


def _split_1x3_3x1(data, name):
    left = conv(data, name + "_1x3", 384, (1, 3), padding=(0, 1))
    right = conv(data, name + "_3x1", 384, (3, 1), padding=(1, 0))
    return relay.concatenate([left, right], axis=1)


def block_e(data, name, pool):
    """8x8 with expanded filter banks: 1x1 | 1x1 -> (1x3, 3x1) | 1x1 -> 3x3 -> (1x3, 3x1) |
    pool -> 1x1."""
    b1 = conv(data, name + "_b1", 320)
    b3 = _split_1x3_3x1(conv(data, name + "_b3", 384), name + "_b3")
    bd = conv(conv(data, name + "_bda", 448), name + "_bdb", 384, (3, 3), padding=(1, 1))
    bd = _split_1x3_3x1(bd, name + "_bd")
    bp = conv(_pool(data, pool, padding=(1, 1)), name + "_bp", 192)
    return relay.concatenate([b1, b3, bd, bp], axis=1)


def get_net(batch_size, num_classes, image_shape, dtype):
    """The Inception-v3 Relay function on ``(batch_size,) + image_shape`` images."""
    data = relay.var("data", shape=(batch_size,) + tuple(image_shape), dtype=dtype)
    body = conv(data, "stem1", 32, (3, 3), strides=(2, 2))
    body = conv(body, "stem2", 32, (3, 3))
    body = conv(body, "stem3", 64, (3, 3), padding=(1, 1))
    body = _pool(body, "max", strides=(2, 2))
    body = conv(body, "stem4", 80)
    body = conv(body, "stem5", 192, (3, 3))
    body = _pool(body, "max", strides=(2, 2))
    for i, features in enumerate((32, 64, 64)):
        body = block_a(body, f"mixed{i}", features)
    body = block_b(body, "mixed3")
    for i, c7 in enumerate((128, 160, 160, 192)):
        body = block_c(body, f"mixed{4 + i}", c7)
    body = block_d(body, "mixed8")
    body = block_e(body, "mixed9", "avg")
    body = block_e(body, "mixed10", "max")
    body = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(body))
    body = layers.dense_add_bias(body, units=num_classes, name="fc1")
    net = relay.nn.softmax(body)
    return relay.Function(relay.analysis.free_vars(net), net)


def get_workload(batch_size=1, num_classes=1000, image_shape=(3, 299, 299), dtype="float32"):
    """``(mod, params)`` of Inception-v3."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype))
