"""What a runner worker does with one artifact: check it against the reference, then time it.

Inputs are random (seeded, the same for the candidate and the reference); every argument
buffer is compared after the call, so a candidate that writes wrong values, or forgets to
write some, fails. The reference's outputs are cached per worker process.
"""

from __future__ import annotations

import time

import numpy as np

from irlab.errors import IrlabError

ENTRY = "main"
_reference_cache = {}


class WrongResultError(IrlabError):
    """A candidate computed different values than the untuned reference."""


def random_arguments(args_info, seed=0):
    """Numpy arrays for ``args_info``: uniform in [-1, 1) for floats, small ints otherwise."""
    rng = np.random.default_rng(seed)
    arrays = []
    for info in args_info:
        dtype = np.dtype(info.dtype)
        if dtype.kind == "f":
            arrays.append(rng.uniform(-1, 1, info.shape).astype(dtype))
        elif dtype.kind == "b":
            arrays.append(rng.integers(0, 2, info.shape).astype(dtype))
        else:
            arrays.append(rng.integers(0, 8, info.shape).astype(dtype))
    return arrays


def warm_up():
    """A runner worker's initializer: import the runtime and the LLVM loader up front."""
    import irlab.runtime.benchmark  # noqa: F401
    import irlab.target.llvm_jit  # noqa: F401


def load_entry(path):
    """The entry function of the artifact at ``path`` (loads irlab's LLVM runtime first)."""
    import irlab.target.llvm_jit  # noqa: F401  (registers the loader of LLVM objects)
    from irlab.runtime import load_module

    return load_module(path).get_function(ENTRY)


def _run_once(func, arrays):
    """(the arguments after one call of ``func`` on copies of ``arrays``, its seconds)."""
    from irlab.runtime.ndarray import array

    nds = [array(a.copy()) for a in arrays]
    start = time.perf_counter()
    func(*nds)
    secs = time.perf_counter() - start
    return [nd.numpy() for nd in nds], secs


def reference_outputs_path(reference_path) -> str:
    """Where the reference's outputs are saved beside its artifact (``prepare_reference``)."""
    return reference_path + ".outputs.npz"


def prepare_reference(reference_path, args_info, seed=0) -> None:
    """Run the reference once on the check's inputs and save its outputs beside it, so that
    a worker replaced after a crash or a timeout loads them instead of running the
    (unscheduled, slow: a naive GEMM 1024 takes seconds) reference within a candidate's
    timeout again. Written to a temporary name, then renamed: readers see all or nothing."""
    import os

    arrays = random_arguments(args_info, seed)
    outputs, _ = _run_once(load_entry(reference_path), arrays)
    final = reference_outputs_path(reference_path)
    partial = f"{final}.{os.getpid()}.tmp.npz"
    np.savez(partial, *outputs)
    os.replace(partial, final)


def _reference_outputs(reference_path, args_info, arrays):
    import os

    key = (reference_path, tuple((a.dtype, a.shape) for a in args_info))
    if key not in _reference_cache:
        saved = reference_outputs_path(reference_path)
        if os.path.exists(saved):
            with np.load(saved) as data:
                _reference_cache[key] = [data[f"arr_{i}"] for i in range(len(data.files))]
        else:
            _reference_cache[key] = _run_once(load_entry(reference_path), arrays)[0]
    return _reference_cache[key]


def check_against_reference(func, reference_path, args_info, seed=0) -> float:
    """Raise ``WrongResultError`` naming the first argument whose values differ; else the
    seconds the checked call took."""
    arrays = random_arguments(args_info, seed)
    expected = _reference_outputs(reference_path, args_info, arrays)
    got, secs = _run_once(func, arrays)
    for index, (want, have) in enumerate(zip(expected, got)):
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        if not np.allclose(have, want, rtol=1e-3, atol=1e-4 * max(scale, 1.0), equal_nan=True):
            worst = float(np.max(np.abs(have.astype("float64") - want)))
            raise WrongResultError(f"argument {index} differs from the untuned build "
                                   f"(max abs error {worst:.3g})")
    return secs


def measure(path, args_info, config, reference_path=None, num_threads=None):
    """Seconds per call of the artifact at ``path``, one per repeat (after the check).

    A candidate whose checked call already outlasts a whole repeat (``number`` x
    ``min_repeat_ms``) is a slow one, and most of a search's first candidates are: that call
    is its first repeat's time, and each further repeat times one call. That spares the
    ``number`` + 1 further calls, of seconds each, which would only confirm it is slow."""
    from irlab.runtime.benchmark import time_evaluator
    from irlab.runtime.ndarray import array
    from irlab.runtime.threading import num_threads_override

    with num_threads_override(num_threads):
        func = load_entry(path)
        checked_secs = None
        if reference_path is not None:
            checked_secs = check_against_reference(func, reference_path, args_info)
        nds = [array(a) for a in random_arguments(args_info, seed=1)]
        if checked_secs is not None and checked_secs * 1e3 > config.number * \
                max(config.min_repeat_ms, 1.0):
            return [checked_secs] + [_time_one_call(func, nds, config)
                                     for _ in range(config.repeat - 1)]
        evaluator = time_evaluator(func, number=config.number, repeat=config.repeat,
                                   min_repeat_ms=config.min_repeat_ms,
                                   f_preproc=config.f_preproc)
        return list(evaluator(*nds).results)


def _time_one_call(func, nds, config) -> float:
    if config.enable_cpu_cache_flush:
        from irlab.runtime.cache_flush import cache_flush_cpu_non_first_arg

        cache_flush_cpu_non_first_arg(*nds)
    start = time.perf_counter()
    func(*nds)
    return time.perf_counter() - start
