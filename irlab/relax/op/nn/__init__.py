"""Neural-network operators (``tvm.relax.op.nn``)."""

from irlab.relax.op.nn.activation import relu, gelu, silu, softmax, log_softmax, dropout
