"""MobileNetV2 (Sandler et al., 2018): inverted residual blocks of 1x1 expansion, 3x3 depthwise
convolution (``groups`` = channels) and linear 1x1 projection, with ReLU6 (``clip(x, 0, 6)``).

The layer plan is the paper's (and torchvision's): 3.5M parameters at width 1.0 for 1000
classes. Inference graph only: no dropout before the classifier.
"""

from __future__ import annotations

from irlab import relay
from irlab.relay.testing import layers
from irlab.relay.testing.init import create_workload

# (expansion t, output channels c, repeats n, first stride s) per stage, from the paper.
INVERTED_RESIDUAL_SETTING = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                             (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
_BN_EPS = 1e-5


def make_divisible(value, divisor=8):
    """Round a scaled channel count to a multiple of ``divisor``, never more than 10% down."""
    new = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * value else new


def relu6(data):
    """ReLU6 as Relay spells it: ``clip(data, 0, 6)``."""
    return relay.clip(data, 0.0, 6.0)


def conv_bn(data, name, channels, kernel_size=1, strides=(1, 1), groups=1, activation=True,
            layout="NCHW"):
    """conv2d (no bias) + batch_norm (+ ReLU6); weights ``<name>_conv_weight``, ``<name>_bn_*``."""
    pad = (kernel_size // 2, kernel_size // 2)
    conv = layers.conv2d(data=data, channels=channels, kernel_size=(kernel_size, kernel_size),
                         strides=strides, padding=pad, groups=groups, data_layout=layout,
                         kernel_layout=layers.conv_kernel_layout(layout, groups > 1),
                         name=name + "_conv")
    bn = layers.batch_norm_infer(data=conv, epsilon=_BN_EPS, axis=layout.index("C"),
                                 name=name + "_bn")
    return relu6(bn) if activation else bn


def inverted_residual(data, name, in_channels, out_channels, stride, expand_ratio,
                      layout="NCHW"):
    """expand (1x1, ReLU6; skipped when t = 1) -> depthwise 3x3 (ReLU6) -> project (1x1,
    linear); the input is added back when the block keeps both resolution and width."""
    hidden = int(round(in_channels * expand_ratio))
    body = data
    if expand_ratio != 1:
        body = conv_bn(body, name + "_expand", hidden, 1, layout=layout)
    # "depthwise" in the weight's name gives it the depthwise fan in Xavier init.
    body = conv_bn(body, name + "_depthwise", hidden, 3, (stride, stride), groups=hidden,
                   layout=layout)
    body = conv_bn(body, name + "_project", out_channels, 1, activation=False, layout=layout)
    if stride == 1 and in_channels == out_channels:
        body = relay.add(data, body)
    return body


def mobilenet_v2(num_classes=1000, data_shape=(1, 3, 224, 224), dtype="float32",
                 width_mult=1.0, layout="NCHW"):
    """The whole network as a ``relay.Function`` of ``data`` and every weight."""
    data = relay.var("data", shape=data_shape, dtype=dtype)
    channels = make_divisible(32 * width_mult)
    last_channels = make_divisible(1280 * max(1.0, width_mult))
    body = conv_bn(data, "stem", channels, 3, (2, 2), layout=layout)
    block = 0
    for t, c, n, s in INVERTED_RESIDUAL_SETTING:
        out_channels = make_divisible(c * width_mult)
        for i in range(n):
            block += 1
            body = inverted_residual(body, f"block{block}", channels, out_channels,
                                     s if i == 0 else 1, t, layout=layout)
            channels = out_channels
    body = conv_bn(body, "head", last_channels, 1, layout=layout)
    body = relay.nn.global_avg_pool2d(data=body, layout=layout)
    body = relay.nn.batch_flatten(data=body)
    body = layers.dense_add_bias(data=body, units=num_classes, name="fc")
    net = relay.nn.softmax(data=body)
    return relay.Function(relay.analysis.free_vars(net), net)


def get_workload(batch_size=1, num_classes=1000, image_shape=(3, 224, 224), dtype="float32",
                 layout="NCHW", width_mult=1.0, seed=0):
    """``(mod, params)`` of MobileNetV2 on ``(batch_size,) + image_shape`` images."""
    data_shape = (batch_size,) + tuple(image_shape)
    net = mobilenet_v2(num_classes, data_shape, dtype, width_mult, layout)
    return create_workload(net, seed=seed)
