"""Test helpers shared by the pass, schedule and codegen tests: numerical equivalence of two
programs through the reference interpreter, and before/expected structural checks of passes."""

from __future__ import annotations

import numpy as np

from irlab.ir.module import IRModule
from irlab.ir.structural import assert_structural_equal
from irlab.ir.type import TensorType, TupleType
from irlab.runtime.dtype import to_numpy_dtype


def _as_module(x) -> IRModule:
    return x if isinstance(x, IRModule) else IRModule.from_expr(x)


def random_value(ty, rng):
    """A random numpy value of a Relay type (floats ~ N(0, 1), ints small, bools random)."""
    if isinstance(ty, TupleType):
        return tuple(random_value(f, rng) for f in ty.fields)
    if not isinstance(ty, TensorType):
        raise TypeError(f"cannot make a random value of type {ty}")
    dtype = to_numpy_dtype(ty.dtype)
    if dtype.kind == "f":
        return rng.standard_normal(ty.shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, ty.shape).astype(bool)
    return rng.integers(-5, 6 if dtype.kind == "i" else 11, ty.shape).astype(dtype)


def random_inputs(mod, seed=0, skip=()):
    """Random inputs for every parameter of ``@main`` except those named in ``skip``: a dict
    by name, or a list in parameter order when names repeat (random programs)."""
    from irlab.relay.transform import InferType

    mod = InferType()(_as_module(mod))
    rng = np.random.default_rng(seed)
    params = [p for p in mod["main"].params if p.name_hint not in skip]
    values = [random_value(p.checked_type, rng) for p in params]
    names = [p.name_hint for p in params]
    if len(set(names)) == len(names):
        return dict(zip(names, values))
    return values


def run_module(mod, inputs, params=None) -> list:
    """Evaluate ``@main`` with the interpreter; the outputs as a flat list of numpy arrays.

    ``inputs``: a dict by parameter name (extra names are ignored), or a list in parameter
    order (for programs whose parameter names repeat).
    """
    from irlab.relay.interpreter import create_executor

    mod = _as_module(mod)
    run = create_executor("debug", mod=mod, params=params).evaluate()
    if isinstance(inputs, dict):
        names = {p.name_hint for p in mod["main"].params}
        result = run(**{k: v for k, v in inputs.items() if k in names})
    else:
        result = run(*inputs)
    out = []
    stack = [result]
    while stack:
        value = stack.pop(0)
        if isinstance(value, tuple):
            stack[:0] = list(value)
        else:
            out.append(value.numpy())
    return out


def check_numerics(before, after, inputs=None, params=None, rtol=1e-5, atol=1e-5, seed=0):
    """Assert that two programs compute the same values on the same (random) inputs.

    ``params`` are bound into whichever program still has them as parameters. NaN equals NaN.
    Returns the list of outputs of ``after``.
    """
    before, after = _as_module(before), _as_module(after)
    params = dict(params or {})
    if inputs is None:
        inputs = random_inputs(before, seed, skip=params)
    expected = run_module(before, inputs, params)
    got = run_module(after, inputs, params)
    assert len(expected) == len(got), f"{len(expected)} outputs before, {len(got)} after"
    for i, (e, g) in enumerate(zip(expected, got)):
        assert e.shape == g.shape, f"output {i}: shape {e.shape} before, {g.shape} after"
        assert e.dtype == g.dtype, f"output {i}: dtype {e.dtype} before, {g.dtype} after"
        if not np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True):
            err = np.abs(g.astype(np.float64) - e.astype(np.float64))
            rel = err / np.maximum(np.abs(e.astype(np.float64)), 1e-30)
            raise AssertionError(f"output {i} differs: max abs error {np.nanmax(err):.3g}, "
                                 f"max rel error {np.nanmax(rel):.3g}")
    return got


def check_pass(pass_, before, expected=None, numerics=True, params=None, **tolerances):
    """Run ``pass_`` on ``before`` (typed first); compare with ``expected`` structurally (typed
    too) when given, and numerically with the interpreter. Returns the transformed module."""
    from irlab.relay.transform import InferType

    before = InferType()(_as_module(before))
    after = pass_(before)
    if expected is not None:
        assert_structural_equal(InferType()(after), InferType()(_as_module(expected)))
    if numerics:
        check_numerics(before, after, params=params, **tolerances)
    return after
