"""The Relax VM's builtins (shape heap, run-time struct-info checks, tuples) and saving an
executable with its kernel library."""

import os
import subprocess
import sys

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, te
from irlab.errors import VMError
from irlab.runtime.container import ShapeTuple
from irlab.runtime.relax_vm import MakeShapeCode, MatchShapeCode

STORE, LOAD, IMM = (MatchShapeCode.STORE_TO_HEAP, MatchShapeCode.ASSERT_EQUAL_TO_LOAD,
                    MatchShapeCode.ASSERT_EQUAL_TO_IMM)


def shape_program():
    """main(x: Tensor((n, 4)), y: Tensor((n, m))) -> Shape((m, n, 2)), checked at run time."""
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=2, param_names=["x", "y"]):
        ib.emit_call("vm.builtin.alloc_shape_heap", args=[ib.vm_state(), ib.imm(2)],
                     dst=ib.r(2))
        for k, name in enumerate("xy"):
            ib.emit_call("vm.builtin.check_tensor_info",
                         args=[ib.r(k), ib.imm(2), "float32", f"main: param {name}"])
        ib.emit_call("vm.builtin.match_shape",
                     args=[ib.r(0), ib.r(2), ib.imm(2), ib.imm(STORE), ib.imm(0),
                           ib.imm(IMM), ib.imm(4), "main: param x", ("n", "")])
        ib.emit_call("vm.builtin.match_shape",
                     args=[ib.r(1), ib.r(2), ib.imm(2), ib.imm(LOAD), ib.imm(0),
                           ib.imm(STORE), ib.imm(1), "main: param y", ("n", "m")])
        ib.emit_call("vm.builtin.make_shape",
                     args=[ib.r(2), ib.imm(3), ib.imm(MakeShapeCode.LOAD_SHAPE), ib.imm(1),
                           ib.imm(MakeShapeCode.LOAD_SHAPE), ib.imm(0),
                           ib.imm(MakeShapeCode.USE_IMM), ib.imm(2)], dst=ib.r(3))
        ib.emit_ret(ib.r(3))
    return relax.VirtualMachine(ib.get(), tvm.cpu())


def zeros(*shape, dtype="float32"):
    return tvm.nd.array(np.zeros(shape, dtype))


def test_symbolic_shapes_are_matched_and_rebuilt():
    vm = shape_program()
    for n, m in ((1, 3), (7, 1), (32, 5)):
        assert vm["main"](zeros(n, 4), zeros(n, m)) == ShapeTuple([m, n, 2])


@pytest.mark.parametrize("x, y, message", [
    ((3, 4), (5, 2), r"main: param y: match_cast: shape\[0\] \(n\) is 5, but n = 3"),
    ((3, 5), (3, 2), r"main: param x: match_cast: shape\[1\] is 5, expected 4"),
    ((3, 4, 1), (3, 2), "main: param x: expected a Tensor with ndim 2, got ndim 3"),
])
def test_failed_match_names_the_dimension(x, y, message):
    vm = shape_program()
    with pytest.raises(VMError, match=message):
        vm["main"](zeros(*x), zeros(*y))
    assert vm["main"](zeros(2, 4), zeros(2, 6)) == (6, 2, 2)  # the VM is still usable


def test_dtype_and_kind_checks():
    vm = shape_program()
    with pytest.raises(VMError, match="param x: expected a Tensor with dtype float32, got int32"):
        vm["main"](zeros(2, 4, dtype="int32"), zeros(2, 1))
    with pytest.raises(VMError, match="param y: expected a Tensor, got ShapeTuple"):
        vm["main"](zeros(2, 4), ShapeTuple([2, 1]))


