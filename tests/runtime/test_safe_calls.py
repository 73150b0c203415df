"""Bad calls into compiled functions raise Python exceptions; the process never crashes.

The fuzz run happens in a subprocess (``fuzz_calls.py``): a crash there fails the test instead
of killing pytest.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import irlab
from irlab.errors import ArgumentError, IrlabError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fuzz_calls  # noqa: E402


def _run_fuzz(tmp_path, *extra):
    env = dict(os.environ, IRLAB_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, os.path.join(HERE, "fuzz_calls.py"), *extra],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_fuzz_bad_calls_in_subprocess(tmp_path):
    counts = _run_fuzz(tmp_path, "--bad", "6000", "--seed", "7")
    assert counts["failures"] == 0
    assert counts["bad"] >= 6000
    assert counts["valid"] >= 1000
    kinds = counts["kinds"]
    for kind in ("none", "str", "list", "dtype", "byteswap", "ndim_more", "ndim_less", "shape",
                 "slice_view", "transpose", "negative", "fortran", "bad_stride_bytes",
                 "too_few", "too_many", "kwargs", "nan", "too_big", "too_small", "device",
                 "symbolic_m", "symbolic_n", "symbolic_m_first", "scalar_dim", "div_by_zero",
                 "parallel_assert", "nd_dtype", "nd_shape"):
        assert kinds.get(kind, 0) > 0, kind


def test_fuzz_bad_calls_target_c(tmp_path):
    from irlab.runtime.module import find_c_compiler

    if find_c_compiler() is None:
        pytest.skip("no C compiler")
    counts = _run_fuzz(tmp_path, "--bad", "3000", "--seed", "11", "--target", "c")
    assert counts["failures"] == 0 and counts["bad"] >= 3000 and counts["valid"] >= 500


# -- targeted checks, in process (every one of these is also in the fuzz mix) -------------
@pytest.fixture(scope="module")
def funcs():
    mod = irlab.build(irlab.IRModule({"matvec": fuzz_calls.matvec,
                                      "strided_copy": fuzz_calls.strided_copy,
                                      "scalars": fuzz_calls.scalars,
                                      "scale_n": fuzz_calls.scale_n,
                                      "divide": fuzz_calls.divide,
                                      "par_assert": fuzz_calls.par_assert}))
    return {name: mod[name] for name in mod.get_func_names()}


def test_symbolic_dims_shared_across_arguments(funcs):
    f = funcs["matvec"]
    a, b = np.ones((3, 4), "float32"), np.ones(4, "float32")
    with pytest.raises(ArgumentError, match=r"argument 1 \(B\): axis 0 is 5, but m = 4"):
        f(a, np.ones(5, "float32"), np.zeros(3, "float32"))
    with pytest.raises(ArgumentError, match=r"argument 2 \(C\).*n = 3"):
        f(a, b, np.zeros(4, "float32"))
    c = np.zeros(3, "float32")
    f(a, b, c)
    assert (c == 4).all()


def test_scalar_parameter_used_as_dimension_is_checked(funcs):
    f = funcs["scale_n"]
    a = np.ones(4)
    with pytest.raises(ArgumentError, match=r"argument 1 \(n\): n = 5.*argument 0 \(A\)"):
        f(a, 5)
    f(a, 4)
    assert (a == 3).all()
    assert "scale_n(A: Buffer((n,), float64), n: int32)" in repr(f)


def test_read_only_strided_argument_keeps_its_strides(funcs):
    f = funcs["strided_copy"]
    big = np.arange(60, dtype="int32").reshape(6, 10)
    big.flags.writeable = False
    for view in (big[:, ::2], big[::-1, ::-2], big[:, 5:]):
        out = np.zeros((6, 5), "int32")
        f(view, out)
        np.testing.assert_array_equal(out, view * 2)
    assert (big == np.arange(60).reshape(6, 10)).all()


def test_scalar_range_and_kind_checks(funcs):
    f = funcs["scalars"]
    a = np.zeros(16, "int64")
    with pytest.raises(ArgumentError, match=r"argument 1 \(x\): 1099511627776 does not fit"):
        f(a, 2 ** 40, 1.0, True, 0)
    with pytest.raises(ArgumentError, match=r"argument 1 \(x\): expected a int32 integer"):
        f(a, float("nan"), 1.0, True, 0)
    with pytest.raises(ArgumentError, match=r"argument 3 \(flag\)"):
        f(a, 1, 1.0, 2, 0)
    with pytest.raises(ArgumentError, match=r"argument 2 \(y\)"):
        f(a, 1, "1.0", True, 0)
    with pytest.raises(ArgumentError, match="positional arguments only"):
        f(a, 1, 1.0, True, z=0)
    f(a, -5, 2.9, True, 2 ** 62)
    assert (a == 2 ** 62 - 5 + 2).all()


def test_unaligned_arrays_are_staged_and_written_back(funcs):
    f = funcs["matvec"]
    a = fuzz_calls.unaligned(np.arange(12, dtype="float32").reshape(3, 4))
    b = fuzz_calls.unaligned(np.ones(4, "float32"), shift=1)  # not even element-aligned
    c = fuzz_calls.unaligned(np.zeros(3, "float32"))
    assert not b.flags.aligned
    f(a, b, c)
    np.testing.assert_allclose(c, [6, 22, 38])


def test_zero_size_arrays(funcs):
    c = np.full(3, 9, "float32")
    funcs["matvec"](np.zeros((3, 0), "float32"), np.zeros(0, "float32"), c)
    assert (c == 0).all()
    funcs["matvec"](np.zeros((0, 0), "float32"), np.zeros(0, "float32"),
                    np.zeros(0, "float32"))


def test_runtime_errors_raise(funcs):
    a = np.arange(8, dtype="int32")
    with pytest.raises(IrlabError, match="division by zero"):
        funcs["divide"](a, 0)
    funcs["divide"](a, 2)
    np.testing.assert_array_equal(a, np.arange(8) // 2)
    with pytest.raises(IrlabError, match="value too large"):
        funcs["par_assert"](np.arange(64, dtype="int32"), 10)
    b = np.arange(64, dtype="int32")
    funcs["par_assert"](b, 64)
    np.testing.assert_array_equal(b, np.arange(1, 65))


def test_division_by_minus_one(funcs):
    a = np.arange(8, dtype="int32")
    funcs["divide"](a, -1)
    np.testing.assert_array_equal(a, -np.arange(8))
    b = np.array([-2 ** 31, 7, -7, 0, 1, 2, 3, 4], "int32")
    funcs["divide"](b, -1)  # INT_MIN // -1 traps in hardware: must not kill the process
    np.testing.assert_array_equal(b[1:], [-7, 7, 0, -1, -2, -3, -4])
