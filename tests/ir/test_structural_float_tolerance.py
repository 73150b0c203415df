"""Structural equality compares float fields with TVM's absolute tolerance (1e-9)."""

import numpy as np

from irlab import relay
from irlab.ir import structural_equal


def _bn(epsilon):
    args = [relay.var(n) for n in ("x", "g", "b", "m", "v")]
    return relay.nn.batch_norm(*args, epsilon=epsilon)[0].tuple_value.attrs


def test_float_attr_read_back_from_float32_equals_its_literal():
    widened = np.float32(1e-5).item()  # 9.99999974e-06
    assert widened != 1e-5
    assert structural_equal(_bn(1e-5), _bn(widened))
    assert not structural_equal(_bn(1e-5), _bn(2e-5))
