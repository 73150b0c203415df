"""``irlab.nd``: NDArray construction, as ``tvm.nd``."""

from irlab.runtime.ndarray import NDArray, array, empty, cpu, device, from_dlpack

__all__ = ["NDArray", "array", "empty", "cpu", "device", "from_dlpack"]
