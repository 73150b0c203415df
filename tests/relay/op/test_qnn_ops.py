"""QNN ops: relations and numpy references on hand-computed cases; FoldConstant folds them
only with fold_qnn=True."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.ir import assert_structural_equal
from irlab.relay import transform
from irlab.relay.testing import run_opt_pass


def evaluate(expr):
    mod = irlab.IRModule.from_expr(relay.Function([], expr))
    return relay.create_executor("debug", mod=mod).evaluate()().numpy()


def c(value, dtype):
    return relay.const(np.asarray(value, dtype=dtype))


def test_quantize_rounds_and_saturates():
    q = relay.qnn.op.quantize(c([0.2, 1.0, -3.0, 500.0], "float32"), relay.const(0.5),
                              relay.const(3))
    out = evaluate(q)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, [3, 5, -3, 127])


def test_dequantize_and_requantize():
    deq = relay.qnn.op.dequantize(c([1, 5], "uint8"), relay.const(0.25), relay.const(1))
    np.testing.assert_allclose(evaluate(deq), [0.0, 1.0])
    req = relay.qnn.op.requantize(c([0, 2, 4], "int8"), relay.const(2.0), relay.const(1),
                                  relay.const(4.0), relay.const(2))
    # real values -2, 2, 6 at scale 4 are -0.5, 0.5, 1.5: halves round up to 0, 1, 2; + 2
    np.testing.assert_array_equal(evaluate(req), [2, 3, 4])


def test_add_and_mul_requantize_to_the_output_scale():
    lhs, rhs = c([[10, 20]], "uint8"), c([[4], [6]], "uint8")
    scales = [relay.const(0.5), relay.const(0), relay.const(1.0), relay.const(2),
              relay.const(1.0), relay.const(1)]
    added = evaluate(relay.qnn.op.add(lhs, rhs, *scales))
    # lhs reals 5, 10; rhs reals 2, 4 -> sums + output zero point 1
    np.testing.assert_array_equal(added, [[8, 13], [10, 15]])
    assert added.dtype == np.uint8
    product = evaluate(relay.qnn.op.mul(lhs, rhs, *scales))
    np.testing.assert_array_equal(product, [[11, 21], [21, 41]])


def test_dense_and_conv2d_accumulate_shifted_operands_in_int32():
    data = c([[3, 4]], "uint8")
    weight = c([[1, 2], [3, 5]], "uint8")
    zp = [relay.const(1), relay.const(1), relay.const(0.5), relay.const(0.5)]
    dense = evaluate(relay.qnn.op.dense(data, weight, *zp, units=2))
    np.testing.assert_array_equal(dense, [[(3 - 1) * 0 + 3 * 1, 2 * 2 + 3 * 4]])
    assert dense.dtype == np.int32
    image = c(np.arange(9).reshape(1, 1, 3, 3), "uint8")
    kernel = c(np.full((1, 1, 2, 2), 2), "uint8")
    conv = evaluate(relay.qnn.op.conv2d(image, kernel, *zp, kernel_size=(2, 2), channels=1))
    np.testing.assert_array_equal(conv[0, 0], [[4, 8], [16, 20]])  # windows of (x - 1)


def test_fold_constant_folds_qnn_only_when_asked():
    q = relay.qnn.op.quantize(c([1.0, 2.0], "float32"), relay.const(0.5), relay.const(0))
    x = relay.var("x", shape=(2,), dtype="int8")
    func = relay.Function([x], relay.add(x, q))
    kept = run_opt_pass(func, transform.FoldConstant())
    assert_structural_equal(kept, run_opt_pass(func, transform.InferType()))
    folded = run_opt_pass(func, transform.FoldConstant(fold_qnn=True))
    expected = relay.Function([x], relay.add(x, c([2, 4], "int8")))
    assert_structural_equal(folded, run_opt_pass(expected, transform.InferType()))


def test_bad_operands_are_rejected_by_name():
    with pytest.raises(irlab.errors.RelayTypeError, match="qnn.add"):
        evaluate(relay.qnn.op.add(c([1], "uint8"), c([1], "int8"), *[relay.const(1.0)] * 6))
