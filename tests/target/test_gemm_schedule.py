"""The GEMM schedule of ``benchmarks/bench_gemm.py`` (issue 7) at small sizes.

``gemm_schedule`` (B packed into column panels, the host's register tile in a local
cache, the reduction optionally split into blocks, parallel column tiles) is built with
``irlab.build`` and compared with numpy (float32, rtol 1e-4); the TIR it produces has a
parallel loop, and 1 and 2 threads give bit-identical results (each output element is
computed by exactly one thread in the same order).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import irlab
from irlab.target import Target
from irlab.tir import stmt as S
from irlab.topi.x86.dense import dense_tile

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_gemm.py"
_spec = importlib.util.spec_from_file_location("bench_gemm", _PATH)
bench_gemm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_gemm)
gemm_schedule = bench_gemm.gemm_schedule

RNG = np.random.default_rng(7)

CASES = [
    pytest.param((128, 128, 128), {}, id="128-host-tile"),
    pytest.param((256, 256, 256), {}, id="256-host-tile"),
    pytest.param((256, 256, 256), {"kb": 64}, id="256-host-tile-kblocked"),
    pytest.param((128, 128, 128), {"bm": 8, "bn": 32, "kb": 32}, id="128-8x32-kblocked"),
    pytest.param((64, 192, 96), {"pack_at": "root"}, id="64x192x96-pack-first"),
]


def _inputs(M, N, K):
    a = RNG.random((M, K), dtype=np.float32)
    b = RNG.random((K, N), dtype=np.float32)
    return a, b


def _run(mod, a, b):
    c = irlab.nd.empty((a.shape[0], b.shape[1]), "float32")
    mod["gemm"](irlab.nd.array(a), irlab.nd.array(b), c)
    return c.numpy()


def _parallel_loops(func):
    found = []

    def visit(node):
        if isinstance(node, S.For) and node.kind == S.ForKind.PARALLEL:
            found.append(node)

    from irlab.tir.functor import post_order_visit

    post_order_visit(func.body, visit)
    return found


@pytest.mark.parametrize("shape, options", CASES)
def test_gemm_schedule_matches_numpy(shape, options):
    M, N, K = shape
    a, b = _inputs(M, N, K)
    mod = irlab.build(gemm_schedule(M, N, K, **options).mod, target="llvm -num-cores=2")
    np.testing.assert_allclose(_run(mod, a, b), a @ b, rtol=1e-4)


def test_gemm_schedule_has_a_parallel_loop_and_vector_inner_loop():
    sch = gemm_schedule(128, 128, 128, kb=32)
    func = sch.mod["main"]
    assert len(_parallel_loops(func)) == 1
    script = sch.mod.script()
    bm, bn = dense_tile(128, 128, Target("llvm"))  # the host's tile (4x64 AVX-512, 4x16 AVX2)
    assert f"T.parallel({128 // bn})" in script and f"T.vectorized({bn})" in script
    assert f"T.unroll({bm})" in script
    assert 'scope="local"' in script


def test_gemm_one_and_two_threads_identical():
    a, b = _inputs(256, 256, 256)
    sch = gemm_schedule(256, 256, 256, kb=128)
    one = _run(irlab.build(sch.mod, target="llvm -num-cores=1"), a, b)
    two = _run(irlab.build(sch.mod, target="llvm -num-cores=2"), a, b)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(two, a @ b, rtol=1e-4)


def test_gemm_schedule_rejects_untiled_sizes():
    with pytest.raises(ValueError, match="multiple of bm"):
        gemm_schedule(130, 128, 128, bm=4, bn=64)
    with pytest.raises(ValueError, match="multiple of kb"):
        gemm_schedule(128, 128, 128, kb=48)
