"""nn.layer_norm / nn.instance_norm / nn.batch_norm: TE compute + CPU schedule, lowered with
LowerTE, built with LLVM, against the ops' numpy references."""

import pytest

from irlab import relay

from tests.topi._lower_util import check_op


@pytest.mark.parametrize("shape,axis,center,scale", [((4, 32), -1, True, True),
                                                     ((2, 3, 20), -1, False, True),
                                                     ((2, 6, 5), 1, True, False),
                                                     ((7,), 0, True, True),
                                                     ((64, 256), -1, True, True)])
def test_layer_norm(shape, axis, center, scale):
    lowered = check_op(lambda x, g, b: relay.nn.layer_norm(x, g, b, axis=axis, epsilon=1e-5,
                                                           center=center, scale=scale),
                       [shape, (shape[axis],), (shape[axis],)], atol=1e-4)
    assert lowered.anchor[0].name == "layer_norm.x86"


@pytest.mark.parametrize("shape,axis", [((2, 3, 4, 5), 1), ((2, 5, 6, 3), 3), ((3, 4, 10), 1),
                                        ((4, 8), 1)])
def test_instance_norm(shape, axis):
    check_op(lambda x, g, b: relay.nn.instance_norm(x, g, b, axis=axis, epsilon=1e-3),
             [shape, (shape[axis],), (shape[axis],)], atol=1e-4)


@pytest.mark.parametrize("shape,axis,center,scale", [((2, 3, 4, 5), 1, True, True),
                                                     ((4, 6), 1, True, False),
                                                     ((2, 5, 8), -1, False, True)])
def test_batch_norm(shape, axis, center, scale):
    c = (shape[axis],)

    def make(x, g, b, m, v, index=None):
        out = relay.nn.batch_norm(x, g, b, m, v, axis=axis, center=center, scale=scale)
        return out.astuple() if index is None else out[index]

    check_op(make, [shape, c, c, c, c], positive=(4,), atol=1e-4)
    check_op(lambda *a: make(*a, index=0), [shape, c, c, c, c], positive=(4,), atol=1e-4)
