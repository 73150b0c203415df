"""Every operator the foundation promises is registered in one place with all its facts."""

import pytest

from irlab.ir import Op, OpPattern

P = OpPattern
# reference §1.3 (ResNet, MobileNetV2, BERT, MLP) plus where/broadcast_to/zeros/ones/full,
# with TVM's TOpPattern for each.
EXPECTED = {
    "nn.conv2d": P.OUT_ELEMWISE_FUSABLE, "nn.dense": P.OUT_ELEMWISE_FUSABLE,
    "nn.matmul": P.OUT_ELEMWISE_FUSABLE, "nn.batch_matmul": P.OUT_ELEMWISE_FUSABLE,
    "nn.max_pool2d": P.OUT_ELEMWISE_FUSABLE, "nn.avg_pool2d": P.OUT_ELEMWISE_FUSABLE,
    "nn.global_avg_pool2d": P.OUT_ELEMWISE_FUSABLE,
    "nn.adaptive_avg_pool2d": P.OUT_ELEMWISE_FUSABLE,
    "nn.batch_norm": P.OUT_ELEMWISE_FUSABLE, "nn.layer_norm": P.OPAQUE,
    "nn.bias_add": P.BROADCAST, "nn.relu": P.ELEMWISE, "clip": P.ELEMWISE,
    "nn.softmax": P.OUT_ELEMWISE_FUSABLE, "nn.log_softmax": P.OUT_ELEMWISE_FUSABLE,
    "nn.dropout": P.OPAQUE, "nn.batch_flatten": P.INJECTIVE, "nn.pad": P.INJECTIVE,
    "add": P.BROADCAST, "subtract": P.BROADCAST, "multiply": P.BROADCAST,
    "divide": P.BROADCAST, "power": P.BROADCAST, "maximum": P.BROADCAST,
    "minimum": P.BROADCAST, "exp": P.ELEMWISE, "sqrt": P.ELEMWISE, "rsqrt": P.ELEMWISE,
    "tanh": P.ELEMWISE, "erf": P.ELEMWISE, "sigmoid": P.ELEMWISE, "negative": P.ELEMWISE,
    "log": P.ELEMWISE, "abs": P.ELEMWISE, "cast": P.ELEMWISE,
    "reshape": P.INJECTIVE, "transpose": P.INJECTIVE, "squeeze": P.INJECTIVE,
    "expand_dims": P.BROADCAST, "concatenate": P.INJECTIVE, "split": P.INJECTIVE,
    "take": P.INJECTIVE, "strided_slice": P.INJECTIVE, "layout_transform": P.INJECTIVE,
    "sum": P.COMM_REDUCE, "mean": P.COMM_REDUCE, "max": P.COMM_REDUCE, "min": P.COMM_REDUCE,
    "variance": P.COMM_REDUCE, "where": P.BROADCAST, "broadcast_to": P.BROADCAST,
    "zeros": P.ELEMWISE, "ones": P.ELEMWISE, "full": P.ELEMWISE,
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_op_is_fully_registered(name):
    op = Op.get(name)
    assert op.pattern == EXPECTED[name]
    assert op.type_rel is not None, "type relation"
    assert op.reference is not None, "numpy reference implementation"
    assert op.num_inputs >= 0 and len(op.arguments) == op.num_inputs
    assert op.description


def test_every_registered_op_has_relation_and_reference():
    # Relay's ops (Relax's share the registry: struct-info rules, no Relay type relation)
    for name in Op.list_op_names():
        op = Op.get(name)
        if not op.defined_in.startswith("irlab.relay."):
            continue
        assert op.type_rel is not None and op.reference is not None, name
