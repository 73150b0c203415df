"""Each pass lowering Relax to the VM, checked numerically: the module built and run before
and after the pass computes the same values, and the result is well formed."""

import numpy as np
import pytest

import irlab as tvm
from irlab import relax, te, tir
from irlab.ir.op import Op
from irlab.relax import transform
from irlab.relax.expr import Call, DataflowBlock, DataflowVar, Function
from irlab.script import relax as R
from irlab.script import tir as T


def te_dense(x, w):
    k = te.reduce_axis((0, w.shape[1]), name="k")
    return te.compute((x.shape[0], w.shape[0]),
                      lambda i, j: te.sum(x[i, k] * w[j, k], axis=k), name="dense")


def te_scale(x, factor):
    return te.compute(x.shape, lambda *i: x(*i) * tir.const(factor, x.dtype), name="scale")


def te_add(a, b):
    return te.compute(a.shape, lambda *i: a(*i) + b(*i), name="add")


def te_split_signs(x):
    pos = te.compute(x.shape, lambda *i: te.max(x(*i), tir.const(0, x.dtype)), name="pos")
    neg = te.compute(x.shape, lambda *i: te.min(x(*i), tir.const(0, x.dtype)), name="neg")
    return [pos, neg]


def symbolic_mlp():
    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, 8], "float32"))
    w = relax.Var("w", relax.TensorStructInfo([6, 8], "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            h = bb.emit_te(te_dense, x, w)
            out = bb.emit_output(bb.emit_te(te_scale, h, 0.5))
        bb.emit_func_output(out)
    return bb.get(), lambda batch, rng: [rng.standard_normal((batch, 8)).astype("float32"),
                                         rng.standard_normal((6, 8)).astype("float32")]


def static_diamond():
    """b = 2a, c = a + b, d = 2c: a stays alive across b; (b, d) is returned."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo([4, 8], "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit_te(te_scale, x, 3.0)
            b = bb.emit_te(te_scale, a, 2.0)
            c = bb.emit_te(te_add, a, b)
            d = bb.emit_te(te_scale, c, 2.0)
            e = bb.emit_te(te_scale, d, 1.5)
            f = bb.emit_te(te_add, e, d)
            out = bb.emit_output(relax.Tuple([b, f]))
        bb.emit_func_output(out)
    return bb.get(), lambda batch, rng: [rng.standard_normal((4, 8)).astype("float32")]


def tuple_outputs():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo([5], "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            parts = bb.emit_te(te_split_signs, x)
            pos, neg = bb.emit(relax.TupleGetItem(parts, 0)), bb.emit(relax.TupleGetItem(parts, 1))
            out = bb.emit_output(bb.emit_te(te_add, pos, neg))
        bb.emit_func_output(out)
    return bb.get(), lambda batch, rng: [rng.standard_normal(5).astype("float32")]


def pure_packed():
    tvm.register_func("test.lowering.plus_one", lambda a: tvm.nd.array(a.numpy() + 1),
                      override=True)
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo([3], "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(relax.op.call_pure_packed("test.lowering.plus_one", x,
                                                  sinfo_args=x.struct_info))
            out = bb.emit_output(bb.emit_te(te_scale, y, 2.0))
        bb.emit_func_output(out)
    return bb.get(), lambda batch, rng: [rng.standard_normal(3).astype("float32")]


def operator_mlp():
    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, 8], "float32"))
    w = relax.Var("w", relax.TensorStructInfo([8, 6], "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            h = bb.emit(relax.op.nn.relu(relax.op.matmul(x, w)))
            out = bb.emit_output(relax.op.multiply(h, relax.const(2.0, "float32")))
        bb.emit_func_output(out)
    return bb.get(), lambda batch, rng: [rng.standard_normal((batch, 8)).astype("float32"),
                                         rng.standard_normal((8, 6)).astype("float32")]


def bounded_chain():
    """A symbolic batch bounded by ``tir_var_upper_bound``: planned like a static shape."""
    bb = relax.BlockBuilder()
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo([n, 8], "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(relax.op.exp(x))
            b = bb.emit(relax.op.multiply(a, a))
            c = bb.emit(relax.op.add(b, x))
            out = bb.emit_output(relax.op.sum(c, axis=[1]))
        bb.emit_func_output(out)
    mod = bb.get()
    mod["main"] = mod["main"].with_attr("tir_var_upper_bound", {"n": 16})
    return mod, lambda batch, rng: [rng.standard_normal((batch, 8)).astype("float32")]


PROGRAMS = {"symbolic_mlp": symbolic_mlp, "bounded_chain": bounded_chain,
            "operator_mlp": operator_mlp, "static_diamond": static_diamond,
            "tuple_outputs": tuple_outputs, "pure_packed": pure_packed}
PASSES = ["ToNonDataflow", "RemovePurityChecking", "CallTIRRewrite", "StaticPlanBlockMemory",
          "LowerAllocTensor", "VMBuiltinLower", "VMShapeLower", "AttachGlobalSymbol"]


def run(mod, inputs, passes):
    """Build ``mod`` with the rest of the lowering (``passes``) and run ``main``."""
    pipeline = tvm.transform.Sequential(passes)
    vm = relax.VirtualMachine(relax.build(mod, "llvm", pipeline=pipeline), tvm.cpu())
    out = vm["main"](*[tvm.nd.array(a) for a in inputs])
    return [o.numpy() for o in out] if isinstance(out, tuple) else [out.numpy()]


def lowered_until(mod, name):
    """``mod`` after the default_build passes that come before ``name``, that pass, and the
    passes after it."""
    passes = relax.pipeline.pipeline_passes("default_build")
    for k, p in enumerate(passes):
        if p.info.name == name:
            return mod, p, passes[k + 1:]
        mod = p(mod)
    raise AssertionError(f"{name} is not in the pipeline")


@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize("pass_name", PASSES)
def test_pass_preserves_results(pass_name, program):
    mod, make_inputs = PROGRAMS[program]()
    before, lowering, rest = lowered_until(mod, pass_name)
    after = lowering(before)
    relax.analysis.verify_well_formed(after)
    rng = np.random.default_rng(0)
    for batch in (1, 5):
        inputs = make_inputs(batch, rng)
        expected = run(before, inputs, [lowering] + rest)
        for want, got in zip(expected, run(after, inputs, rest)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def calls_of(mod, op_name):
    found = []

    def walk(expr):
        if isinstance(expr, Call):
            if isinstance(expr.op, Op) and expr.op.name == op_name:
                found.append(expr)
            for arg in expr.args:
                walk(arg)
        for block in getattr(expr, "blocks", ()):
            for binding in block.bindings:
                walk(binding.value)

    for func in mod.functions.values():
        if isinstance(func, Function):
            walk(func.body)
    return found


def test_to_non_dataflow_leaves_no_dataflow():
    mod = transform.ToNonDataflow()(symbolic_mlp()[0])
    blocks = mod["main"].body.blocks
    assert blocks and not any(isinstance(b, DataflowBlock) for b in blocks)
    assert not any(isinstance(b.var, DataflowVar) for blk in blocks for b in blk.bindings)


def test_call_tir_rewrite_makes_allocations_explicit():
    mod = transform.CallTIRRewrite()(transform.ToNonDataflow()(tuple_outputs()[0]))
    assert not calls_of(mod, "relax.call_tir")
    assert len(calls_of(mod, "relax.builtin.alloc_tensor")) == 3  # pos, neg, sum


def test_static_plan_shares_storage_between_dead_tensors():
    mod = lowered_until(static_diamond()[0], "StaticPlanBlockMemory")[0]
    planned = transform.StaticPlanBlockMemory()(mod)
    assert not calls_of(planned, "relax.builtin.alloc_tensor")
    assert len(calls_of(planned, "relax.memory.alloc_tensor")) == 6
    # a, c, d, e die early and share; b and f escape (returned) and keep theirs
    assert len(calls_of(planned, "relax.memory.alloc_storage")) == 4


def test_symbolic_shapes_keep_their_own_allocations():
    mod = lowered_until(symbolic_mlp()[0], "StaticPlanBlockMemory")[0]
    planned = transform.StaticPlanBlockMemory()(mod)
    assert len(calls_of(planned, "relax.builtin.alloc_tensor")) == 2
    assert not calls_of(planned, "relax.memory.alloc_storage")


def test_upper_bounds_plan_symbolic_shapes():
    mod = lowered_until(bounded_chain()[0], "StaticPlanBlockMemory")[0]
    planned = transform.StaticPlanBlockMemory()(mod)
    assert not calls_of(planned, "relax.builtin.alloc_tensor")
    storages = calls_of(planned, "relax.memory.alloc_storage")
    assert [s.args[0].values[0].value for s in storages] == [16 * 8 * 4] * 2
    vm = relax.VirtualMachine(relax.build(bounded_chain()[0], "llvm"), tvm.cpu())
    with pytest.raises(tvm.errors.VMError, match="does not fit in a storage of 512 bytes"):
        vm["main"](np.zeros((17, 8), "float32"))


def test_memory_ops_are_lowered_to_the_vm_ones():
    mod = lowered_until(symbolic_mlp()[0], "LowerAllocTensor")[0]
    with pytest.raises(tvm.errors.DiagnosticError, match="R.builtin.alloc_tensor is left"):
        transform.VMBuiltinLower()(mod)
    lowered = transform.VMBuiltinLower()(transform.LowerAllocTensor()(mod))
    assert not calls_of(lowered, "relax.builtin.alloc_tensor")
    assert not calls_of(lowered, "relax.memory.alloc_storage")
    assert len(calls_of(lowered, "relax.vm.alloc_storage")) == 2
    assert len(calls_of(lowered, "relax.vm.alloc_tensor")) == 2


def test_vm_shape_lower_runs_once_and_attach_names_everything():
    mod = relax.get_pipeline("default_build")(symbolic_mlp()[0])
    assert transform.VMShapeLower()(mod)["main"] is mod["main"]
    for gv, func in mod.functions.items():
        assert func.attrs.get("global_symbol") == gv.name_hint


def test_remove_purity_checking_unwraps_pure_packed_calls():
    mod = transform.RemovePurityChecking()(transform.ToNonDataflow()(pure_packed()[0]))
    assert not calls_of(mod, "relax.call_pure_packed")
    assert mod["main"].attrs.get("relax.force_pure")


@pytest.fixture
def twice_packed():
    tvm.register_func("test.shape_same", lambda shape: shape, override=True)
    tvm.register_func("test.twice", lambda x, out: out.copyfrom(x.numpy() * 2), override=True)
    yield
    for name in ("test.shape_same", "test.twice"):
        tvm.runtime.registry.remove_global_func(name)


def test_dps_output_of_a_shape_computed_at_run_time(twice_packed):
    """``out_sinfo=R.Tensor(lv, ...)`` with ``lv`` a dataflow shape variable: ToNonDataflow
    substitutes it in struct info too, and CallTIRRewrite allocates with it (seed 001, D1)."""
    @R.function
    def f(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        with R.dataflow():
            s: R.Shape(ndim=1) = R.call_pure_packed("test.shape_same", R.shape([n]),
                                                    sinfo_args=R.Shape(ndim=1))
            y = R.call_dps_packed("test.twice", (x,), out_sinfo=R.Tensor(s, "float32"))
            R.output(y)
        return y

    mod = tvm.IRModule({"main": f})
    lowered = transform.CallTIRRewrite()(transform.ToNonDataflow()(mod))["main"]
    bindings = lowered.body.blocks[0].bindings
    alloc = next(b.value for b in bindings if getattr(b.value.op, "name", "") ==
                 "relax.builtin.alloc_tensor")
    assert alloc.args[0] is bindings[0].var  # the plain Var that replaced the DataflowVar
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    x = np.arange(5, dtype="float32")
    np.testing.assert_allclose(vm["f"](tvm.nd.array(x)).numpy(), x * 2)
    from irlab.relax.testing import evaluate  # the reference evaluator runs it too

    np.testing.assert_allclose(evaluate(mod, [x], "main"), x * 2)
