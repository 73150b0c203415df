"""Local value numbering in LLVM codegen (``_FunctionBuilder.pure``): integer arithmetic that
an unrolled body repeats is generated once per basic block and reused, never across blocks
(a value from one branch does not dominate the other), and the program computes the same."""

import re

import numpy as np

import irlab
from irlab.script import tir as T

TARGET = "llvm -mcpu=haswell"  # AVX2 code: runs on any x86-64 host of ours


@T.prim_func
def unrolled(A: T.Buffer((64,), "float32"), B: T.Buffer((32,), "float32")):
    T.func_attr({"global_symbol": "unrolled", "tir.noalias": True})
    for i in range(4):
        for j in T.unroll(8):
            B[i * 8 + j] = A[(i * 7 + 3) % 5 * 8 + j] + A[(i * 7 + 3) % 5 * 8 + j + 24]


@T.prim_func
def branches(A: T.Buffer((64,), "float32"), B: T.Buffer((16,), "float32")):
    T.func_attr({"global_symbol": "branches", "tir.noalias": True})
    for i in range(16):
        if i < 8:
            B[i] = A[(i * 7 + 3) % 11 * 2]
        else:
            B[i] = A[(i * 7 + 3) % 11 * 2 + 1] * T.float32(2)


def _reference_unrolled(a):
    b = np.empty(32, "float32")
    for i in range(4):
        base = (i * 7 + 3) % 5 * 8
        b[i * 8:i * 8 + 8] = a[base:base + 8] + a[base + 24:base + 32]
    return b


def test_repeated_index_arithmetic_is_generated_once():
    lib = irlab.build(unrolled, target=TARGET)
    ll = lib.get_source("ll-raw")  # as generated, before LLVM's own CSE
    # 8 copies x 2 loads each compute (i * 7 + 3) % 5: one srem by 5 in the loop body
    assert len(re.findall(r"srem i32 .*, 5\b", ll)) == 1
    a = np.random.default_rng(0).standard_normal(64).astype("float32")
    b = irlab.nd.empty((32,), "float32")
    lib["unrolled"](irlab.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), _reference_unrolled(a), rtol=1e-6)


def test_values_are_not_shared_between_branches():
    lib = irlab.build(branches, target=TARGET)  # LLVM's verifier rejects a use not dominated
    ll = lib.get_source("ll-raw")
    assert len(re.findall(r"srem i32 .*, 11\b", ll)) == 2  # one in each branch
    a = np.random.default_rng(1).standard_normal(64).astype("float32")
    b = irlab.nd.empty((16,), "float32")
    lib["branches"](irlab.nd.array(a), b)
    i = np.arange(16)
    idx = (i * 7 + 3) % 11 * 2
    expected = np.where(i < 8, a[idx], a[np.minimum(idx + 1, 63)] * 2)
    np.testing.assert_allclose(b.numpy(), expected, rtol=1e-6)
