"""The Relax VM at its lowest level: programs written with ExecBuilder, run by the VM
(after TVM's tests/python/relax/test_vm_execbuilder.py)."""

import json

import numpy as np
import pytest

import irlab as tvm
from irlab import relax
from irlab.errors import IrlabError, VMError
from irlab.relax.testing import vm as vm_testing  # noqa: F401 (registers test.vm.*)
from irlab.runtime.container import ShapeTuple


@pytest.fixture(autouse=True, scope="module")
def failing_function():
    """test.vm.add/mul/add_scalar/get_device_id come from relax.testing.vm (as in TVM)."""
    tvm.register_func("test.vm.fail", lambda x: 1 // 0, override=True)
    yield
    tvm.runtime.remove_global_func("test.vm.fail")


def rand(*shape):
    return tvm.nd.array(np.random.rand(*shape))


def add_program(name="func0", op="test.vm.add", ib=None):
    ib = ib or relax.ExecBuilder()
    with ib.function(name, num_inputs=2, param_names=["a", "b"]):
        ib.emit_call(op, args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    return ib


def test_execute_and_saved_function():
    vm = relax.VirtualMachine(add_program().get(), tvm.cpu())
    a, b = rand(4), rand(4)
    np.testing.assert_allclose(vm["func0"](a, b).numpy(), a.numpy() + b.numpy())
    vm.save_function("func0", "func0_saved", a, b)
    np.testing.assert_allclose(vm["func0_saved"]().numpy(), a.numpy() + b.numpy())


def test_multiple_functions():
    ib = add_program("func0")
    add_program("func1", "test.vm.mul", ib)
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    a, b = rand(4), rand(4)
    np.testing.assert_allclose(vm["func1"](a, b).numpy(), a.numpy() * b.numpy())
    np.testing.assert_allclose(vm["func0"](a, b).numpy(), a.numpy() + b.numpy())


def test_checker_rejects_undefined_register():
    ib = relax.ExecBuilder()
    with ib.function("func0", num_inputs=2):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(2)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    with pytest.raises(IrlabError, match="register %2 is read before it is written"):
        ib.get()


def test_checker_rejects_bad_jumps_and_scopes():
    ib = relax.ExecBuilder()
    with pytest.raises(IrlabError, match="inside `with ib.function"):
        ib.emit_ret(ib.r(0))
    with ib.function("main", num_inputs=1):
        ib.emit_goto(5)
        ib.emit_ret(ib.r(0))
    with pytest.raises(IrlabError, match="leaves the function"):
        ib.get()


def test_a_failed_function_body_leaves_the_builder_usable():
    ib = add_program("ok")
    with pytest.raises(IrlabError, match="dst must be a register"):
        with ib.function("broken", num_inputs=1):
            ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(0)], dst=ib.imm(1))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    assert "broken" not in ib.get().code
    a = rand(2)
    np.testing.assert_allclose(vm["ok"](a, a).numpy(), 2 * a.numpy())


def test_negative_immediate_and_scalars():
    ib = relax.ExecBuilder()
    with ib.function("func0", num_inputs=1):
        ib.emit_call("test.vm.add_scalar", args=[ib.imm(-3), ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    assert vm["func0"](1) == -2
    assert vm["func0"](-3) == -6


def test_constants_are_stored_once():
    ib = relax.ExecBuilder()
    with ib.function("func0", num_inputs=1):
        assert ib.convert_constant("str0") == ib.convert_constant("str0")
        s0 = ib.convert_constant(ShapeTuple([1, 2]))
        assert s0 == ib.convert_constant((1, 2))
        assert s0 != ib.convert_constant(ShapeTuple([1, 3]))
        y0 = ib.convert_constant(tvm.nd.array(np.array([1, 2, 3], "int32")))
        assert y0 == ib.convert_constant(tvm.nd.array(np.array([1, 2, 3], "int32")))
        assert y0 != ib.convert_constant(tvm.nd.array(np.array([1, 2, 3], "int64")))
        ib.emit_ret(ib.r(0))
    assert len(ib.get().constants) == 5


def test_registers_are_renumbered():
    ib0, ib1 = relax.ExecBuilder(), relax.ExecBuilder()
    for ib, (r1, r2) in ((ib0, (100, 50)), (ib1, (2, 3))):
        with ib.function("func0", num_inputs=2):
            ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(r1))
            ib.emit_call("test.vm.mul", args=[ib.r(1), ib.r(r1)], dst=ib.r(r2))
            ib.emit_ret(ib.r(r2))
    ex0, ex1 = ib0.get(), ib1.get()
    assert ex0.as_text() == ex1.as_text()
    assert ex0.func_table[ex0.func_map["func0"]].register_file_size == 4


def test_operands_device_and_scalars():
    ib = relax.ExecBuilder()
    with ib.function("func0", num_inputs=2):
        ib.emit_call("test.vm.add_scalar", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    with ib.function("func1", num_inputs=1):
        ib.emit_call("test.vm.get_device_id", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    assert vm["func0"](2, 3) == 5
    assert vm["func1"](tvm.cpu(3)) == 3


def test_shape_of_constant_tensor():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=0):
        ib.emit_call("vm.builtin.shape_of", args=[rand(32, 16)], dst=ib.r(0))
        ib.emit_ret(ib.r(0))
    res = relax.VirtualMachine(ib.get(), tvm.cpu())["main"]()
    assert isinstance(res, ShapeTuple) and res == (32, 16)


def test_storage_and_tensors_share_memory():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=0):
        ib.emit_call("vm.builtin.alloc_storage",
                     args=[ib.vm_state(), (48,), ib.convert_constant(0), "float32", "global"],
                     dst=ib.r(1))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(1), ib.imm(0), (4, 6), "float32"],
                     dst=ib.r(2))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(1), ib.imm(96), (24,), "float32"],
                     dst=ib.r(3))
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(2), ib.r(3)], dst=ib.r(4))
        ib.emit_ret(ib.r(4))
    first, second = relax.VirtualMachine(ib.get(), tvm.cpu())["main"]()
    assert first.device == tvm.cpu() and first.shape == (4, 6) and second.shape == (24,)
    assert first.is_aligned
    assert second.data_ptr - first.data_ptr == 96


