"""The CPU AlterOpLayout hook of nn.dense (TVM's x86 ``_alter_dense_layout``): denses the packed
schedule runs become ``nn.contrib_dense_pack`` on a ``layout_transform(w, "NC", "NC{n}n")``
weight (n from ``packed_columns``, shared with the dense strategy), FoldConstant then packs
constant weights once, and the built kernels read them with no packing stage."""

import re

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.relay.frontend import from_onnx, onnx_models
from irlab.target import Target
from irlab.topi.x86.dense import dense_tile
from _alter_layout import (alter, build, calls, interpret, lowered_kernels,
                           primitive_functions, run)

PACK = re.compile(r"\bT_dense_pack\b")  # the per-call packing buffer of the dense schedule
SIZES = (48, 64, 32, 20)  # 64 and 32 units are packed (lanes | N); 20 units are not (16 or 8 lanes)


def _mlp(weights_as_constants, rng, batch=8, sizes=SIZES):
    """dense -> add -> relu, ..., dense -> add -> softmax (as the ONNX MLP after from_onnx)."""
    x = relay.var("x", shape=(batch, sizes[0]))
    arrays, free, h = {}, [], x
    for i, (fin, fout) in enumerate(zip(sizes, sizes[1:])):
        arrays[f"w{i}"] = rng.uniform(-1, 1, (fout, fin)).astype("float32")
        arrays[f"b{i}"] = rng.uniform(-1, 1, (fout,)).astype("float32")
        if weights_as_constants:
            w, b = relay.const(arrays[f"w{i}"]), relay.const(arrays[f"b{i}"])
        else:
            w, b = relay.var(f"w{i}", shape=(fout, fin)), relay.var(f"b{i}", shape=(fout,))
            free += [w, b]
        h = relay.add(relay.nn.dense(h, w), b)
        if i < len(sizes) - 2:
            h = relay.nn.relu(h)
    mod = irlab.IRModule.from_expr(relay.Function([x] + free, relay.nn.softmax(h)))
    inputs = {"x": rng.uniform(-1, 1, (batch, sizes[0])).astype("float32")}
    if not weights_as_constants:
        inputs.update(arrays)
    return relay.transform.InferType()(mod), inputs


def _expected_layout(batch, units):
    return f"NC{dense_tile(batch, units, Target('llvm'))[1]}n"


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_alter_gives_dense_pack_and_keeps_numerics(target):
    rng = np.random.default_rng(0)
    mod, inputs = _mlp(False, rng)
    after = relay.transform.InferType()(alter(mod, target))
    packs = calls(after["main"], "nn.contrib_dense_pack")
    assert [p.attrs.weight_layout for p in packs] == [
        _expected_layout(8, int(p.checked_type.shape[-1])) for p in packs]
    assert sorted(int(p.checked_type.shape[-1]) for p in packs) == [32, 64]
    denses = calls(after["main"], "nn.dense")
    assert [int(d.checked_type.shape[-1]) for d in denses] == [20]  # 20 units: unchanged
    transforms = calls(after["main"], "layout_transform")
    assert sorted(t.attrs.dst_layout for t in transforms) == sorted(
        p.attrs.weight_layout for p in packs)
    assert all(t.attrs.src_layout == "NC" for t in transforms)
    assert all(p.args[1] in transforms for p in packs)
    np.testing.assert_allclose(interpret(after, inputs), interpret(mod, inputs),
                               rtol=1e-5, atol=1e-5)


def test_no_target_keeps_dense():
    mod, _ = _mlp(False, np.random.default_rng(0))
    after = alter(mod, target=None)
    assert irlab.ir.structural_equal(after, mod)
    assert not calls(after["main"], "nn.contrib_dense_pack")


@pytest.mark.parametrize("dshape,wshape,kwargs", [
    ((2, 16), (32, 16), {}),                           # GEMV-sized batch: never packed
    ((8, 16), (20, 16), {}),                           # units not a multiple of the lanes
    ((2, 8, 16), (32, 16), {}),                        # N-D data (dense_pack takes 2-D)
    ((8, 16), (32, 16), {"out_dtype": "float64"}),     # float32 only
])
def test_denses_the_packed_schedule_does_not_run_stay(dshape, wshape, kwargs):
    x, w = relay.var("x", shape=dshape), relay.var("w", shape=wshape)
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(
        relay.Function([x, w], relay.nn.dense(x, w, **kwargs))))
    assert irlab.ir.structural_equal(alter(mod), mod)


