"""relay.testing.inception_v3 (TVM's zoo name): the paper's layer plan type-checks."""

import irlab as tvm
from irlab.relay.testing import inception_v3


def test_inception_v3_shapes_and_weight_count():
    net = inception_v3.get_net(1, 10, (3, 299, 299), "float32")
    mod = tvm.relay.transform.InferType()(tvm.IRModule.from_expr(net))
    assert mod["main"].ret_type == tvm.relay.TensorType((1, 10), "float32")
    # data + 94 conv blocks (weight + 4 batch-norm tensors) + classifier weight and bias
    assert len(mod["main"].params) == 1 + 94 * 5 + 2
