"""irlab.topi.testing (tvm.topi.testing): the numpy references agree with independent formulas."""

import numpy as np

from irlab.topi import testing as ref


def test_softmax_references():
    x = np.random.default_rng(0).normal(size=(3, 5)).astype("float32")
    s = ref.softmax_python(x)
    np.testing.assert_allclose(s.sum(axis=-1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(np.exp(ref.log_softmax_python(x)), s, rtol=1e-5)


def test_conv2d_reference_matches_a_direct_loop():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(1, 4, 6, 6))
    w = rng.normal(size=(4, 2, 3, 3))  # 2 groups of 2 channels
    out = ref.conv2d_nchw_python(a, w, (2, 1), (1, 1), groups=2)
    pad = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    assert out.shape == (1, 4, 3, 6)
    for f in range(4):
        c0 = (f // 2) * 2
        for y in range(3):
            for x in range(6):
                want = np.sum(pad[0, c0:c0 + 2, 2 * y:2 * y + 3, x:x + 3] * w[f])
                assert np.isclose(out[0, f, y, x], want)
    nhwc = ref.conv2d_nhwc_python(a.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), (2, 1),
                                  "SAME", groups=2)
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), out)


def test_dense_and_batch_matmul():
    rng = np.random.default_rng(2)
    x, y, b = rng.normal(size=(2, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4,))
    np.testing.assert_allclose(ref.dense(x, y, b, use_bias=True, use_relu=True),
                               np.maximum(x @ y.T + b, 0))
    bx, by = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 4, 5))
    np.testing.assert_allclose(ref.batch_matmul(bx, by), np.einsum("bik,bjk->bij", bx, by))
