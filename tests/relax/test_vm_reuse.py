"""The Relax VM keeps planned storage across calls (``relax_vm.resolve``) without ever
overwriting a tensor someone still holds, and its fast paths raise the same errors."""

import threading

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, te, tir
from irlab.errors import IrlabError, VMError

SEEN: list = []  # data pointers test.vm_reuse.fill wrote to
KEPT: list = []  # tensors test.vm_reuse.fill_and_keep kept


@pytest.fixture(autouse=True, scope="module")
def fill_functions():
    def fill(x, out):
        SEEN.append(out.data_ptr)
        np.copyto(np.asarray(out), np.asarray(x) + 1)

    def fill_and_keep(x, out):
        fill(x, out)
        KEPT.append(out)

    tvm.register_func("test.vm_reuse.fill", fill, override=True)
    tvm.register_func("test.vm_reuse.fill_and_keep", fill_and_keep, override=True)
    yield
    tvm.runtime.remove_global_func("test.vm_reuse.fill")
    tvm.runtime.remove_global_func("test.vm_reuse.fill_and_keep")


def planned_program(fill="test.vm_reuse.fill", returned=2):
    """out = x + 1 written by ``fill`` into a tensor of planned storage; returns register
    ``returned`` (2: that tensor, 3: a tuple of it and a second view of the storage)."""
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=1, param_names=["x"]):
        ib.emit_call("vm.builtin.alloc_storage",
                     args=[ib.vm_state(), (32,), ib.convert_constant(0), "float32", "global"],
                     dst=ib.r(1))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(1), ib.imm(0), (4,), "float32"],
                     dst=ib.r(2))
        ib.emit_call(fill, args=[ib.r(0), ib.r(2)], dst=ib.void_arg())
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(1), ib.imm(64), (2,), "float32"],
                     dst=ib.r(4))
        ib.emit_call("vm.builtin.make_tuple", args=[ib.r(2), ib.r(4)], dst=ib.r(3))
        ib.emit_ret(ib.r(returned))
    return relax.VirtualMachine(ib.get(), tvm.cpu())


def vector(*values):
    return tvm.nd.array(np.array(values, "float32"))


def test_planned_storage_is_reused_and_a_returned_tensor_is_the_callers():
    vm = planned_program()
    SEEN.clear()
    first = vm["main"](vector(1, 2, 3, 4))
    second = vm["main"](vector(5, 6, 7, 8))
    assert SEEN[0] == SEEN[1]  # the same planned buffer served both calls
    np.testing.assert_array_equal(first.numpy(), [2, 3, 4, 5])  # not overwritten
    np.testing.assert_array_equal(second.numpy(), [6, 7, 8, 9])
    assert first.is_aligned and second.data_ptr != SEEN[1]


def test_returned_views_of_one_storage_still_alias_each_other():
    vm = planned_program(returned=3)
    a, b = vm["main"](vector(1, 2, 3, 4))
    c, d = vm["main"](vector(5, 6, 7, 8))
    assert b.data_ptr - a.data_ptr == 64 and d.data_ptr - c.data_ptr == 64
    assert a.is_aligned
    np.testing.assert_array_equal(a.numpy(), [2, 3, 4, 5])
    np.testing.assert_array_equal(c.numpy(), [6, 7, 8, 9])


def test_a_buffer_someone_keeps_is_never_reused():
    vm = planned_program(fill="test.vm_reuse.fill_and_keep")
    SEEN.clear()
    KEPT.clear()
    vm["main"](vector(1, 2, 3, 4))
    vm["main"](vector(5, 6, 7, 8))
    assert SEEN[0] != SEEN[1]  # the kept buffer was left to its holder
    np.testing.assert_array_equal(KEPT[0].numpy(), [2, 3, 4, 5])
    np.testing.assert_array_equal(KEPT[1].numpy(), [6, 7, 8, 9])


