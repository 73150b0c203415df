"""Neural-network operators (``relay.nn``): convolution, matrix products, pooling,
normalization, activations, bias_add, batch_flatten, pad and upsampling.

Each module registers its ops at import time (attrs, type relation, fusion pattern, numpy
reference) and defines TVM's Python constructors (``relay.nn.conv2d(...)`` ...).
"""

from irlab.relay.op.nn.activation import (DropoutAttrs, LeakyReluAttrs, SoftmaxAttrs, dropout,
                                          dropout_raw, fast_softmax, leaky_relu, log_softmax,
                                          relu, softmax)
from irlab.relay.op.nn.conv import Conv2DAttrs, contrib_conv2d_nchwc, conv2d
from irlab.relay.op.nn.conv_transpose import Conv2DTransposeAttrs, conv2d_transpose
from irlab.relay.op.nn.local_norm import InstanceNormAttrs, LRNAttrs, instance_norm, lrn
from irlab.relay.op.nn.linear import (BatchMatmulAttrs, DenseAttrs, DensePackAttrs, MatmulAttrs,
                                     batch_matmul, contrib_dense_pack, dense, matmul)
from irlab.relay.op.nn.misc import BiasAddAttrs, PadAttrs, batch_flatten, bias_add, pad
from irlab.relay.op.nn.normalization import (BatchNormAttrs, LayerNormAttrs, batch_norm,
                                             layer_norm)
from irlab.relay.op.nn.upsampling import UpSamplingAttrs, upsampling
from irlab.relay.op.nn.pooling import (AdaptivePool2DAttrs, AvgPool2DAttrs, GlobalPool2DAttrs,
                                       MaxPool2DAttrs, adaptive_avg_pool2d, adaptive_max_pool2d,
                                       avg_pool2d, global_avg_pool2d, global_max_pool2d,
                                       max_pool2d)
from irlab.relay.op.nn.upsampling import UpSamplingAttrs, upsampling
from irlab.relay.op.nn.winograd import (Conv2DWinogradAttrs, ConvWinogradWeightTransformAttrs,
                                        contrib_conv2d_winograd_weight_transform,
                                        contrib_conv2d_winograd_without_weight_transform)

__all__ = [
    # conv
    "Conv2DAttrs", "conv2d", "contrib_conv2d_nchwc", "Conv2DTransposeAttrs", "conv2d_transpose",
    "LRNAttrs", "InstanceNormAttrs", "lrn", "instance_norm",
    # linear
    "DenseAttrs", "DensePackAttrs", "MatmulAttrs", "BatchMatmulAttrs", "dense",
    "contrib_dense_pack", "matmul", "batch_matmul",
    # pooling
    "MaxPool2DAttrs", "AvgPool2DAttrs", "GlobalPool2DAttrs", "AdaptivePool2DAttrs",
    "max_pool2d", "avg_pool2d", "global_max_pool2d", "global_avg_pool2d",
    "adaptive_max_pool2d", "adaptive_avg_pool2d",
    # normalization
    "BatchNormAttrs", "LayerNormAttrs", "batch_norm", "layer_norm",
    # activation
    "LeakyReluAttrs", "SoftmaxAttrs", "DropoutAttrs", "relu", "leaky_relu", "softmax",
    "fast_softmax",
    "log_softmax", "dropout", "dropout_raw",
    # misc
    "BiasAddAttrs", "PadAttrs", "bias_add", "batch_flatten", "pad",
    # upsampling
    "UpSamplingAttrs", "upsampling",
    # winograd
    "Conv2DWinogradAttrs", "ConvWinogradWeightTransformAttrs",
    "contrib_conv2d_winograd_weight_transform",
    "contrib_conv2d_winograd_without_weight_transform",
]
