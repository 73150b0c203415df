"""Storage for the Relax VM: ``vm.builtin.alloc_storage`` makes a byte buffer, and
``vm.builtin.alloc_tensor`` views a tensor inside it (what StaticPlanBlockMemory reuses)."""

from __future__ import annotations

import functools
import math
import sys

import numpy as np

from irlab.errors import VMError
from irlab.runtime.container import ShapeTuple
from irlab.runtime.dtype import parse_dtype, to_numpy_dtype
from irlab.runtime.ndarray import ALIGNMENT, NDArray, cpu
from irlab.runtime.registry import register_func
from irlab.runtime.relax_vm.specialize import fast_path, reusable_allocation


class Storage:
    """``nbytes`` bytes on the CPU, 64-byte aligned; tensors allocated in it share its memory."""

    __slots__ = ("buffer", "nbytes", "device")

    def __init__(self, nbytes: int, device=None):
        if nbytes < 0:
            raise VMError(f"alloc_storage: negative size {nbytes}")
        raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
        start = -raw.ctypes.data % ALIGNMENT
        self.buffer = raw[start:start + nbytes]
        self.nbytes = nbytes
        self.device = device or cpu(0)

    def alloc_tensor(self, offset: int, shape, dtype) -> NDArray:
        """A tensor of ``shape``/``dtype`` at byte ``offset``, sharing this storage."""
        shape = tuple(shape)
        np_dtype = _numpy_dtype(dtype)
        size = math.prod(shape) * np_dtype.itemsize
        if offset < 0 or offset + size > self.nbytes:
            raise VMError(f"alloc_tensor: a {dtype} tensor of shape {shape} ({size} bytes) at "
                          f"offset {offset} does not fit in a storage of {self.nbytes} bytes "
                          f"(storages of symbolic shapes are planned for their "
                          f"tir_var_upper_bound)")
        data = np.ndarray(shape, dtype=np_dtype, buffer=self.buffer, offset=offset)
        return NDArray(data, self.device)

    def __repr__(self):
        return f"Storage({self.nbytes} bytes, {self.device})"


@functools.lru_cache(maxsize=None)
def _numpy_dtype(dtype) -> np.dtype:
    return to_numpy_dtype(str(dtype))


@functools.lru_cache(maxsize=None)
def _itemsize(dtype) -> int:
    parsed = parse_dtype(str(dtype))
    return 1 if parsed.code == "bool" else (parsed.bits * parsed.lanes + 7) // 8


def storage_bytes(shape, dtype_hint) -> int:
    """Bytes for a buffer of ``shape`` elements of ``dtype_hint`` (bool takes one byte)."""
    return math.prod(shape) * _itemsize(dtype_hint)


@register_func("vm.builtin.alloc_storage")
def alloc_storage(vm, shape, device_index=0, dtype_hint="uint8", mem_scope="global"):
    """A new ``Storage`` of ``prod(shape)`` elements of ``dtype_hint`` on device
    ``device_index`` (-1: the host)."""
    devices = vm.devices if vm is not None else [cpu(0)]
    if device_index >= len(devices) or device_index < -1:
        raise VMError(f"alloc_storage: device index {device_index} is out of the VM's "
                      f"{len(devices)} devices")
    if mem_scope not in ("global", None):
        raise VMError(f"alloc_storage: memory scope {mem_scope!r} is not supported on cpu")
    return Storage(storage_bytes(shape, dtype_hint), devices[device_index])


@register_func("vm.builtin.alloc_tensor")
def alloc_tensor(storage, offset, shape, dtype):
    if not isinstance(storage, Storage):
        raise VMError(f"alloc_tensor: expected a Storage, got {type(storage).__name__}")
    return storage.alloc_tensor(int(offset), ShapeTuple(shape), dtype)


reusable_allocation("vm.builtin.alloc_storage", alloc_storage)
reusable_allocation("vm.builtin.alloc_tensor", alloc_tensor)


@fast_path("vm.builtin.alloc_storage", alloc_storage)
def _fast_alloc_storage(values, dynamic, exclusive):
    """A storage of a size known only at run time (a symbolic shape): in a frame, the last
    call's storage serves again when it has the size asked and nothing holds it any longer
    (no tensor in it survived the call; see ``resolve``)."""
    if dynamic != (1,) or not exclusive:
        return None
    vm, rest = values[0], values[2:]
    dtype_hint = rest[1] if len(rest) > 1 else "uint8"
    last = [None, None]  # the storage, the references to it and its memory when only here

    def alloc(shape):
        storage, counts = last
        if storage is not None and storage.nbytes == storage_bytes(shape, dtype_hint) \
                and _references(storage) == counts:
            return storage
        storage = last[0] = alloc_storage(vm, shape, *rest)
        last[1] = _references(storage)
        return storage
    return alloc


def _references(storage):
    """References to a storage, its buffer and the array owning its memory (which every
    view of it refers to)."""
    return (sys.getrefcount(storage), sys.getrefcount(storage.buffer),
            sys.getrefcount(storage.buffer.base))


__all__ = ["Storage", "storage_bytes", "alloc_storage", "alloc_tensor"]