def test_a_failed_call_leaves_the_vm_usable():
    vm = planned_program()
    vm["main"](vector(1, 2, 3, 4))
    with pytest.raises(VMError, match=r"main, instruction 2 \(call test.vm_reuse.fill\)"):
        vm["main"](vector(1, 2, 3))  # numpy cannot broadcast 3 values into 4
    np.testing.assert_array_equal(vm["main"](vector(0, 0, 0, 0)).numpy(), [1, 1, 1, 1])


def dense_relu(x, w):
    k = te.reduce_axis((0, w.shape[1]), name="k")
    y = te.compute((x.shape[0], w.shape[0]), lambda i, j: te.sum(x[i, k] * w[j, k], axis=k),
                   name="dense")
    return te.compute(y.shape, lambda i, j: te.max(y[i, j], tir.const(0, "float32")),
                      name="relu")


def mlp(batch):
    """Two dense+relu layers; ``batch`` an int or a symbolic name."""
    n = tir.Var(batch, "int64") if isinstance(batch, str) else batch
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo([n, 8], "float32"))
    w0 = relax.Var("w0", relax.TensorStructInfo([16, 8], "float32"))
    w1 = relax.Var("w1", relax.TensorStructInfo([4, 16], "float32"))
    with bb.function("main", [x, w0, w1]):
        with bb.dataflow():
            h = bb.emit_te(dense_relu, x, w0)
            out = bb.emit_output(bb.emit_te(dense_relu, h, w1))
        bb.emit_func_output(out)
    return relax.build(bb.get(), "llvm")


def reference(x, w0, w1):
    return np.maximum(np.maximum(x @ w0.T, 0) @ w1.T, 0)


@pytest.fixture(scope="module")
def static_mlp():
    return mlp(6)


@pytest.fixture(scope="module")
def weights():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype("float32") for s in ((16, 8), (4, 16))]


def test_repeated_calls_keep_every_output(static_mlp, weights):
    vm = relax.VirtualMachine(static_mlp, tvm.cpu())
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((6, 8)).astype("float32") for _ in range(4)]
    w = [tvm.nd.array(a) for a in weights]
    outputs = [vm["main"](tvm.nd.array(x), *w) for x in inputs]
    for x, out in zip(inputs, outputs):
        np.testing.assert_allclose(out.numpy(), reference(x, *weights), rtol=1e-5, atol=1e-5)


def test_shape_checks_still_raise_after_the_first_match(static_mlp, weights):
    vm = relax.VirtualMachine(static_mlp, tvm.cpu())
    w = [tvm.nd.array(a) for a in weights]
    vm["main"](tvm.nd.array(np.zeros((6, 8), "float32")), *w)
    with pytest.raises(VMError, match=r"shape\[0\] is 5, expected 6"):
        vm["main"](tvm.nd.array(np.zeros((5, 8), "float32")), *w)
    with pytest.raises(IrlabError, match="dtype float32"):
        vm["main"](tvm.nd.array(np.zeros((6, 8), "float64")), *w)
    with pytest.raises(IrlabError, match=r"w1.*shape\[1\] is 15, expected 16"):
        vm["main"](tvm.nd.array(np.zeros((6, 8), "float32")), w[0],
                   tvm.nd.array(np.zeros((4, 15), "float32")))
    out = vm["main"](tvm.nd.array(np.ones((6, 8), "float32")), *w)
    np.testing.assert_allclose(out.numpy(), reference(np.ones((6, 8), "float32"), *weights),
                               rtol=1e-5, atol=1e-5)


def test_symbolic_batch_checks_name_the_dimension_after_warm_up(weights):
    ex = mlp("n")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    w = [tvm.nd.array(a) for a in weights]
    for batch in (3, 1, 7):
        x = np.full((batch, 8), 0.5, "float32")
        np.testing.assert_allclose(vm["main"](tvm.nd.array(x), *w).numpy(),
                                   reference(x, *weights), rtol=1e-5, atol=1e-5)
    with pytest.raises(VMError, match=r"shape\[1\] is 9, expected 8"):
        vm["main"](tvm.nd.array(np.zeros((3, 9), "float32")), *w)


