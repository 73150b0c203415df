"""``NDArray``: a tensor in device memory (CPU only), as ``tvm.nd.NDArray``.

Storage is a numpy view kept in ``_data``. ``irlab.nd.array`` and ``irlab.nd.empty`` allocate it
C-contiguous and 64-byte aligned (a slightly larger byte buffer, viewed from its first aligned
address), because compiled code is told its pointers are 64-byte aligned.

``from_dlpack`` is zero-copy, so the memory belongs to the producer: it is C-contiguous (checked,
as TVM does) but may be unaligned. Callers of compiled code copy such inputs into aligned staging
buffers; check ``is_aligned`` rather than assuming it.

``numpy()`` returns a copy, so the user never aliases an NDArray by accident; DLPack
(``np.from_dlpack(nd)``, ``to_dlpack()``) and ``__array__`` are the explicit ways to share memory.
"""

from __future__ import annotations

import ctypes

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.dtype import normalize_dtype, to_numpy_dtype

ALIGNMENT = 64
_KDL_CPU = 1
_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                 9: "vpi", 10: "rocm", 12: "ext_dev", 14: "oneapi", 15: "webgpu", 16: "hexagon"}
_DTYPE_NAMES: dict = {}  # np.dtype -> "float32": the dtype property is on the call path


class Device:
    """A device: only ``cpu(0)`` exists (DLPack's ``kDLCPU`` = 1)."""

    __slots__ = ("device_type", "device_id")

    def __init__(self, device_type=_KDL_CPU, device_id=0):
        if device_type != _KDL_CPU:
            name = _DEVICE_NAMES.get(device_type, f"device type {device_type}")
            raise IrlabError(f"unsupported device {name}; irlab runs on cpu only")
        self.device_type = device_type
        self.device_id = int(device_id)

    @property
    def exist(self) -> bool:
        return True

    def sync(self):
        """CPU work is synchronous: nothing to wait for."""

    def __eq__(self, other):
        return isinstance(other, Device) and (self.device_type, self.device_id) == (
            other.device_type, other.device_id)

    def __hash__(self):
        return hash((self.device_type, self.device_id))

    def __repr__(self):
        return f"{_DEVICE_NAMES[self.device_type]}({self.device_id})"


def cpu(dev_id=0) -> Device:
    return Device(_KDL_CPU, dev_id)


def device(dev_type="cpu", dev_id=0) -> Device:
    """``device("cpu", 0)``; a target string such as ``"llvm -mcpu=x"`` names its device too."""
    if isinstance(dev_type, str):
        name = dev_type.split()[0] if dev_type.strip() else dev_type
        if name not in ("cpu", "llvm", "c", "stackvm"):
            raise IrlabError(f"unsupported device {dev_type!r}; irlab runs on cpu only")
        return cpu(dev_id)
    return Device(dev_type, dev_id)


def _aligned_empty(shape: tuple, np_dtype: np.dtype) -> np.ndarray:
    """A C-contiguous uninitialised array whose first element sits on a 64-byte boundary."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
    raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    # The ndarray constructor keeps the exact offset, even for zero-size shapes (slicing does not).
    return np.ndarray(shape, dtype=np_dtype, buffer=raw, offset=start)


class NDArray:
    """A dense tensor on a device, created with ``irlab.nd.array``/``empty``/``from_dlpack``.

    The constructor wraps a numpy array as is (no copy, no alignment guarantee); use the
    factory functions.
    """

    __slots__ = ("_data", "_device")

    def __init__(self, data: np.ndarray, dev: Device | None = None):
        self._data = data
        self._device = dev or cpu(0)

    # -- description --------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def dtype(self) -> str:
        np_dtype = self._data.dtype
        name = _DTYPE_NAMES.get(np_dtype)
        if name is None:
            name = _DTYPE_NAMES[np_dtype] = normalize_dtype(np_dtype)
        return name

    @property
    def device(self) -> Device:
        return self._device

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def data_ptr(self) -> int:
        """The address of element 0 (what a ``DLTensor.data`` would hold)."""
        return self._data.__array_interface__["data"][0]

    @property
    def is_aligned(self) -> bool:
        return self.data_ptr % ALIGNMENT == 0

    # -- copies -------------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        return self._data.copy()

    def asnumpy(self) -> np.ndarray:
        """Deprecated spelling of ``numpy()``, kept as TVM does."""
        return self.numpy()

    def copyfrom(self, source) -> "NDArray":
        """Copy ``source`` (NDArray, numpy array or nested list) into this array.

        Shapes must match. An NDArray source must have the same dtype; a numpy source is cast as
        TVM does, but only within its kind ("same_kind": float64 -> float32, not float -> int).
        """
        if isinstance(source, NDArray):
            if source.dtype != self.dtype:
                raise IrlabError(f"copyfrom: dtype mismatch: expected {self.dtype}, "
                                 f"got {source.dtype}")
            src = source._data
        else:
            src = np.asarray(source)
            if src.dtype == object or not np.can_cast(src.dtype, self._data.dtype, "same_kind"):
                raise IrlabError(f"copyfrom: dtype mismatch: expected {self.dtype}, got "
                                 f"{src.dtype} (cannot cast safely)")
        if src.shape != self._data.shape:
            raise IrlabError(f"copyfrom: shape mismatch: expected {self.shape}, got {src.shape}")
        if not self._data.flags.writeable:
            raise IrlabError("copyfrom: this array is read-only (it wraps a read-only numpy "
                             "array)")
        np.copyto(self._data, src, casting="same_kind")
        return self

    def copyto(self, target) -> "NDArray":
        """Copy into ``target``: an NDArray (returned) or a Device (a new aligned NDArray)."""
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        if isinstance(target, Device):
            return array(self._data, target)
        raise IrlabError(f"copyto: expected an NDArray or a Device, got {type(target).__name__}")

    def __setitem__(self, key, value):
        if not (isinstance(key, slice) and key == slice(None)):
            raise IrlabError("NDArray only supports whole assignment: a[:] = value")
        self.copyfrom(value)

    # -- sharing ------------------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        if dtype is not None and np.dtype(dtype) != self._data.dtype:
            return self._data.astype(dtype)
        return self._data.copy() if copy else self._data

    def __dlpack__(self, **kwargs):
        """Export without copy (numpy does the DLPack work; the capsule keeps ``_data`` alive)."""
        return self._data.__dlpack__(**{k: v for k, v in kwargs.items() if v is not None})

    def __dlpack_device__(self):
        return (self._device.device_type, self._device.device_id)

    def to_dlpack(self):
        """A ``"dltensor"`` PyCapsule sharing this array's memory, as ``tvm.nd.NDArray.to_dlpack``."""
        return self._data.__dlpack__()

    # -- printing -----------------------------------------------------------------------------
    def __repr__(self):
        return f"<irlab.nd.NDArray shape={self.shape}, {self._device}>\n{self._data!r}"

    def __str__(self):
        return str(self._data)


