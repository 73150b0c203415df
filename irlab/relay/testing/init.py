"""Parameter initializers and ``create_workload`` (as ``tvm.relay.testing.init``)."""

from __future__ import annotations

import numpy as np

from irlab import nd
from irlab.ir.module import IRModule
from irlab.ir.type import TensorType


class Initializer:
    """Fills a parameter array in place, dispatching on the suffix of the parameter's name.

    ``rng`` is the ``numpy.random.Generator`` that random initializers draw from;
    ``create_workload`` replaces it with one seeded by its ``seed`` so workloads are
    reproducible without touching numpy's global state.
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self.rng = np.random.default_rng(0)

    def __call__(self, desc: str, arr: np.ndarray):
        # "moving_mean"/"moving_var" must be tested before the generic suffixes.
        if desc.endswith("weight"):
            self._init_weight(desc, arr)
        elif desc.endswith("bias"):
            self._init_bias(desc, arr)
        elif desc.endswith("gamma"):
            self._init_gamma(desc, arr)
        elif desc.endswith("beta"):
            self._init_beta(desc, arr)
        elif desc.endswith("mean"):
            self._init_mean(desc, arr)
        elif desc.endswith("var"):
            self._init_var(desc, arr)
        else:
            self._init_default(desc, arr)

    def _init_bias(self, _, arr):
        arr[...] = 0.0

    def _init_gamma(self, _, arr):
        arr[...] = 1.0

    def _init_beta(self, _, arr):
        arr[...] = 0.0

    def _init_mean(self, _, arr):
        arr[...] = 0.0

    def _init_var(self, _, arr):
        arr[...] = 1.0

    def _init_weight(self, name, arr):
        raise NotImplementedError("an Initializer subclass must define _init_weight")

    def _init_default(self, name, _):
        raise ValueError(f"unknown initialization pattern for {name!r}: parameter names must end "
                         "in weight, bias, gamma, beta, mean or var")


class Xavier(Initializer):
    """Xavier/Glorot uniform initialization of weights (MXNet's and TVM's ``Xavier``).

    Weights are drawn from ``U(-s, s)`` with ``s = sqrt(magnitude / factor)`` where ``factor`` is
    the fan-in, the fan-out or their average (``factor_type``), the receptive field included.
    """

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        if rnd_type not in ("uniform", "gaussian"):
            raise ValueError(f"unknown random type {rnd_type!r}")
        if factor_type not in ("avg", "in", "out"):
            raise ValueError(f"incorrect factor type {factor_type!r}")
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError(f"Xavier needs a weight of rank >= 2, {name!r} has shape {shape}")
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        # A depthwise kernel (C, 1, kh, kw) sees only kh*kw inputs per output; the channel count
        # in fan_out would make its weights far too small (TVM's MobileNet special case).
        if "depthwise" in name:
            factor = hw_scale
        scale = np.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            fill_uniform(self.rng, arr, scale)
        else:
            fill_normal(self.rng, arr, scale)


def _fills_in_place(arr) -> bool:
    """True when numpy's generator can write ``arr`` itself (float32/float64, C order)."""
    return arr.dtype in (np.float32, np.float64) and arr.flags.c_contiguous


def fill_uniform(rng, arr, scale):
    """``arr`` := U(-scale, scale), drawn in ``arr``'s own float type and written in place:
    BERT-base's 85 M float32 weights take a fraction of a second, where drawing float64
    values and casting them took seconds and a 700 MB temporary."""
    if not _fills_in_place(arr):
        arr[...] = rng.uniform(-scale, scale, size=arr.shape)
        return
    rng.random(out=arr, dtype=arr.dtype)
    arr *= arr.dtype.type(2.0 * scale)
    arr -= arr.dtype.type(scale)


def fill_normal(rng, arr, scale):
    """``arr`` := N(0, scale²), in ``arr``'s own float type, in place (see ``fill_uniform``)."""
    if not _fills_in_place(arr):
        arr[...] = rng.normal(0.0, scale, size=arr.shape)
        return
    rng.standard_normal(out=arr, dtype=arr.dtype)
    arr *= arr.dtype.type(scale)


def create_workload(net, initializer=None, seed=0):
    """Wrap ``net`` (a ``relay.Function``) in an ``IRModule`` and initialize its parameters.

    Type inference gives every parameter's shape; every parameter but ``data`` gets an array
    filled by ``initializer`` (``Xavier()`` by default) from a generator seeded with ``seed``.
    Returns ``(mod, params)`` with ``params`` a dict name -> ``irlab.nd.NDArray``.
    """
    from irlab.relay.transform import InferType

    mod = InferType()(IRModule.from_expr(net))
    initializer = initializer if initializer is not None else Xavier()
    initializer.rng = np.random.default_rng(seed)
    params = {}
    # irlab's initializers write every element; another one gets zeros around what it writes
    # (as TVM's numpy.zeros gave it).
    zeros_first = type(initializer).__module__ != __name__
    # Parameter order is the function's (deterministic), so one seed gives one set of values.
    for v in mod["main"].params:
        name = v.name_hint
        if name == "data":
            continue
        ty = v.checked_type
        if not isinstance(ty, TensorType):
            continue
        # Filled where it will stay (the NDArray's aligned buffer, through the numpy view
        # ``asarray`` shares): BERT-base's 340 MB are written once, not copied.
        value = nd.empty(ty.concrete_shape, ty.dtype)
        arr = np.asarray(value)
        if zeros_first:
            arr.fill(0)
        initializer(name, arr)
        params[name] = value
    return mod, params
