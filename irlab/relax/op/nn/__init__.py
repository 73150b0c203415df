"""Neural-network operators (``tvm.relax.op.nn``)."""

from irlab.relax.op.nn.activation import (relu, gelu, gelu_tanh, silu, leakyrelu, softmax,
                                          log_softmax, dropout)
from irlab.relax.op.nn.convolution import conv2d, conv2d_transpose
from irlab.relax.op.nn.pooling import max_pool2d, avg_pool2d, adaptive_avg_pool2d
from irlab.relax.op.nn.normalization import batch_norm, layer_norm
from irlab.relax.op.nn.padding import pad
