"""The models of ``irlab.relay.testing.MODELS`` as the pass tests use them: parameters bound as
constants (with realistic batch-norm statistics), fixed inputs, and reference outputs that are
computed once per test process and shared by every pass test."""

from __future__ import annotations

import functools

import numpy as np

import irlab
from irlab.relay.build_module import bind_params_by_name
from irlab.relay.testing import MODELS, SMALL_MODELS
from irlab.relay.transform import InferType
from irlab.testing.check import random_inputs, run_module

MODEL_NAMES = sorted(SMALL_MODELS)


def _realistic(name, value, rng):
    """Batch-norm scales and variances in [0.5, 1.5], shifts, means and biases in
    [-0.5, 0.5]: every batch norm is a real per-channel affine map (the initializer's
    gamma = var = 1, beta = mean = 0 would hide a wrong formula)."""
    if name.endswith(("gamma", "moving_var")):
        return irlab.nd.array(rng.uniform(0.5, 1.5, value.shape).astype("float32"))
    if name.endswith(("beta", "moving_mean", "bias")):
        return irlab.nd.array(rng.uniform(-0.5, 0.5, value.shape).astype("float32"))
    return value


@functools.lru_cache(maxsize=None)
def _case(name):
    mod, params = MODELS[name]()
    rng = np.random.default_rng(7)
    params = {k: _realistic(k, v, rng) for k, v in params.items()}
    bound = InferType()(irlab.IRModule.from_expr(bind_params_by_name(mod["main"], params)))
    inputs = random_inputs(bound, seed=0)
    return bound, inputs, run_module(bound, inputs)


def bound_model(name) -> irlab.IRModule:
    """The typed model whose only parameter left is its input ``data``."""
    return _case(name)[0]


def check_model(name, after, rtol=1e-4, atol=1e-4):
    """Assert that ``after`` computes the model's reference outputs on the shared inputs."""
    _, inputs, expected = _case(name)
    got = run_module(after, inputs)
    assert len(got) == len(expected), f"{len(expected)} outputs before, {len(got)} after"
    for i, (e, g) in enumerate(zip(expected, got)):
        assert e.shape == g.shape and e.dtype == g.dtype, f"output {i}: {e.shape} vs {g.shape}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"{name}: output {i} differs")
