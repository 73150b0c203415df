"""Seed 001's mm_relu through ``tvm.build`` for "llvm" and "c", before and after the MLC
course's schedule, written as the MLC notebooks write it (only the imports changed)."""

import os
import sys

import numpy as np
import pytest

import irlab as tvm
from irlab.runtime.module import find_c_compiler

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "script"))
import seed_modules as seed  # noqa: E402

TARGETS = ["llvm"] + (["c"] if find_c_compiler() else [])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("scheduled", [False, True])
def test_mm_relu_builds_and_matches_numpy(target, scheduled):
    mod = seed.mlc_schedule().mod if scheduled else seed.MyModule
    dtype = "float32"
    a_np = np.random.rand(128, 128).astype(dtype)
    b_np = np.random.rand(128, 128).astype(dtype)
    c_mm_relu = np.maximum(a_np @ b_np, 0)

    rt_lib = tvm.build(mod, target=target)
    a_nd = tvm.nd.array(a_np)
    b_nd = tvm.nd.array(b_np)
    c_nd = tvm.nd.empty((128, 128), dtype="float32")
    func_mm_relu = rt_lib["mm_relu"]
    func_mm_relu(a_nd, b_nd, c_nd)
    np.testing.assert_allclose(c_mm_relu, c_nd.numpy(), rtol=1e-5)

    f_timer = rt_lib.time_evaluator("mm_relu", tvm.cpu())
    result = f_timer(a_nd, b_nd, c_nd)
    assert result.mean > 0 and "Execution time summary" in str(result)


def test_vector_add_module_builds():
    rt_lib = tvm.build(seed.VecAddModule, target="llvm")
    a = tvm.nd.array(np.arange(8, dtype="float32"))
    b = tvm.nd.empty((8,), dtype="float32")
    rt_lib["main"](a, b)
    np.testing.assert_allclose(b.numpy(), np.arange(8, dtype="float32") + 1)
