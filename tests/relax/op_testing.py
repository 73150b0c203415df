"""Helpers of the Relax op tests: build a one-op function, legalize it, run it."""

import numpy as np

import irlab as tvm
from irlab import relax, tir
from irlab.relax.testing import evaluate


def sym(name):
    return tir.Var(name, "int64")


def tensor(shape, dtype="float32"):
    return relax.TensorStructInfo(shape, dtype)


def build_op(make, param_sinfos):
    """A module whose main applies ``make(*params)`` (emitted, normalized)."""
    params = [relax.Var(f"x{i}", s) for i, s in enumerate(param_sinfos)]
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            out = bb.emit_output(make(*params))
        bb.emit_func_output(out)
    return bb.get()


def legalized(mod):
    """``LegalizeOps`` applied, checking no high-level op call remains."""
    new = relax.transform.LegalizeOps()(mod)
    relax.analysis.verify_well_formed(new)
    for block in new["main"].body.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op):
                assert value.op.name in ("relax.call_tir",), value.op.name
    return new


def check_numeric(make, param_sinfos, arrays, expected, rtol=1e-5, atol=1e-5):
    """``make`` legalized and run on ``arrays`` equals ``expected`` (numpy)."""
    mod = legalized(build_op(make, param_sinfos))
    got = evaluate(mod, arrays)
    if isinstance(expected, tuple):
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    else:
        assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    return mod


def out_sinfo(make, param_sinfos):
    """The struct info deduced for ``make(*params)``."""
    params = [relax.Var(f"x{i}", s) for i, s in enumerate(param_sinfos)]
    return relax.BlockBuilder().normalize(make(*params)).struct_info


def rand(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return rng.integers(-5, 5, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.standard_normal(shape).astype(dtype)


def dims_of(sinfo):
    return [d.value if isinstance(d, tir.IntImm) else d for d in sinfo.dims]


def check_batches(make, param_sinfos, arrays_for, reference, batches=(2, 5), rtol=1e-5,
                  atol=1e-5):
    """``make`` legalized once (its params may use the symbolic batch) and run at each batch
    size: ``arrays_for(batch)`` gives the inputs, ``reference(*arrays)`` the expected value."""
    mod = legalized(build_op(make, param_sinfos))
    for batch in batches:
        arrays = arrays_for(batch)
        expected = reference(*arrays)
        got = evaluate(mod, arrays)
        if isinstance(expected, tuple):
            for g, e in zip(got, expected):
                np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            assert got.shape == np.shape(expected), (batch, got.shape, np.shape(expected))
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    return mod
