"""``tvm.testing``'s public helpers, as TVM's own tests and tutorials use them: pytest
parameters and fixtures declared at module level, the target list, ``requires_*`` markers and
``assert_allclose``. Written from TVM's documented behaviour.

irlab compiles for the CPU only: ``enabled_targets()`` is ``[("llvm", cpu(0))]``, and every
``requires_<gpu or accelerator>`` marker skips, saying so.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import os
import sys

import numpy as np
import pytest

# Target kinds irlab can build and run here. TVM reads TVM_TEST_TARGETS; so do we.
_RUNNABLE_KINDS = ("llvm", "c")
_DEFAULT_TARGETS = "llvm"


def main():
    """``if __name__ == "__main__": tvm.testing.main()``: run the calling file under pytest."""
    caller = inspect.stack()[1].filename
    sys.exit(pytest.main([caller, *sys.argv[1:]]))


def assert_allclose(actual, desired, rtol=1e-7, atol=1e-7, verbose=True):
    """numpy's ``assert_allclose`` after checking the shapes agree (NDArrays accepted)."""
    actual, desired = (np.asanyarray(x.numpy() if hasattr(x, "numpy") else x)
                       for x in (actual, desired))
    np.testing.assert_allclose(actual.shape, desired.shape)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=verbose)


def parameter(*values, ids=None, by_dict=None):
    """A module-level pytest parameter: ``x = tvm.testing.parameter(1, 2)`` makes every test
    taking ``x`` run once per value (the fixture takes the name it is assigned to)."""
    if by_dict is not None:
        if values or ids:
            raise ValueError("parameter: give values or by_dict, not both")
        ids, values = list(by_dict), list(by_dict.values())

    @pytest.fixture(params=list(values), ids=ids)
    def as_fixture(request):
        return request.param

    return as_fixture


def parameters(*value_sets, ids=None):
    """Parameters varied together: ``a, b = tvm.testing.parameters((1, 2), (3, 4))`` runs each
    test taking ``a`` or ``b`` with (a, b) = (1, 2), then (3, 4)."""
    group = f"_irlab_parameters_{next(_GROUPS)}"
    # The shared fixture must be found by pytest in the calling module, like the outputs.
    inspect.stack()[1].frame.f_globals[group] = pytest.fixture(params=list(value_sets),
                                                                ids=ids, name=group)(
        lambda request: request.param)

    def member(index):
        def as_fixture(**values):
            return values[group][index]
        # pytest reads a fixture's arguments from its signature: this one takes the group.
        as_fixture.__signature__ = inspect.Signature(
            [inspect.Parameter(group, inspect.Parameter.KEYWORD_ONLY)])
        return pytest.fixture(as_fixture)

    return [member(i) for i in range(len(value_sets[0]) if value_sets else 0)]


_GROUPS = itertools.count()


def fixture(func=None, *, cache_return_value=False):
    """``@tvm.testing.fixture``: a pytest fixture; ``cache_return_value=True`` computes it once
    per set of parameters and hands each test a copy (here: computed once, then deep-copied)."""
    def wrap(fn):
        if not cache_return_value:
            return pytest.fixture(fn)
        cache = {}

        @functools.wraps(fn)
        def cached(*args, **kwargs):
            import copy

            key = repr((args, sorted(kwargs.items())))
            if key not in cache:
                cache[key] = fn(*args, **kwargs)
            return copy.deepcopy(cache[key])

        return pytest.fixture(cached)

    return wrap(func) if func is not None else wrap


def _target_kind(target) -> str:
    text = target if isinstance(target, str) else str(target)
    return text.split()[0] if text.strip() else ""


def device_enabled(target) -> bool:
    """True when ``target`` is one of the test targets and irlab can run it here."""
    return _target_kind(target) in _RUNNABLE_KINDS and any(
        _target_kind(t) == _target_kind(target) for t in _test_targets())


def _test_targets() -> list:
    text = os.environ.get("TVM_TEST_TARGETS", "") or _DEFAULT_TARGETS
    return [t.strip() for t in text.split(";") if t.strip()]


def enabled_targets() -> list:
    """``[(target string, device)]`` of the test targets that can run here."""
    from irlab.runtime.ndarray import cpu

    return [(t, cpu(0)) for t in _test_targets() if _target_kind(t) in _RUNNABLE_KINDS]


def _skip(reason):
    def mark(func=None):
        marker = pytest.mark.skip(reason=reason)
        return marker(func) if func is not None else marker
    return mark


def uses_gpu(func):
    """Marks a test that also runs on GPUs when present: here it runs on the CPU targets."""
    return pytest.mark.gpu(func)


def requires_llvm(func=None):
    return func if func is not None else (lambda f: f)


_ACCELERATORS = ("gpu", "cuda", "cudagraph", "cudnn", "cublas", "rocm", "metal", "opencl",
                 "vulkan", "hexagon", "ethosn", "ethosu", "cmsisnn", "tensorrt", "arm_compute_lib",
                 "corstone300", "micro", "rpc", "nvptx", "vta", "x86", "aarch64", "riscv_cpu",
                 "tensorcore", "matrixcore", "cutlass", "openclml", "libtorch", "usmp",
                 "cuda_vulkan", "package_onnx", "ethosu_vela")
for _name in _ACCELERATORS:
    globals()[f"requires_{_name}"] = _skip(f"irlab has no {_name} target (CPU only)")


def parametrize_targets(*targets):
    """Runs the test once per target (a test taking ``target`` and ``dev``); with no arguments,
    over ``enabled_targets()``."""
    def wrap(func, chosen=targets):
        from irlab.runtime.ndarray import cpu

        names = chosen or [t for t, _ in enabled_targets()]
        params = [pytest.param(t, cpu(0), marks=() if device_enabled(t) else pytest.mark.skip(
            reason=f"{t} is not among the test targets (TVM_TEST_TARGETS) or cannot run here"))
            for t in names]
        return pytest.mark.parametrize("target,dev", params)(func)

    if len(targets) == 1 and callable(targets[0]):
        return wrap(targets[0], ())
    return wrap


def exclude_targets(*targets):
    """The test is not run for these targets (their cases are skipped)."""
    return pytest.mark.tvm_exclude_targets(*targets)


def known_failing_targets(*targets):
    """The test is expected to fail for these targets."""
    return pytest.mark.tvm_known_failing_targets(*targets)


__all__ = ["main", "assert_allclose", "parameter", "parameters", "fixture", "device_enabled",
           "enabled_targets", "uses_gpu", "requires_llvm", "parametrize_targets",
           "exclude_targets", "known_failing_targets",
           *[f"requires_{name}" for name in _ACCELERATORS]]
