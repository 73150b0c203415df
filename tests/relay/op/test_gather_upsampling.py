"""nn.upsampling and gather_nd: relations, numpy references on known answers, and the
compiled (llvm) kernels against the references, fused with their neighbours."""

import numpy as np
import pytest

import irlab
from irlab import relay
from irlab.contrib import graph_executor
from irlab.ir.op import Op, OpPattern
from irlab.relay.transform import InferType


def run_both(func, *inputs):
    """(interpreter result, compiled result) of ``func`` on ``inputs``."""
    mod = irlab.IRModule.from_expr(func)
    ref = relay.create_executor("debug", mod=mod).evaluate()(*inputs).numpy()
    module = graph_executor.GraphModule(relay.build(mod, "llvm -mcpu=haswell")["default"](
        irlab.cpu()))
    for param, value in zip(func.params, inputs):
        module.set_input(param.name_hint, value)
    module.run()
    return ref, module.get_output(0).numpy()


def test_nearest_upsampling_repeats_pixels_and_fuses_with_concat():
    x = relay.var("x", shape=(1, 2, 3, 4))
    up = relay.nn.upsampling(x, scale_h=2, scale_w=3)
    assert Op.get("nn.upsampling").pattern == OpPattern.INJECTIVE
    data = np.random.default_rng(0).random((1, 2, 3, 4), dtype=np.float32)
    ref, out = run_both(relay.Function([x], relay.concatenate([up, up], axis=1)), data)
    np.testing.assert_array_equal(ref[:, :2], data.repeat(2, axis=2).repeat(3, axis=3))
    np.testing.assert_allclose(out, ref)


@pytest.mark.parametrize("align_corners", [False, True])
def test_bilinear_upsampling_compiles_to_the_reference(align_corners):
    x = relay.var("x", shape=(1, 1, 2, 2))
    func = relay.Function([x], relay.nn.upsampling(x, 2, 2, method="bilinear",
                                                   align_corners=align_corners))
    data = np.array([[[[0, 3], [6, 9]]]], dtype=np.float32)
    ref, out = run_both(func, data)
    if align_corners:  # corners stay, the rest interpolates linearly
        np.testing.assert_allclose(ref[0, 0, 0], [0, 1, 2, 3], atol=1e-6)
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_gather_nd_picks_index_tuples():
    x = relay.var("x", shape=(3, 4, 5))
    i = relay.var("i", shape=(2, 2, 3), dtype="int64")
    rng = np.random.default_rng(1)
    data = rng.random((3, 4, 5), dtype=np.float32)
    idx = rng.integers(0, 3, size=(2, 2, 3))
    ref, out = run_both(relay.Function([x, i], relay.gather_nd(x, i)), data, idx)
    np.testing.assert_array_equal(ref, data[tuple(idx)])
    np.testing.assert_array_equal(out, ref)


def test_gather_nd_with_batch_axes():
    x = relay.var("x", shape=(3, 4, 5))
    i = relay.var("i", shape=(1, 3, 2), dtype="int32")
    data = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    idx = np.array([[[0, 1], [2, 3], [3, 0]]], dtype="int32")
    ref, out = run_both(relay.Function([x, i], relay.gather_nd(x, i, batch_dims=1)), data, idx)
    expected = np.stack([data[b, idx[0, b]] for b in range(3)])
    np.testing.assert_array_equal(ref, expected)
    np.testing.assert_array_equal(out, ref)


def test_gather_nd_rejects_too_many_index_axes():
    x = relay.var("x", shape=(3, 4))
    i = relay.var("i", shape=(3, 2), dtype="int32")
    with pytest.raises(Exception, match="exceed data's rank"):
        InferType()(irlab.IRModule.from_expr(relay.gather_nd(x, i)))


def test_linked_constant_inside_a_fused_function_runs():
    """FuseOps with link_params keeps small constants inside the kernel; LowerTE embeds them."""
    x = relay.var("x", shape=(10, 1))
    concat = relay.concatenate([x, x], axis=-1)
    out = relay.gather_nd(concat, relay.const([[0, 1, 9], [1, 0, 1]], dtype="int64"))
    data = np.arange(10, dtype=np.float32).reshape(10, 1)
    with irlab.transform.PassContext(opt_level=3,
                                     config={"relay.FuseOps.link_params": True}):
        ref, got = run_both(relay.Function([x], out), data)
    np.testing.assert_array_equal(ref, [0, 1, 9])
    np.testing.assert_array_equal(got, ref)


def test_a_constant_too_large_to_link_is_refused_clearly(monkeypatch):
    from irlab.relay.backend import te_compiler

    monkeypatch.setattr(te_compiler, "LINKED_CONSTANT_LIMIT", 2)
    x = relay.var("x", shape=(10, 1))
    out = relay.gather_nd(x, relay.const([[0, 1, 9], [0, 0, 0]], dtype="int64"))
    with irlab.transform.PassContext(opt_level=3, config={"relay.FuseOps.link_params": True}):
        with pytest.raises(irlab.errors.IrlabError, match="at most 2 elements"):
            relay.build(irlab.IRModule.from_expr(relay.Function([x], out)), "llvm")
