"""Neural-network operators in TE (TVM's ``topi.nn``).

As in TVM, ``topi.nn.dense`` and ``topi.nn.relu`` are the functions; the module holding the
matrix products is ``irlab.topi.nn.dense`` in ``sys.modules`` (import names from it).
"""

from irlab.topi.nn import softmax, norm, activation, conv2d, pooling  # noqa: F401
from irlab.topi.nn.activation import relu, leaky_relu, dropout  # noqa: F401
from irlab.topi.nn.dense import (dense, dense_pack, matmul, batch_matmul,  # noqa: F401,E402
                                 bias_add)
from irlab.topi.nn.softmax import log_softmax  # noqa: F401