def test_tensor_beyond_storage_raises():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=0):
        ib.emit_call("vm.builtin.alloc_storage",
                     args=[ib.vm_state(), (4,), 0, "float32", "global"], dst=ib.r(0))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(0), ib.imm(0), (2, 4), "float32"],
                     dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with pytest.raises(VMError, match="does not fit in a storage of 16 bytes"):
        relax.VirtualMachine(ib.get(), tvm.cpu())["main"]()


def test_goto():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=2):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_goto(2)
        ib.emit_call("test.vm.mul", args=[ib.r(2), ib.r(1)], dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    a, b = rand(4), rand(4)
    res = relax.VirtualMachine(ib.get(), tvm.cpu())["main"](a, b)
    np.testing.assert_allclose(res.numpy(), a.numpy() + b.numpy())


def test_if_both_branches():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=3):
        ib.emit_if(ib.r(0), 3)
        ib.emit_call("test.vm.add", args=[ib.r(1), ib.r(2)], dst=ib.r(3))
        ib.emit_goto(2)
        ib.emit_call("test.vm.mul", args=[ib.r(1), ib.r(2)], dst=ib.r(3))
        ib.emit_ret(ib.r(3))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    a, b = rand(4), rand(4)
    np.testing.assert_allclose(vm["main"](0, a, b).numpy(), a.numpy() * b.numpy())
    np.testing.assert_allclose(vm["main"](1, a, b).numpy(), a.numpy() + b.numpy())
    cond = tvm.nd.array(np.array(True))
    np.testing.assert_allclose(vm["main"](cond, a, b).numpy(), a.numpy() + b.numpy())


def test_closure_and_vm_function_calls():
    ib = relax.ExecBuilder()
    with ib.function("lifted", num_inputs=4):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(4))
        ib.emit_call("test.vm.add", args=[ib.r(2), ib.r(4)], dst=ib.r(5))
        ib.emit_call("test.vm.add", args=[ib.r(3), ib.r(5)], dst=ib.r(6))
        ib.emit_ret(ib.r(6))
    with ib.function("main", num_inputs=2):
        ib.emit_call("vm.builtin.make_closure", args=[ib.f("lifted"), ib.r(0), ib.r(1)],
                     dst=ib.r(2))
        ib.emit_ret(ib.r(2))
    with ib.function("direct", num_inputs=4):
        ib.emit_call("lifted", args=[ib.r(0), ib.r(1), ib.r(2), ib.r(3)], dst=ib.r(4))
        ib.emit_ret(ib.r(4))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    w, x, y, z = (rand(2, 3) for _ in range(4))
    expected = w.numpy() + x.numpy() + y.numpy() + z.numpy()
    np.testing.assert_allclose(vm.invoke_closure(vm["main"](w, x), y, z).numpy(), expected)
    np.testing.assert_allclose(vm["direct"](w, x, y, z).numpy(), expected)


