"""Helpers for testing the Relax VM (TVM's ``relax.testing.vm``): the ``test.vm.*`` packed
functions VM tests call, registered on import, and ``check_saved_func``."""

from __future__ import annotations

import numpy as np

from irlab.runtime.ndarray import array
from irlab.runtime.registry import register_func


def _register(name):
    return lambda fn: register_func(name, fn, override=True)


@_register("test.vm.move")
def move(src):
    return src


@_register("test.vm.add")
def add(a, b):
    return array(a.numpy() + b.numpy())


@_register("test.vm.mul")
def mul(a, b):
    return array(a.numpy() * b.numpy())


@_register("test.vm.equal_zero")
def equal_zero(a):
    return array(np.all(a.numpy() == 0))


@_register("test.vm.subtract_one")
def subtract_one(a):
    return array(a.numpy() - 1)


@_register("test.vm.identity")
def identity(a, b):
    """Destination-passing copy: ``b[:] = a``."""
    b[:] = a.numpy()


@_register("test.vm.tile")
def tile(a, b):
    """Destination-passing ``b = tile(a, (1, 2))``."""
    b[:] = np.tile(a.numpy(), (1, 2))


@_register("test.vm.add_scalar")
def add_scalar(a, b):
    return a + b


@_register("test.vm.get_device_id")
def get_device_id(device):
    return device.device_id


@_register("test.vm.check_if_defined")
def check_if_defined(obj):
    return obj is not None


def check_saved_func(vm, func_name, *inputs):
    """Run ``func_name`` on ``inputs`` directly and through ``vm.save_function``; both must
    agree. Returns the direct result."""
    saved_name = f"{func_name}_saved"
    vm.save_function(func_name, saved_name, *inputs)
    direct = vm[func_name](*inputs)
    saved = vm[saved_name]()
    np.testing.assert_allclose(direct.numpy(), saved.numpy(), rtol=1e-7, atol=1e-7)
    return direct


__all__ = ["check_saved_func"]
