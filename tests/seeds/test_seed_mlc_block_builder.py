"""The MLC course's "integration with ML frameworks" chapter (seed 001, section 0x1.4: Relax
programs built from TE through ``BlockBuilder.emit_te``): ``te_matmul`` / ``te_relu`` emitted
in a dataflow block, the module shown, built and run by the VM, against numpy. Changes: none
beyond the imports (``from irlab import relax, te``; the course's ``R`` name for the output
kept); the PyTorch ``from_fx`` part needs torch, not an irlab dependency."""

import numpy as np

import irlab as tvm
from irlab import relax, te


def te_matmul(A: te.Tensor, B: te.Tensor) -> te.Tensor:
    assert A.shape[1] == B.shape[0]
    n = A.shape[0]
    m = B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A: te.Tensor) -> te.Tensor:
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


def test_mlc_emit_te_matmul_relu(capsys):
    A = relax.Var("A", relax.TensorStructInfo((128, 128), "float32"))
    B = relax.Var("B", relax.TensorStructInfo((128, 128), "float32"))

    bb = relax.BlockBuilder()

    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R = bb.emit_output(D)
        bb.emit_func_output(R, params=[A, B])

    MyModule = bb.get()
    MyModule.show()

    shown = capsys.readouterr().out
    assert "def te_matmul(" in shown and "def te_relu(" in shown
    assert "R.call_tir(cls.te_matmul, (A, B), out_sinfo=R.Tensor((128, 128)" in shown
    ex = relax.build(MyModule, target="llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    a = np.random.rand(128, 128).astype("float32") - 0.5
    b = np.random.rand(128, 128).astype("float32") - 0.5
    out = vm["main"](tvm.nd.array(a), tvm.nd.array(b)).numpy()
    np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-5)


def test_mlc_emit_te_with_a_symbolic_batch():
    # The course's next step: the batch dimension symbolic ("n"), one build for every n.
    n = tvm.tir.Var("n", "int64")
    A = relax.Var("A", relax.TensorStructInfo((n, 16), "float32"))
    B = relax.Var("B", relax.TensorStructInfo((16, 8), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            C = bb.emit_te(te_matmul, A, B)
            D = bb.emit_te(te_relu, C)
            R = bb.emit_output(D)
        bb.emit_func_output(R, params=[A, B])
    optimized = relax.get_pipeline()(bb.get())  # te_matmul and te_relu fused into one kernel
    assert "fused_te_matmul_te_relu" in [gv.name_hint for gv in optimized.get_global_vars()]
    vm = relax.VirtualMachine(relax.build(optimized, target="llvm"), tvm.cpu())
    b = np.random.rand(16, 8).astype("float32") - 0.5
    for rows in (1, 5):
        a = np.random.rand(rows, 16).astype("float32") - 0.5
        out = vm["main"](tvm.nd.array(a), tvm.nd.array(b)).numpy()
        np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-5)