def test_threads_share_one_vm(static_mlp, weights):
    vm = relax.VirtualMachine(static_mlp, tvm.cpu())
    w = [tvm.nd.array(a) for a in weights]
    failures = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(20):
            x = rng.standard_normal((6, 8)).astype("float32")
            out = vm["main"](tvm.nd.array(x), *w).numpy()
            if not np.allclose(out, reference(x, *weights), rtol=1e-5, atol=1e-5):
                failures.append(seed)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_profile_sees_every_instruction_after_fast_calls(static_mlp, weights):
    vm = relax.VirtualMachine(static_mlp, tvm.cpu())
    args = [tvm.nd.array(np.zeros((6, 8), "float32"))] + [tvm.nd.array(a) for a in weights]
    vm["main"](*args)
    callees = [row.callee for row in vm.profile("main", *args).rows]
    assert callees.count("vm.builtin.alloc_storage") >= 1 and "vm.builtin.match_shape" in callees


def dynamic_program():
    """out = x + 1 into storage sized at run time (x's shape); returns out and x + 1 again
    (a second, dropped storage)."""
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=1, param_names=["x"]):
        ib.emit_call("vm.builtin.shape_of", args=[ib.r(0)], dst=ib.r(1))
        for k, storage in ((0, 2), (1, 4)):
            ib.emit_call("vm.builtin.alloc_storage",
                         args=[ib.vm_state(), ib.r(1), ib.convert_constant(0), "float32",
                               "global"], dst=ib.r(storage))
            ib.emit_call("vm.builtin.alloc_tensor",
                         args=[ib.r(storage), ib.imm(0), ib.r(1), "float32"],
                         dst=ib.r(storage + 1))
            ib.emit_call("test.vm_reuse.fill", args=[ib.r(0), ib.r(storage + 1)],
                         dst=ib.void_arg())
        ib.emit_ret(ib.r(3))
    return relax.VirtualMachine(ib.get(), tvm.cpu())


def test_storage_of_run_time_size_is_reused_unless_held():
    vm = dynamic_program()
    SEEN.clear()
    outputs = [vm["main"](vector(k, k)) for k in range(3)]
    vm["main"](vector(1, 2, 3))  # another size: a new storage
    # the returned storage (first fill) is new every call; the dropped one serves again
    assert len({SEEN[0], SEEN[2], SEEN[4]}) == 3 and SEEN[1] == SEEN[3] == SEEN[5]
    assert SEEN[7] != SEEN[5]
    for k, out in enumerate(outputs):
        np.testing.assert_array_equal(out.numpy(), [k + 1, k + 1])


def test_a_function_with_branches_keeps_its_planned_storage_too():
    """if c: out = x + 1 in planned storage, else: out = x; the storage serves every call."""
    ib = relax.ExecBuilder()
    with ib.function("main", num_inputs=2, param_names=["c", "x"]):
        ib.emit_if(ib.r(0), 4)
        ib.emit_call("vm.builtin.alloc_storage",
                     args=[ib.vm_state(), (16,), ib.convert_constant(0), "float32", "global"],
                     dst=ib.r(2))
        ib.emit_call("vm.builtin.alloc_tensor", args=[ib.r(2), ib.imm(0), (4,), "float32"],
                     dst=ib.r(3))
        ib.emit_goto(2)
        ib.emit_call("vm.builtin.copy", args=[ib.r(1)], dst=ib.r(3))
        ib.emit_call("test.vm_reuse.fill", args=[ib.r(1), ib.r(3)], dst=ib.void_arg())
        ib.emit_ret(ib.r(3))
    vm = relax.VirtualMachine(ib.get(), tvm.cpu())
    SEEN.clear()
    x = vector(1, 2, 3, 4)
    first = vm["main"](True, x)
    second = vm["main"](True, vector(5, 6, 7, 8))
    assert SEEN[0] == SEEN[1]
    np.testing.assert_array_equal(first.numpy(), [2, 3, 4, 5])
    np.testing.assert_array_equal(second.numpy(), [6, 7, 8, 9])
    assert vm["main"](False, x) is x and SEEN[2] == x.data_ptr
