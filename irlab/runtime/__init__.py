"""The runtime: NDArray and devices (the compiled-module runtime arrives with codegen)."""

from irlab.runtime.ndarray import NDArray, Device, array, empty, cpu, device

__all__ = ["NDArray", "Device", "array", "empty", "cpu", "device"]