def array(arr, device: Device | None = None, mem_scope=None) -> NDArray:
    """Copy ``arr`` (numpy array, list, scalar or NDArray) into a new aligned NDArray."""
    src = arr._data if isinstance(arr, NDArray) else np.asarray(arr)
    normalize_dtype(src.dtype)  # rejects object arrays and other unsupported dtypes
    data = _aligned_empty(src.shape, src.dtype)
    np.copyto(data, src)
    return NDArray(data, device)


def empty(shape, dtype="float32", device: Device | None = None) -> NDArray:
    """An uninitialised aligned NDArray."""
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    return NDArray(_aligned_empty(shape, to_numpy_dtype(dtype)), device)


# -- DLPack import ----------------------------------------------------------------------------
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensorHead(ctypes.Structure):
    """The first two fields of ``DLTensor`` (also the head of ``DLManagedTensor``)."""

    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice)]


_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _CapsuleProducer:
    """Presents an unconsumed legacy ``"dltensor"`` capsule as a ``__dlpack__`` producer."""

    def __init__(self, capsule):
        self._capsule = capsule
        head = _DLTensorHead.from_address(_capsule_get_pointer(capsule, b"dltensor"))
        self._device = (head.device.device_type, head.device.device_id)

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def _is_capsule(obj) -> bool:
    return type(obj).__name__ == "PyCapsule"


class _WritableOwner:
    """Re-exposes an imported array as writable, keeping it (and so its capsule) alive.

    numpy marks arrays imported from legacy capsules read-only, since those cannot say whether
    the memory may be written; TVM treats DLPack memory as writable, and so do we.
    """

    def __init__(self, arr: np.ndarray):
        self._arr = arr
        self.__array_interface__ = {"version": 3, "shape": arr.shape, "typestr": arr.dtype.str,
                                    "data": (arr.__array_interface__["data"][0], False)}


def from_dlpack(dltensor) -> NDArray:
    """Wrap a DLPack tensor without copying: any ``__dlpack__`` producer or a ``"dltensor"``
    PyCapsule (consumed, as the protocol requires). The result shares the producer's memory,
    which must be on the CPU, writable and C-contiguous; it may be unaligned."""
    capsule = dltensor
    if not _is_capsule(dltensor):
        if not hasattr(dltensor, "__dlpack__"):
            raise IrlabError(f"from_dlpack: expected an object with __dlpack__ or a DLPack "
                             f"capsule, got {type(dltensor).__name__}")
        _check_cpu(*dltensor.__dlpack_device__())
        try:
            capsule = dltensor.__dlpack__()  # the legacy, unversioned capsule, as TVM asks for
        except (BufferError, TypeError, ValueError) as err:
            raise IrlabError(f"from_dlpack: the producer refused to export: {err}") from err
    if not _capsule_is_valid(capsule, b"dltensor"):
        raise IrlabError("from_dlpack: the capsule is not an unconsumed 'dltensor' capsule "
                         "(a DLPack capsule can be imported only once)")
    producer = _CapsuleProducer(capsule)
    _check_cpu(*producer.__dlpack_device__())
    try:
        data = np.from_dlpack(producer)
    except (BufferError, TypeError, RuntimeError) as err:
        raise IrlabError(f"from_dlpack: cannot import the tensor: {err}") from err
    if not data.flags.c_contiguous:
        raise IrlabError(f"from_dlpack: the tensor is strided (strides {data.strides}); "
                         f"irlab NDArrays must be C-contiguous")
    normalize_dtype(data.dtype)
    if not data.flags.writeable:
        data = np.asarray(_WritableOwner(data))
    return NDArray(data, cpu(producer.__dlpack_device__()[1]))


def _check_cpu(dev_type, dev_id):
    if int(dev_type) != _KDL_CPU:
        name = _DEVICE_NAMES.get(int(dev_type), f"device type {int(dev_type)}")
        raise IrlabError(f"from_dlpack: the tensor lives on {name}({dev_id}); "
                         f"irlab runs on cpu only")
