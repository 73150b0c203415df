"""The pytest plugin TVM's test suite loads (``pytest_plugins = ["tvm.testing.plugin"]``):
tests taking ``target`` run once per enabled target, ``dev`` is that target's device, and the
``exclude_targets`` / ``known_failing_targets`` marks apply per target."""

from __future__ import annotations

import pytest

from irlab.testing.utils import enabled_targets


def pytest_configure(config):
    for marker in ("gpu: also runs on GPUs (CPU only in irlab)",
                   "tvm_exclude_targets(*targets): not run for these targets",
                   "tvm_known_failing_targets(*targets): expected to fail for these targets"):
        config.addinivalue_line("markers", marker)


def _marked_targets(metafunc, name) -> set:
    return {t for mark in metafunc.definition.iter_markers(name) for t in mark.args}


def pytest_generate_tests(metafunc):
    if "target" not in metafunc.fixturenames:
        return
    if any("target" in mark.args[0] for mark in metafunc.definition.iter_markers("parametrize")
           if mark.args and isinstance(mark.args[0], str)):
        return  # the test parametrizes its targets itself
    excluded = _marked_targets(metafunc, "tvm_exclude_targets")
    failing = _marked_targets(metafunc, "tvm_known_failing_targets")
    params = []
    for target, _ in enabled_targets():
        kind = target.split()[0]
        marks = []
        if target in excluded or kind in excluded:
            marks.append(pytest.mark.skip(reason=f"excluded for {target}"))
        if target in failing or kind in failing:
            marks.append(pytest.mark.xfail(reason=f"known to fail for {target}"))
        params.append(pytest.param(target, marks=marks, id=target))
    metafunc.parametrize("target", params)


@pytest.fixture
def dev(target):
    """The device of ``target`` (the CPU)."""
    from irlab.runtime.ndarray import cpu

    return cpu(0)
