"""VMCodeGen details: lowered programs written directly (R.vm ops, kills, aliases), the
codegen/link steps TVM's tests call, and TVM-compatible error kinds and values."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax
from irlab.errors import VMTypeError, VMValueError
from irlab.relax.testing import vm as vm_testing  # noqa: F401 (registers test.vm.*)
from irlab.relax.struct_info import ObjectStructInfo, PrimStructInfo


def build_lowered(mod):
    """TVM's codegen-only path: bytecode and link, no lowering pipeline."""
    builder = relax.ExecBuilder()
    kernels = relax.vm_build._vmcodegen(builder, mod, exec_mode="bytecode")
    return relax.vm_build._vmlink(builder, "llvm", kernels)


def test_kill_object_clears_the_register_but_not_its_aliases():
    defined = lambda value: relax.op.call_packed(  # noqa: E731
        "test.vm.check_if_defined", value, sinfo_args=PrimStructInfo("bool"))
    bb = relax.BlockBuilder()
    with bb.function("main", [], pure=False):
        storage = bb.emit(relax.op.vm.alloc_storage([16], 0, "uint8"))
        alloc = bb.emit(relax.op.vm.alloc_tensor(storage, 0, [4], "float32"))
        alias = bb.emit(alloc)  # a trivial binding: an alias of alloc
        before = bb.emit(defined(alloc))
        bb.emit(relax.op.vm.kill_object(alloc))
        after, alias_after = bb.emit(defined(alloc)), bb.emit(defined(alias))
        bb.emit_func_output(relax.Tuple([before, after, alias_after]))
    vm = relax.VirtualMachine(build_lowered(bb.get()), tvm.cpu())
    assert vm["main"]() == (True, False, True)


def test_memory_ops_written_by_hand():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo([2, 3], "float32"))
    with bb.function("main", [x], pure=False):
        storage = bb.emit(relax.op.memory.alloc_storage([24], 0, "global", "uint8"))
        out = bb.emit(relax.op.memory.alloc_tensor(storage, 0, [2, 3], "float32"))
        bb.emit(relax.op.call_packed("test.vm.identity", x, out,
                                     sinfo_args=ObjectStructInfo()))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(relax.build(bb.get(), "llvm"), tvm.cpu())
    data = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(vm["main"](data).numpy(), data)


def test_check_errors_are_type_and_value_errors():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo([2, 3], "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(x)
    vm = relax.VirtualMachine(relax.build(bb.get(), "llvm"), tvm.cpu())
    with pytest.raises(TypeError, match="expected a Tensor, got tuple"):
        vm["main"](())
    with pytest.raises(ValueError, match="ndim"):
        vm["main"](np.zeros(2, "float32"))
    with pytest.raises(VMValueError, match="dtype float32, got int32"):
        vm["main"](np.zeros((2, 3), "int32"))
    assert issubclass(VMTypeError, tvm.errors.VMError)


def test_data_type_parses_and_compares_with_its_string():
    dtype = tvm.DataType("float32")
    assert dtype == "float32" and dtype != "int32" and dtype.bits == 32
    assert dtype == tvm.runtime.dtype.parse_dtype("float32")
    assert hash(dtype) == hash(tvm.runtime.dtype.parse_dtype("float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", []):
        bb.emit_func_output(relax.DataTypeImm("float32"))
    assert relax.VirtualMachine(relax.build(bb.get(), "llvm"), tvm.cpu())["main"]() == "float32"


def test_closures_capture_their_first_arguments():
    bb = relax.BlockBuilder()
    x, env = (relax.Var(n, relax.TensorStructInfo([3], "float32")) for n in ("x", "env"))
    sinfo = relax.TensorStructInfo([3], "float32")
    with bb.function("lifted", [x, env]):
        bb.emit_func_output(bb.emit(relax.op.call_pure_packed("test.vm.add", x, env,
                                                              sinfo_args=sinfo)))
    lifted = bb.get().get_global_var("lifted")
    a, b = (relax.Var(n, relax.TensorStructInfo([3], "float32")) for n in ("a", "b"))
    with bb.function("main", [a, b]):
        closure = bb.emit(relax.op.make_closure(lifted, [a]))
        bb.emit_func_output(bb.emit(relax.op.invoke_pure_closure(closure, [b], sinfo)))
    vm = relax.VirtualMachine(relax.build(bb.get(), "llvm"), tvm.cpu())
    one, two = np.ones(3, "float32"), np.full(3, 2, "float32")
    np.testing.assert_array_equal(vm["main"](one, two).numpy(), one + two)


def test_shapes_and_values_returned_are_read_from_the_heap():
    bb = relax.BlockBuilder()
    n, m = tvm.tir.Var("n", "int64"), tvm.tir.Var("m", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, m], "float32"))
    size = relax.Var("size", relax.PrimStructInfo(value=n * m))
    with bb.function("main", [size, x]):  # size is checked after x defines n and m
        bb.emit_func_output(relax.Tuple([relax.ShapeExpr([m * 2, n + 1]),
                                         relax.PrimValue(n * n)]))
    vm = relax.VirtualMachine(relax.build(bb.get(), "llvm"), tvm.cpu())
    shape, value = vm["main"](6, np.zeros((2, 3), "float32"))
    assert shape == [6, 3] and value == 4
    with pytest.raises(tvm.errors.VMError, match="param size"):
        vm["main"](5, np.zeros((2, 3), "float32"))


def test_constants_survive_export_and_load(tmp_path):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo([2, 3], "float32"))
    offset = np.arange(6, dtype="float32").reshape(2, 3)
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(relax.op.add(x, relax.const(offset)))
            out = bb.emit_output(relax.Tuple([y, relax.ShapeExpr([2, 3]),
                                              relax.PrimValue(7)]))
        bb.emit_func_output(out)
    ex = relax.build(bb.get(), "llvm")
    path = str(tmp_path / "consts.irlab")
    ex.export_library(path)
    loaded = tvm.runtime.load_module(path)
    got, shape, seven = relax.VirtualMachine(loaded, tvm.cpu())["main"](np.ones((2, 3),
                                                                               "float32"))
    np.testing.assert_array_equal(got.numpy(), offset + 1)
    assert shape == (2, 3) and seven == 7
    assert loaded.constants and "NDArray(float32, shape=(2, 3))" in loaded.as_text()
