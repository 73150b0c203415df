"""``irlab.testing`` (``tvm.testing``): module-level parameters and fixtures, targets, markers."""

import numpy as np
import pytest

import irlab
import irlab.testing

size = irlab.testing.parameter(1, 3)
rows, cols = irlab.testing.parameters((2, 3), (4, 5))
named = irlab.testing.parameter(by_dict={"small": 2, "big": 8})


@irlab.testing.fixture(cache_return_value=True)
def data(size):
    return np.arange(size)


def test_parameter_takes_the_name_it_is_assigned(size, data):
    assert size in (1, 3) and len(data) == size


def test_parameters_vary_together(rows, cols):
    assert (rows, cols) in ((2, 3), (4, 5))


def test_parameter_by_dict(named, request):
    assert named == {"small": 2, "big": 8}[request.node.callspec.id]


def test_enabled_targets_are_runnable_cpu_targets():
    targets = irlab.testing.enabled_targets()
    assert targets and all(irlab.testing.device_enabled(t) for t, _ in targets)
    assert not irlab.testing.device_enabled("cuda")


def test_assert_allclose_checks_shapes():
    irlab.testing.assert_allclose(irlab.nd.array(np.ones(3)), np.ones(3))
    with pytest.raises(AssertionError):
        irlab.testing.assert_allclose(np.ones(3), np.ones((3, 1)))


@irlab.testing.requires_cuda
def test_requires_an_accelerator_skips():
    raise AssertionError("must not run")


@irlab.testing.parametrize_targets("llvm", "c")
def test_parametrize_targets(target, dev):
    assert target in ("llvm", "c") and dev.device_type == irlab.cpu(0).device_type
