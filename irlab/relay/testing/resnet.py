"""Pre-activation ResNet (He et al., "Identity Mappings in Deep Residual Networks"), built the way
``tvm.relay.testing.resnet`` builds it: BN on the input, BN-ReLU before every convolution, a
final BN-ReLU, global average pooling, a dense layer and softmax."""

from __future__ import annotations

from irlab import relay
from irlab.relay.testing import layers
from irlab.relay.testing.init import create_workload

# num_layers -> units per stage, for the four-stage (ImageNet) networks.
_IMAGENET_UNITS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3],
                   152: [3, 8, 36, 3], 200: [3, 24, 36, 3], 269: [3, 30, 48, 8]}
_BN_EPS = 2e-5


def residual_unit(data, num_filter, stride, dim_match, name, bottle_neck=True,
                  data_layout="NCHW", kernel_layout="OIHW"):
    """One pre-activation unit: ``conv(relu(bn(...)))`` twice (basic) or three times with a
    4x narrower middle (bottleneck), plus the identity or a strided 1x1 projection shortcut."""
    bn_axis = data_layout.index("C")

    def bn_relu(x, suffix):
        bn = layers.batch_norm_infer(data=x, epsilon=_BN_EPS, axis=bn_axis, name=name + suffix)
        return relay.nn.relu(data=bn)

    def conv(x, channels, kernel, strides, suffix):
        pad = (kernel // 2, kernel // 2)
        return layers.conv2d(data=x, channels=channels, kernel_size=(kernel, kernel),
                             strides=strides, padding=pad, name=name + suffix,
                             data_layout=data_layout, kernel_layout=kernel_layout)

    act1 = bn_relu(data, "_bn1")
    if bottle_neck:
        mid = int(num_filter * 0.25)
        # As TVM (and ResNet v1), the stride sits on the first 1x1 convolution.
        body = conv(act1, mid, 1, stride, "_conv1")
        body = conv(bn_relu(body, "_bn2"), mid, 3, (1, 1), "_conv2")
        body = conv(bn_relu(body, "_bn3"), num_filter, 1, (1, 1), "_conv3")
    else:
        body = conv(act1, num_filter, 3, stride, "_conv1")
        body = conv(bn_relu(body, "_bn2"), num_filter, 3, (1, 1), "_conv2")
    # The projection shortcut reads the pre-activated input, as in the pre-activation paper.
    shortcut = data if dim_match else conv(act1, num_filter, 1, stride, "_sc")
    return relay.add(body, shortcut)


def resnet(units, num_stages, filter_list, num_classes, data_shape, bottle_neck=True,
           layout="NCHW", dtype="float32"):
    """The whole network as a ``relay.Function`` of ``data`` and every weight."""
    if layout != "NCHW" and layout != "NHWC":
        raise ValueError(f"unsupported layout {layout!r}")
    if len(units) != num_stages:
        raise ValueError(f"{len(units)} unit counts for {num_stages} stages")
    kernel_layout = "OIHW" if layout == "NCHW" else "HWIO"
    bn_axis = layout.index("C")
    height = data_shape[layout.index("H")]

    data = relay.var("data", shape=data_shape, dtype=dtype)
    body = layers.batch_norm_infer(data=data, epsilon=_BN_EPS, axis=bn_axis, scale=False,
                                   name="bn_data")
    if height <= 32:
        # Small (CIFAR-sized) images: a 3x3 stem that keeps the resolution.
        body = layers.conv2d(data=body, channels=filter_list[0], kernel_size=(3, 3),
                             strides=(1, 1), padding=(1, 1), name="conv0",
                             data_layout=layout, kernel_layout=kernel_layout)
    else:
        body = layers.conv2d(data=body, channels=filter_list[0], kernel_size=(7, 7),
                             strides=(2, 2), padding=(3, 3), name="conv0",
                             data_layout=layout, kernel_layout=kernel_layout)
        body = layers.batch_norm_infer(data=body, epsilon=_BN_EPS, axis=bn_axis, name="bn0")
        body = relay.nn.relu(data=body)
        body = relay.nn.max_pool2d(data=body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1),
                             layout=layout)

    for i in range(num_stages):
        stride = (1, 1) if i == 0 else (2, 2)
        for j in range(units[i]):
            body = residual_unit(body, filter_list[i + 1], stride if j == 0 else (1, 1),
                                 j > 0, f"stage{i + 1}_unit{j + 1}", bottle_neck=bottle_neck,
                                 data_layout=layout, kernel_layout=kernel_layout)
    body = layers.batch_norm_infer(data=body, epsilon=_BN_EPS, axis=bn_axis, name="bn1")
    body = relay.nn.relu(data=body)
    body = relay.nn.global_avg_pool2d(data=body, layout=layout)
    body = relay.nn.batch_flatten(data=body)
    body = layers.dense_add_bias(data=body, units=num_classes, name="fc1")
    net = relay.nn.softmax(data=body)
    return relay.Function(relay.analysis.free_vars(net), net)


def get_net(batch_size, num_classes, num_layers=50, image_shape=(3, 224, 224), layout="NCHW",
            dtype="float32"):
    """Pick stages, widths and block type from ``num_layers`` and the image height.

    Images of height <= 28 get the three-stage CIFAR networks (``num_layers`` = 6n+2 basic or
    9n+2 >= 164 bottleneck); larger ones the four-stage ImageNet networks (18, 34: basic;
    50, 101, 152, ...: bottleneck).
    """
    image_shape = tuple(image_shape)
    height = image_shape[0] if layout == "NHWC" else image_shape[1]
    data_shape = (batch_size,) + image_shape
    if height <= 28:
        num_stages = 3
        if (num_layers - 2) % 9 == 0 and num_layers >= 164:
            per_unit, filter_list, bottle_neck = (num_layers - 2) // 9, [16, 64, 128, 256], True
        elif (num_layers - 2) % 6 == 0 and num_layers < 164:
            per_unit, filter_list, bottle_neck = (num_layers - 2) // 6, [16, 16, 32, 64], False
        else:
            raise ValueError(f"no CIFAR ResNet with num_layers={num_layers}")
        units = [per_unit] * num_stages
    else:
        if num_layers not in _IMAGENET_UNITS:
            raise ValueError(f"no ImageNet ResNet with num_layers={num_layers} "
                             f"(choose from {sorted(_IMAGENET_UNITS)})")
        num_stages = 4
        units = _IMAGENET_UNITS[num_layers]
        bottle_neck = num_layers >= 50
        filter_list = [64, 256, 512, 1024, 2048] if bottle_neck else [64, 64, 128, 256, 512]
    return resnet(units, num_stages, filter_list, num_classes, data_shape,
                  bottle_neck=bottle_neck, layout=layout, dtype=dtype)


def get_workload(batch_size=1, num_classes=1000, num_layers=18, image_shape=(3, 224, 224),
                 layout="NCHW", dtype="float32", seed=0):
    """``(mod, params)`` of a ResNet (ResNet-18 on 224x224 ImageNet images by default)."""
    net = get_net(batch_size, num_classes, num_layers, image_shape, layout, dtype)
    return create_workload(net, seed=seed)