def test_calling_vm_function_with_wrong_arity_is_rejected():
    ib = add_program("add")
    with ib.function("main", num_inputs=1):
        ib.emit_call("add", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with pytest.raises(IrlabError, match="add takes 2 arguments, got 1"):
        ib.get()


def test_set_input_invoke_stateful_get_outputs():
    vm = relax.VirtualMachine(add_program().get(), tvm.cpu())
    a, b = rand(3), rand(3)
    vm.set_input("func0", b=b, a=a)
    vm.invoke_stateful("func0")
    np.testing.assert_allclose(vm.get_outputs("func0").numpy(), a.numpy() + b.numpy())
    with pytest.raises(VMError, match="has no parameter 'c'"):
        vm.set_input("func0", a, c=b)
    with pytest.raises(VMError, match="set_input"):
        vm.invoke_stateful("missing")


def test_errors_name_what_is_wrong_and_vm_stays_usable():
    ib = add_program()
    with ib.function("bad", num_inputs=1):
        ib.emit_call("test.vm.fail", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    with pytest.raises(VMError, match=r"bad, instruction 0 \(call test.vm.fail\): "
                                      "ZeroDivisionError"):
        vm["bad"](1)
    with pytest.raises(VMError, match="func0 takes 2 arguments"):
        vm["func0"](rand(2))
    with pytest.raises(VMError, match="has no function 'nope'"):
        vm["nope"]
    a, b = rand(2), rand(2)
    np.testing.assert_allclose(vm["func0"](a, b).numpy(), a.numpy() + b.numpy())


def test_missing_packed_function_is_reported_at_load():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=1):
        ib.emit_call("no.such.function", args=[ib.r(0)], dst=ib.r(1))
        ib.emit_ret(ib.r(1))
    with pytest.raises(VMError, match="cannot find packed function 'no.such.function'"):
        relax.VirtualMachine(ib.get(), tvm.cpu())


def test_as_text_and_as_python_rebuild_the_same_program():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=3, param_names=["c", "x", "y"]):
        ib.emit_if(ib.r(0), 3)
        ib.emit_call("test.vm.add", args=[ib.r(1), ib.r(2)], dst=ib.r(3))
        ib.emit_goto(2)
        ib.emit_call("test.vm.mul", args=[ib.r(1), ib.r(2)], dst=ib.r(3))
        ib.emit_ret(ib.r(3))
    ex = ib.get()
    text = ex.as_text()
    assert "@main(%0 c, %1 x, %2 y)" in text
    assert "call  test.vm.add(%1, %2) -> %3" in text and "goto  +2" in text
    namespace = {"relax": relax}
    exec(ex.as_python(), namespace)
    assert namespace["ib"].get().as_text() == text


def test_profile_reports_each_call():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=2):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_call("test.vm.mul", args=[ib.r(2), ib.r(1)], dst=ib.r(3))
        ib.emit_ret(ib.r(3))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu(), profile=True)
    report = vm.profile("main", rand(5), rand(5))
    assert [(r.pc, r.callee, r.count) for r in report.rows] == [(0, "test.vm.add", 1),
                                                                  (1, "test.vm.mul", 1)]
    assert "test.vm.mul" in str(report) and "float64[5]" in str(report)
    assert report.csv().splitlines()[0].startswith("function,pc,callee")
    assert set(report.by_callee()) == {"test.vm.add", "test.vm.mul"}
    assert "Duration (us)" in str(report)
    assert [c["callee"] for c in json.loads(report.json())["calls"]] == ["test.vm.add",
                                                                           "test.vm.mul"]


def test_time_evaluator_runs_the_function():
    vm = relax.VirtualMachine(add_program().get(), tvm.cpu())
    vm.set_input("func0", rand(3), rand(3))
    result = vm.time_evaluator("func0", tvm.cpu(), number=2, repeat=2)()
    assert len(result.results) == 2


def test_instrument_sees_every_call_and_can_skip_one():
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=2):
        ib.emit_call("test.vm.add", args=[ib.r(0), ib.r(1)], dst=ib.r(2))
        ib.emit_call("test.vm.mul", args=[ib.r(2), ib.r(1)], dst=ib.r(3))
        ib.emit_ret(ib.r(2))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    seen = []

    def instrument(func, name, before_run, ret_value, *args):
        assert callable(func) and (ret_value is None) == before_run
        seen.append((name, before_run))
        if name == "test.vm.mul":
            return relax.VMInstrumentReturnKind.SKIP_RUN

    vm.set_instrument(instrument)
    a, b = rand(3), rand(3)
    np.testing.assert_allclose(vm["main"](a, b).numpy(), a.numpy() + b.numpy())
    assert seen == [("test.vm.add", True), ("test.vm.add", False), ("test.vm.mul", True)]
