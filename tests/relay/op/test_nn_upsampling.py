"""nn.upsampling: type relation, the reference against numpy, and the compiled kernel
against the reference."""

import numpy as np
import pytest

import irlab
from irlab import relay


def _func(shape, **kwargs):
    x = relay.var("x", shape=shape)
    return relay.Function([x], relay.nn.upsampling(x, **kwargs))


def _run(func, x, kind):
    return relay.create_executor(kind, mod=irlab.IRModule.from_expr(func),
                                 target="llvm").evaluate()(x).numpy()


def test_type_nearest_repeats_and_matches_the_kernel():
    x = np.arange(24, dtype="float32").reshape(1, 2, 3, 4)
    func = _func(x.shape, scale_h=2, scale_w=3)
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(func))
    assert tuple(mod["main"].ret_type.shape) == (1, 2, 6, 12)
    want = x.repeat(2, axis=2).repeat(3, axis=3)
    np.testing.assert_array_equal(_run(func, x, "debug"), want)
    np.testing.assert_array_equal(_run(func, x, "graph"), want)


def test_bilinear_align_corners_nhwc():
    x = np.array([0.0, 3.0], "float32").reshape(1, 1, 2, 1)
    func = _func(x.shape, scale_h=1, scale_w=2, layout="NHWC", method="bilinear",
                 align_corners=True)
    out = _run(func, x, "debug")
    np.testing.assert_allclose(out[0, 0, :, 0], [0, 1, 2, 3], atol=1e-6)
    np.testing.assert_allclose(_run(func, x, "graph"), out, atol=1e-6)


def test_unknown_method_is_refused():
    with pytest.raises(irlab.errors.IrlabError, match="method must be one of"):
        relay.transform.InferType()(irlab.IRModule.from_expr(
            _func((1, 1, 2, 2), method="area")))
