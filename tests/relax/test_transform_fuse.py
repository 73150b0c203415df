"""FuseOps and FuseTIR: groups, fused PrimFuncs, and numerics before/after at several shapes."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax
from irlab.relax.testing import evaluate
from op_testing import rand, sym, tensor

R = relax.op


def _pipeline(mod):
    mod = relax.transform.LegalizeOps()(mod)
    mod = relax.transform.AnnotateTIROpPattern()(mod)
    fused = relax.transform.FuseOps()(mod)
    fused_tir = relax.transform.FuseTIR()(fused)
    for stage in (mod, fused, fused_tir):
        relax.analysis.verify_well_formed(stage)
    return mod, fused, fused_tir


def _calls(func):
    return [b.value for block in func.body.blocks for b in block.bindings
            if isinstance(b.value, relax.Call)]


def _mlp():
    n = sym("n")
    x = relax.Var("x", tensor([n, 8]))
    w1, b1 = relax.Var("w1", tensor([8, 6])), relax.Var("b1", tensor([6]))
    w2, b2 = relax.Var("w2", tensor([6, 4])), relax.Var("b2", tensor([4]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w1, b1, w2, b2]):
        with bb.dataflow():
            h = bb.emit(R.nn.relu(R.add(R.matmul(x, w1), b1)))
            out = bb.emit(R.nn.softmax(R.add(R.matmul(h, w2), b2)))
            gv = bb.emit_output(out)
        bb.emit_func_output(gv)
    return bb.get()


def _mlp_args(batch):
    return [rand((batch, 8), seed=1), rand((8, 6), seed=2), rand((6,), seed=3),
            rand((6, 4), seed=4), rand((4,), seed=5)]


def _mlp_ref(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_fuse_ops_groups_mlp():
    _, fused, fused_tir = _pipeline(_mlp())
    names = sorted(gv.name_hint for gv, f in fused.items()
                   if isinstance(f, relax.Function) and f.attrs is not None
                   and "Primitive" in f.attrs.keys())
    assert names == ["fused_matmul1_add1", "fused_matmul_add_relu"]
    main = fused_tir["main"]
    calls = _calls(main)
    assert [c.args[0].name_hint for c in calls] == ["fused_matmul_add_relu",
                                                    "fused_matmul1_add1", "softmax"]
    assert not any(isinstance(f, relax.Function) and f.attrs is not None
                   and "Primitive" in f.attrs.keys() for _, f in fused_tir.items())
    assert "relu" not in fused_tir  # unused PrimFuncs removed
    assert relax.analysis.well_formed(fused_tir)


@pytest.mark.parametrize("batch", [1, 7, 32])
def test_fuse_mlp_numeric_symbolic_batch(batch):
    legal, fused, fused_tir = _pipeline(_mlp())
    args = _mlp_args(batch)
    ref = _mlp_ref(*args)
    for mod in (legal, fused, fused_tir):
        np.testing.assert_allclose(evaluate(mod, args), ref, rtol=1e-4, atol=1e-5)


def test_diamond_fuses_through_its_post_dominator():
    """exp feeds add and multiply, which meet again: one group (TVM's partitioner)."""
    x = relax.Var("x", tensor([4, 4]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            e = bb.emit(R.exp(x))
            a = bb.emit(R.add(e, x))
            m = bb.emit(R.multiply(e, a))
            gv = bb.emit_output(m)
        bb.emit_func_output(gv)
    legal, fused, fused_tir = _pipeline(bb.get())
    calls = _calls(fused["main"])
    assert [c.op.name_hint for c in calls] == ["fused_exp_add_multiply"]
    arg = rand((4, 4), seed=6)
    ref = np.exp(arg) * (np.exp(arg) + arg)
    np.testing.assert_allclose(evaluate(fused_tir, [arg]), ref, rtol=1e-5)


def test_value_used_after_its_block_ends_a_group():
    x = relax.Var("x", tensor([4, 4]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            e = bb.emit_output(R.exp(x))
            gv = bb.emit_output(R.add(e, x))
        bb.emit_func_output(relax.Tuple([e, gv]))
    legal, fused, fused_tir = _pipeline(bb.get())
    assert len(_calls(fused["main"])) == 2
    arg = rand((4, 4), seed=7)
    got = evaluate(fused_tir, [arg])
    np.testing.assert_allclose(got[1], np.exp(arg) + arg, rtol=1e-5)


@pytest.mark.parametrize("batch", [1, 3])
def test_fuse_conv_block_symbolic_batch(batch):
    n = sym("n")
    x = relax.Var("x", tensor([n, 3, 8, 8]))
    w = relax.Var("w", tensor([4, 3, 3, 3]))
    stats = [relax.Var(k, tensor([4])) for k in ("gamma", "beta", "mean", "var")]
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w] + stats):
        with bb.dataflow():
            conv = bb.emit(R.nn.conv2d(x, w, padding=1))
            bn = bb.emit(relax.TupleGetItem(R.nn.batch_norm(conv, *stats), 0))
            act = bb.emit(R.nn.relu(bn))
            pool = bb.emit(R.nn.max_pool2d(act, 2, 2))
            flat = bb.emit(R.reshape(pool, (n, 64)))
            gv = bb.emit_output(flat)
        bb.emit_func_output(gv)
    legal, fused, fused_tir = _pipeline(bb.get())
    args = [rand((batch, 3, 8, 8), seed=7), rand((4, 3, 3, 3), seed=8), rand((4,), seed=9),
            rand((4,), seed=10), rand((4,), seed=11), np.abs(rand((4,), seed=12)) + 0.5]
    expected = evaluate(legal, args)
    assert expected.shape == (batch, 64)
    np.testing.assert_allclose(evaluate(fused_tir, args), expected, rtol=1e-4, atol=1e-5)
    assert len(_calls(fused_tir["main"])) < len(_calls(legal["main"]))


def test_batch_norm_relu_fuse_through_tuple_get_item():
    n = sym("n")
    x = relax.Var("x", tensor([n, 2, 6, 6]))
    w = relax.Var("w", tensor([3, 2, 3, 3]))
    stats = [relax.Var(k, tensor([3])) for k in ("gamma", "beta", "mean", "var")]
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w] + stats):
        with bb.dataflow():
            conv = bb.emit(R.nn.conv2d(x, w, padding=1))
            bn = bb.emit(R.nn.batch_norm(conv, *stats))
            first = bb.emit(relax.TupleGetItem(bn, 0))
            gv = bb.emit_output(R.nn.relu(first))
        bb.emit_func_output(gv)
    legal, fused, fused_tir = _pipeline(bb.get())
    calls = _calls(fused_tir["main"])
    # batch_norm reads conv's output elementwise (a broadcast op reading a value of its first
    # output's shape) and its tuple's field is elementwise too: one kernel
    assert [c.args[0].name_hint for c in calls] == ["fused_conv2d_batch_norm_relu"]
    for batch in (1, 2):
        args = [rand((batch, 2, 6, 6), seed=13), rand((3, 2, 3, 3), seed=14),
                rand((3,), seed=15), rand((3,), seed=16), rand((3,), seed=17),
                np.abs(rand((3,), seed=18)) + 0.5]
        np.testing.assert_allclose(evaluate(fused_tir, args), evaluate(legal, args),
                                   rtol=1e-4, atol=1e-5)


def test_constants_in_a_group_become_parameters_of_the_fused_prim_func():
    n = sym("n")
    x = relax.Var("x", tensor([n, 4]))
    w = rand((4, 4), seed=19)
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(R.nn.relu(R.add(R.matmul(x, relax.const(w)), relax.const(1.0))))
            gv = bb.emit_output(h)
        bb.emit_func_output(gv)
    legal, fused, fused_tir = _pipeline(bb.get())
    (call,) = _calls(fused_tir["main"])
    assert sum(isinstance(a, relax.Constant) for a in call.args[1].fields) == 2
    data = rand((3, 4), seed=20)
    np.testing.assert_allclose(evaluate(fused_tir, [data]), np.maximum(data @ w + 1, 0),
                               rtol=1e-5, atol=1e-5)


def test_same_prim_func_twice_in_a_group():
    n = sym("n")
    x = relax.Var("x", tensor([n, 3]))
    y = relax.Var("y", tensor([n, 3]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            a = bb.emit(R.add(x, y))
            b = bb.emit(R.add(a, y))
            gv = bb.emit_output(R.add(b, x))
        bb.emit_func_output(gv)
    legal, fused, fused_tir = _pipeline(bb.get())
    (call,) = _calls(fused_tir["main"])
    prim = fused_tir[call.args[0].name_hint]
    text = str(prim)
    assert "T_add_1" in text and "T_add_2" in text  # block names made unique
    tvm.build(prim.with_attr("global_symbol", "f"), target="llvm")  # verified and compiled
    for batch in (1, 4):
        u, v = rand((batch, 3), seed=21), rand((batch, 3), seed=22)
        np.testing.assert_allclose(evaluate(fused_tir, [u, v]), (u + v) + v + u, rtol=1e-6)


def _mixed_index_module():
    from irlab.script import ir as I
    from irlab.script import relax as RS
    from irlab.script import tir as T

    @I.ir_module
    class Mixed:
        @T.prim_func
        def scale(x: T.handle, y: T.handle):  # written against Relax shapes: int64
            n = T.int64()
            X = T.match_buffer(x, (n, T.int64(4)), "float32")
            Y = T.match_buffer(y, (n, T.int64(4)), "float32")
            for i, j in T.grid(n, T.int64(4)):
                with T.block("Y"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    Y[vi, vj] = X[vi, vj] * T.float32(3)

        @RS.function
        def main(x: RS.Tensor(("n", 4), "float32"), b: RS.Tensor((4,), "float32")):
            n = T.int64()
            cls = Mixed
            with RS.dataflow():
                lv = RS.add(x, b)  # legalized by TOPI: int32
                lv1 = RS.call_tir(cls.scale, (lv,), out_sinfo=RS.Tensor((n, 4), "float32"))
                gv = RS.nn.relu(lv1)
                RS.output(gv)
            return gv

    return Mixed


def test_fuse_tir_unifies_int64_and_int32_indices():
    """A hand-written int64 PrimFunc between two TOPI (int32) kernels: one fused PrimFunc,
    all int32, that builds and computes as before fusion at several batches."""
    mod = _mixed_index_module()
    fused = relax.get_pipeline()(mod)
    (call,) = _calls(fused["main"])
    prim = fused[call.args[0].name_hint]
    assert call.args[0].name_hint == "fused_add_scale_relu"
    assert "int64" not in prim.script()
    vm = relax.VirtualMachine(relax.build(fused, "llvm"), tvm.cpu())
    for batch in (1, 5):
        x, b = rand((batch, 4), seed=23), rand((4,), seed=24)
        expected = np.maximum((x + b) * 3, 0)
        np.testing.assert_allclose(evaluate(fused, [x, b]), expected, rtol=1e-6)
        np.testing.assert_allclose(vm["main"](tvm.nd.array(x), tvm.nd.array(b)).numpy(),
                                   expected, rtol=1e-6)


def test_int64_kernel_with_int64_data_stays_unfused():
    """int64 indices over int64 data cannot be narrowed (loads and indices look alike):
    FuseOps leaves such a kernel alone instead of making a group FuseTIR would refuse."""
    from irlab.script import ir as I
    from irlab.script import relax as RS
    from irlab.script import tir as T

    @I.ir_module
    class Wide:
        @T.prim_func
        def inc(x: T.handle, y: T.handle):
            n = T.int64()
            X = T.match_buffer(x, (n,), "int64")
            Y = T.match_buffer(y, (n,), "int64")
            for i in range(n):
                with T.block("Y"):
                    vi = T.axis.spatial(n, i)
                    Y[vi] = X[vi] + T.int64(1)

        @RS.function
        def main(x: RS.Tensor(("n",), "int64")):
            n = T.int64()
            cls = Wide
            with RS.dataflow():
                lv = RS.add(x, x)
                lv1 = RS.call_tir(cls.inc, (lv,), out_sinfo=RS.Tensor((n,), "int64"))
                gv = RS.subtract(lv1, x)
                RS.output(gv)
            return gv

    fused = relax.get_pipeline()(Wide)
    assert [c.args[0].name_hint for c in _calls(fused["main"])] == ["add", "inc", "subtract"]
    vm = relax.VirtualMachine(relax.build(fused, "llvm"), tvm.cpu())
    data = np.arange(-3, 4, dtype="int64") * (2 ** 33)  # values beyond int32
    np.testing.assert_array_equal(vm["main"](tvm.nd.array(data)).numpy(), data + 1)


def _conv_batch_norm(returns_tuple):
    n = sym("n")
    x = relax.Var("x", tensor([n, 2, 6, 6]))
    w = relax.Var("w", tensor([3, 2, 3, 3]))
    stats = [relax.Var(k, tensor([3])) for k in ("gamma", "beta", "mean", "var")]
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w] + stats):
        with bb.dataflow():
            conv = bb.emit(R.nn.conv2d(x, w, padding=1))
            if returns_tuple:
                out = bb.emit_output(R.nn.batch_norm(conv, *stats))
            else:  # the tuple's fields leave the block through two different uses
                bn = bb.emit(R.nn.batch_norm(conv, *stats))
                out = bb.emit_output(relax.Tuple([R.nn.relu(relax.TupleGetItem(bn, 0)),
                                                  relax.TupleGetItem(bn, 1)]))
        bb.emit_func_output(out)
    return bb.get()


def _conv_batch_norm_args(batch):
    return [rand((batch, 2, 6, 6), seed=31), rand((3, 2, 3, 3), seed=32), rand((3,), seed=33),
            rand((3,), seed=34), rand((3,), seed=35), np.abs(rand((3,), seed=36)) + 0.5]


def test_group_ending_in_a_tuple_fuses_into_a_prim_func_with_several_outputs():
    """conv2d + batch_norm, whose tuple is the function's result: one call_tir of a PrimFunc
    writing the three fields, equal to the unfused program (reference evaluator and VM)."""
    legal, fused, fused_tir = _pipeline(_conv_batch_norm(returns_tuple=True))
    (call,) = _calls(fused_tir["main"])
    assert call.args[0].name_hint == "fused_conv2d_batch_norm"
    assert isinstance(call.struct_info, relax.TupleStructInfo)
    prim = fused_tir["fused_conv2d_batch_norm"]
    assert len(prim.params) == 6 + 3  # x, w, 4 statistics; an output buffer per field
    vm = relax.VirtualMachine(relax.build(fused_tir, "llvm"), tvm.cpu())
    for batch in (1, 3):
        args = _conv_batch_norm_args(batch)
        expected = evaluate(legal, args)
        got = vm["main"](*[tvm.nd.array(a) for a in args])
        for want, ref, out in zip(expected, evaluate(fused_tir, args), got):
            np.testing.assert_allclose(ref, want, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)


def test_tuple_fields_used_apart_still_compute_the_same():
    """bn[0] through relu and bn[1] returned as is: the fields go two ways, so the group ends
    in the tuple and its consumers stay outside; numerics unchanged."""
    legal, fused, fused_tir = _pipeline(_conv_batch_norm(returns_tuple=False))
    names = [c.args[0].name_hint for c in _calls(fused_tir["main"])
             if c.op.name == "relax.call_tir"]
    assert names[0] == "fused_conv2d_batch_norm"
    vm = relax.VirtualMachine(relax.build(fused_tir, "llvm"), tvm.cpu())
    args = _conv_batch_norm_args(2)
    expected = evaluate(legal, args)
    got = vm["main"](*[tvm.nd.array(a) for a in args])
    for want, out in zip(expected, got):
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
