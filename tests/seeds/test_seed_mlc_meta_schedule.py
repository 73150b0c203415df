"""The MLC course's automatic program optimization chapter (the MetaSchedule calls behind seed
001's "TVM Unify ... 也可以和Auto Schedule交互"): ``ms.tune_tir`` with the course's stochastic
schedule as the search space, then ``ms.tir_integration.compile_tir``; the tuned module equals
numpy. Changes: ``T.Buffer[...]`` -> ``T.Buffer(...)``; 4 trials instead of the course's 64 and
a temporary ``work_dir`` instead of ``./tune_tmp`` (to keep the test short and clean).
"""

import numpy as np

import irlab as tvm
from irlab import meta_schedule as ms
from irlab.script import tir as T


@tvm.script.ir_module
class MyModule:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def stochastic_schedule_mm(sch: tvm.tir.Schedule):
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


def test_mlc_tune_tir_with_a_stochastic_schedule(tmp_path):
    database = ms.tune_tir(
        mod=MyModule,
        target="llvm --num-cores=1",
        max_trials_global=4,
        num_trials_per_iter=4,
        space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
        work_dir=str(tmp_path / "tune_tmp"),
        task_name="main",
    )
    sch = ms.tir_integration.compile_tir(database, MyModule, "llvm --num-cores=1")
    sch.trace.show()
    text = str(sch.trace)
    assert "sch.sample_perfect_tile(loop=" in text and "sch.decompose_reduction(" in text

    lib = tvm.build(sch.mod, target="llvm")
    a_np = np.random.rand(128, 128).astype("float32")
    b_np = np.random.rand(128, 128).astype("float32")
    c_nd = tvm.nd.empty((128, 128), "float32")
    lib["main"](tvm.nd.array(a_np), tvm.nd.array(b_np), c_nd)
    np.testing.assert_allclose(c_nd.numpy(), a_np @ b_np, rtol=1e-4)
