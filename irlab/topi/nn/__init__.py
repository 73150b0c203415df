"""Neural-network operators in TE (TVM's ``topi.nn``)."""

from irlab.topi.nn import dense, softmax, norm, activation, conv2d, pooling  # noqa: F401