def test_build_with_params_folds_the_packing():
    rng = np.random.default_rng(1)
    mod, inputs = _mlp(False, rng)
    params = {k: inputs.pop(k) for k in list(inputs) if k != "x"}
    want = interpret(mod, inputs, params)
    lib = build(mod, params, 3)
    main = lib.ir_mod["main"]
    assert not calls(main, "layout_transform")  # folded into the constants
    layouts = sorted(p.attrs.weight_layout for f in primitive_functions(main)
                     for p in calls(f, "nn.contrib_dense_pack"))
    assert layouts == sorted([_expected_layout(8, 64), _expected_layout(8, 32)])
    kernels = lowered_kernels(lib, "dense")
    names = sorted(kernels)
    assert names == ["tvmgen_default_fused_nn_contrib_dense_pack_add_nn_relu",
                     "tvmgen_default_fused_nn_contrib_dense_pack_add_nn_relu_1",
                     "tvmgen_default_fused_nn_dense_add"], names
    for name, text in kernels.items():
        assert not PACK.search(text), f"{name} still packs its weight"
    np.testing.assert_allclose(run(lib, inputs), want, rtol=1e-4, atol=1e-5)


def test_build_with_weights_as_inputs():
    rng = np.random.default_rng(2)
    mod, inputs = _mlp(False, rng)
    want = interpret(mod, inputs)
    lib = build(mod, None, 3)
    main = lib.ir_mod["main"]
    transforms = [c for f in primitive_functions(main) for c in calls(f, "layout_transform")]
    assert len(transforms) == 2  # the packing runs as kernels of their own
    assert not any(PACK.search(t) for t in lowered_kernels(lib, "dense").values())
    np.testing.assert_allclose(run(lib, inputs), want, rtol=1e-4, atol=1e-5)


def test_c_target_build_packs_once():
    rng = np.random.default_rng(7)
    mod, inputs = _mlp(True, rng)
    want = interpret(mod, inputs)
    lib = build(mod, None, 3, "c")
    packs = [c for f in primitive_functions(lib.ir_mod["main"])
             for c in calls(f, "nn.contrib_dense_pack")]
    assert len(packs) == 2
    assert not calls(lib.ir_mod["main"], "layout_transform")
    np.testing.assert_allclose(run(lib, inputs), want, rtol=1e-4, atol=1e-5)


def test_opt_level_2_packs_per_call():
    """Without AlterOpLayout (opt_level < 3) the dense schedule packs on every call."""
    rng = np.random.default_rng(3)
    mod, inputs = _mlp(True, rng)
    want = interpret(mod, inputs)
    lib = build(mod, None, 2)
    main = lib.ir_mod["main"]
    assert not any(calls(f, "nn.contrib_dense_pack") for f in primitive_functions(main))
    kernels = lowered_kernels(lib, "dense")
    assert sum(bool(PACK.search(t)) for t in kernels.values()) == 2  # the 64 and 32 units
    np.testing.assert_allclose(run(lib, inputs), want, rtol=1e-4, atol=1e-5)


def test_onnx_mlp_opt3():
    """The ONNX MLP (784-256-256-10, batch 32): all three layers run on packed constants (the
    10-unit classifier as one partial vector per row), results as the interpreter's."""
    model = onnx_models.mlp()
    mod, params = from_onnx(model, freeze_params=True)
    inputs = {"input": np.random.default_rng(4).uniform(-1, 1, (32, 784)).astype("float32")}
    want = interpret(mod, inputs, params)
    lib = build(mod, params, 3)
    kernels = lowered_kernels(lib, "dense")
    assert sum("contrib_dense_pack" in n for n in kernels) == 3, sorted(kernels)
    assert any("NC10n" in str(p.attrs.weight_layout) for f in primitive_functions(
        lib.ir_mod["main"]) for p in calls(f, "nn.contrib_dense_pack"))
    assert not any(PACK.search(t) for t in kernels.values())
    assert not calls(lib.ir_mod["main"], "layout_transform")
    np.testing.assert_allclose(run(lib, inputs), want, rtol=1e-4, atol=1e-5)


def test_kept_dense_keeps_its_span():
    """A dense the hook leaves (20 units) is the same call after the pass: the ONNX span stays."""
    mod, _ = from_onnx(onnx_models.mlp(batch=8, sizes=(64, 32, 20)), freeze_params=True)
    after = alter(relay.transform.InferType()(mod))
    kept = calls(after["main"], "nn.dense")
    assert len(kept) == 1 and int(kept[0].checked_type.shape[-1]) == 20
    before = [d for d in calls(mod["main"], "nn.dense") if d.checked_type.shape[-1] == 20]
    assert kept[0].span is not None and kept[0].span == before[0].span
