"""``NDArray``: a tensor in device memory (CPU only), as ``tvm.nd.NDArray``.

The storage is a C-contiguous numpy array owned by the NDArray; ``numpy()`` returns a copy,
so compiled code and the user never share memory by accident.
"""

from __future__ import annotations

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.dtype import normalize_dtype, to_numpy_dtype


class Device:
    """A device: only ``cpu(0)`` exists (``kDLCPU`` = 1)."""

    __slots__ = ("device_type", "device_id")
    _NAMES = {1: "cpu"}

    def __init__(self, device_type=1, device_id=0):
        if device_type not in self._NAMES:
            raise IrlabError(f"unsupported device type {device_type}; irlab runs on cpu only")
        self.device_type = device_type
        self.device_id = int(device_id)

    def __eq__(self, other):
        return isinstance(other, Device) and (self.device_type, self.device_id) == (
            other.device_type, other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        return f"{self._NAMES[self.device_type]}({self.device_id})"

    def sync(self):
        """CPU work is synchronous: nothing to wait for."""


def cpu(dev_id=0) -> Device:
    return Device(1, dev_id)


def device(dev_type="cpu", dev_id=0) -> Device:
    if isinstance(dev_type, str):
        name = dev_type.split()[0]
        if name not in ("cpu", "llvm", "c"):
            raise IrlabError(f"unsupported device {dev_type!r}; irlab runs on cpu only")
        return cpu(dev_id)
    return Device(dev_type, dev_id)


class NDArray:
    """A dense tensor on a device, created with ``irlab.nd.array`` or ``irlab.nd.empty``."""

    __slots__ = ("_data", "_device")

    def __init__(self, data: np.ndarray, dev: Device | None = None):
        self._data = data
        self._device = dev or cpu(0)

    @property
    def shape(self) -> tuple:
        return tuple(self._data.shape)

    @property
    def dtype(self) -> str:
        return normalize_dtype(self._data.dtype)

    @property
    def device(self) -> Device:
        return self._device

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numpy(self) -> np.ndarray:
        return self._data.copy()

    def asnumpy(self) -> np.ndarray:
        return self.numpy()

    def copyfrom(self, source) -> "NDArray":
        src = source.numpy() if isinstance(source, NDArray) else np.asarray(source)
        if src.shape != self._data.shape:
            raise IrlabError(f"copyfrom: shape {src.shape} does not match {self.shape}")
        self._data[...] = src.astype(self._data.dtype, copy=False)
        return self

    def copyto(self, target) -> "NDArray":
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        if isinstance(target, Device):
            return NDArray(self._data.copy(), target)
        raise IrlabError(f"copyto: expected an NDArray or a Device, got {type(target).__name__}")

    def __setitem__(self, key, value):
        if not (isinstance(key, slice) and key == slice(None)):
            raise IrlabError("NDArray only supports whole assignment: a[:] = value")
        self.copyfrom(value)

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def __repr__(self):
        return f"<irlab.nd.NDArray shape={self.shape}, {self._device}>\n{self._data!r}"

    def __str__(self):
        return str(self._data)


def array(arr, device: Device | None = None, mem_scope=None) -> NDArray:
    """Copy ``arr`` (numpy array, list or NDArray) into a new NDArray."""
    if isinstance(arr, NDArray):
        arr = arr.numpy()
    data = np.array(arr, copy=True, order="C")
    normalize_dtype(data.dtype)  # rejects object arrays and other unsupported dtypes
    return NDArray(data, device)


def empty(shape, dtype="float32", device: Device | None = None) -> NDArray:
    return NDArray(np.empty(tuple(int(s) for s in shape), dtype=to_numpy_dtype(dtype)), device)