def test_tuple_and_shape_checks():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=2):
        ib.emit_call("vm.builtin.check_tuple_info", args=[ib.r(0), ib.imm(2), "arg t"])
        ib.emit_call("vm.builtin.check_shape_info", args=[ib.r(1), ib.imm(3), "arg s"])
        ib.emit_call("vm.builtin.tuple_getitem", args=[ib.r(0), ib.imm(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    assert vm["main"]((1, 2), ShapeTuple([1, 2, 3])) == 2
    with pytest.raises(VMError, match="arg t: expected a Tuple of 2 elements, got 3"):
        vm["main"]((1, 2, 3), ShapeTuple([1, 2, 3]))
    with pytest.raises(VMError, match="arg s: expected a Shape with ndim 3, got 1"):
        vm["main"]((1, 2), ShapeTuple([1]))


def test_reshape_and_tensor_to_shape():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=2):
        ib.emit_call("vm.builtin.tensor_to_shape", args=[ib.r(1)], dst=ib.r(2))
        ib.emit_call("vm.builtin.reshape", args=[ib.r(0), ib.r(2)], dst=ib.r(3))
        ib.emit_ret(ib.r(3))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    x = np.arange(12, dtype="float32")
    out = vm["main"](tvm.nd.array(x), tvm.nd.array(np.array([3, 4], "int64")))
    np.testing.assert_array_equal(out.numpy(), x.reshape(3, 4))
    with pytest.raises(VMError, match=r"cannot view shape \(12,\) as \(5, 2\)"):
        vm["main"](tvm.nd.array(x), tvm.nd.array(np.array([5, 2], "int64")))


def kernel_program():
    """main(a, b) = add(a, b) * 2, with ``add`` a compiled kernel and the 2 a constant."""
    n = te.var("n")
    a, b = te.placeholder((n,), name="a"), te.placeholder((n,), name="b")
    c = te.compute((n,), lambda i: a[i] + b[i], name="c")
    lib = tvm.build(te.create_prim_func([a, b, c]).with_attr("global_symbol", "vadd"), "llvm")
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=2, param_names=["a", "b"]):
        ib.emit_call("vm.builtin.shape_of", args=[ib.r(0)], dst=ib.r(2))
        ib.emit_call("vm.builtin.alloc_storage",
                     args=[ib.vm_state(), ib.r(2), 0, "float32", "global"], dst=ib.r(3))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(3), ib.imm(0), ib.r(2), "float32"],
                     dst=ib.r(4))
        ib.emit_call("vadd", args=[ib.r(0), ib.r(1), ib.r(4)])
        ib.emit_call("vm.builtin.alloc_storage",
                     args=[ib.vm_state(), ib.r(2), 0, "float32", "global"], dst=ib.r(5))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(5), ib.imm(0), ib.r(2), "float32"],
                     dst=ib.r(6))
        ib.emit_call("vadd", args=[ib.r(4), ib.r(4), ib.r(6)])
        ib.emit_ret(ib.r(6))
    ex = ib.get()
    ex.import_module(lib)
    return ex


@pytest.fixture(scope="module")
def executable():
    return kernel_program()


def check_kernel_vm(ex):
    vm = relax.VirtualMachine(ex, tvm.cpu())
    for n in (1, 7, 32):
        a = np.random.rand(n).astype("float32")
        b = np.random.rand(n).astype("float32")
        np.testing.assert_allclose(vm["main"](tvm.nd.array(a), tvm.nd.array(b)).numpy(),
                                   (a + b) * 2, rtol=1e-6)


def test_vm_calls_the_kernel_library(executable):
    check_kernel_vm(executable)
    report = relax.VirtualMachine(executable, tvm.cpu()).profile(
        "main", zeros(8), zeros(8))
    assert report.by_callee().keys() >= {"vadd", "vm.builtin.alloc_storage"}
    assert [r.count for r in report.rows if r.callee == "vadd"] == [1, 1]


@pytest.mark.parametrize("suffix", [".irlab", ".so"])
def test_export_and_load_round_trip(executable, tmp_path, suffix):
    if suffix == ".so" and tvm.runtime.module.find_c_compiler() is None:
        pytest.skip("no C compiler to link a .so")
    path = str(tmp_path / f"program{suffix}")
    executable.export_library(path)
    loaded = tvm.runtime.load_module(path)
    assert loaded.as_text() == executable.as_text()
    check_kernel_vm(loaded)


def test_a_fresh_process_loads_and_runs_an_executable(executable, tmp_path):
    """load_module finds the VM's and the LLVM kernels' loaders without importing relax."""
    path = str(tmp_path / "program.irlab")
    executable.export_library(path)
    script = (
        "import sys, numpy as np, irlab\n"
        f"ex = irlab.runtime.load_module({path!r})\n"
        "vm = irlab.runtime.relax_vm.VirtualMachine(ex, irlab.cpu())\n"
        "out = vm['main'](np.ones(3, 'float32'), np.ones(3, 'float32')).numpy()\n"
        "assert out.tolist() == [4.0, 4.0, 4.0], out\n"
        "assert 'irlab.relax' not in sys.modules\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_multinomial_from_uniform_samples_by_cumulative_probability():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=2):
        ib.emit_call("vm.builtin.multinomial_from_uniform", args=[ib.r(0), ib.r(1)],
                     dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    prob = np.array([[0.2, 0.3, 0.5], [0.5, 0.5, 0.0], [0.1, 0.1, 0.8]], "float32")
    sample = np.array([[0.25], [0.0], [1.0]], "float32")
    assert vm["main"](prob, sample).numpy().tolist() == [[1], [0], [2]]
