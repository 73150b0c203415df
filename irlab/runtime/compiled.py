"""Calling compiled code safely: the checks before machine code runs, and the runtime hooks.

``CompiledFunction`` is the packed function behind ``module["f"]``. Before entering native
code it checks every argument against the function's ``FunctionInfo`` (arity, dtype, ndim,
shape with symbolic dimensions bound consistently, strides, device, alignment) and raises
``ArgumentError`` naming the argument with what was expected and what was given. Machine
code never sees an argument it was not compiled for, so no call from Python can crash the
process. The calling convention is in ``irlab.runtime.abi``.

The hooks generated code calls back into (``__irlab_parallel_for``,
``__irlab_call_packed``) are ctypes callbacks defined here; ``install_hooks`` writes their
addresses into a loaded library's hook variables.
"""

from __future__ import annotations

import ctypes
import struct
import threading

import numpy as np

from irlab.errors import ArgumentError, IrlabError
from irlab.runtime.dtype import parse_dtype, to_numpy_dtype
from irlab.runtime import abi
from irlab.runtime import threading as _pool
from irlab.runtime.threading import parallel_for

ENTRY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_int64))
BODY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
PARALLEL_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_int64)
PACKED_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_char_p, ctypes.c_void_p,
                               ctypes.c_void_p, ctypes.c_int32)
ALIGNMENT = 64

_pending = threading.local()  # the exception a callback raised, re-raised by the caller


# -- the hooks ---------------------------------------------------------------------------
_body_cache: dict[int, object] = {}


def _parallel_hook(body, closure, extent):
    fn = _body_cache.get(body)
    if fn is None:
        fn = _body_cache[body] = BODY_TYPE(body)
    try:
        return parallel_for(fn, closure, extent)
    except BaseException as err:  # noqa: BLE001 -- must not unwind through native frames
        _pending.error = err
        return abi.ERR_CALLBACK


def _decode_array(address):
    words = (ctypes.c_int64 * 5).from_address(address)
    data, ndim, code, bits, lanes = list(words)
    shape = tuple((ctypes.c_int64 * ndim).from_address(address + 40)) if ndim else ()
    name = {abi.DL_INT: "int", abi.DL_UINT: "uint", abi.DL_FLOAT: "float",
            abi.DL_BOOL: "bool"}.get(code, "uint")
    dtype = "bool" if name == "bool" else f"{name}{bits}" + (f"x{lanes}" if lanes > 1 else "")
    np_dtype = to_numpy_dtype(dtype)
    count = int(np.prod(shape)) if shape else 1
    raw = (ctypes.c_uint8 * (count * np_dtype.itemsize)).from_address(data) if count else b""
    view = np.frombuffer(raw, dtype=np_dtype, count=count).reshape(shape)
    from irlab.runtime.ndarray import NDArray

    return NDArray(view)


def _packed_hook(name, values, codes, n):
    try:
        from irlab.runtime.registry import get_global_func

        func = get_global_func(name.decode())
        vals = (ctypes.c_int64 * n).from_address(values) if n else []
        kinds = (ctypes.c_int32 * n).from_address(codes) if n else []
        args = []
        for value, code in zip(vals, kinds):
            if code == abi.CODE_FLOAT:
                args.append(struct.unpack("<d", struct.pack("<q", value))[0])
            elif code == abi.CODE_STR:
                args.append(ctypes.string_at(value).decode())
            elif code == abi.CODE_ARRAY:
                args.append(_decode_array(value))
            else:  # ints, uints, raw handles
                args.append(int(value))
        func(*args)
        return 0
    except BaseException as err:  # noqa: BLE001
        _pending.error = err
        return abi.ERR_CALLBACK


_PARALLEL_CALLBACK = PARALLEL_TYPE(_parallel_hook)
_PACKED_CALLBACK = PACKED_TYPE(_packed_hook)
HOOKS = {abi.PARALLEL_HOOK: ctypes.cast(_PARALLEL_CALLBACK, ctypes.c_void_p).value,
         abi.PACKED_HOOK: ctypes.cast(_PACKED_CALLBACK, ctypes.c_void_p).value}
_PYTHON_PARALLEL_HOOK = HOOKS[abi.PARALLEL_HOOK]


def install_hooks(address_of):
    """Point a loaded library's hook variables at the callbacks: the parallel-loop hook at
    the native dispatcher when there is one (``irlab.runtime.threading.parallel_hook``: a
    claimed call's loops then fan out without entering Python), else at ``_parallel_hook``.

    ``address_of(symbol)`` gives a variable's address (or None when the library has none)."""
    hooks = dict(HOOKS)
    if hooks[abi.PARALLEL_HOOK] == _PYTHON_PARALLEL_HOOK:
        hooks[abi.PARALLEL_HOOK] = _pool.parallel_hook(_PYTHON_PARALLEL_HOOK)
    for symbol, target in hooks.items():
        address = address_of(symbol)
        if address:
            ctypes.c_void_p.from_address(address).value = target


# -- argument checking -------------------------------------------------------------------
def _dims(values):
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


class _Call:
    """The slots of one call plus the staging copies to write back afterwards."""

    __slots__ = ("slots", "bound", "write_back", "keep")

    def __init__(self, n):
        self.slots = (ctypes.c_int64 * n)()
        self.bound: dict = {}
        self.write_back: list = []
        self.keep: list = []


def _int_range(dtype):
    t = parse_dtype(dtype)
    if t.code == "bool":
        return 0, 1
    if t.code == "uint":
        return 0, (1 << t.bits) - 1
    return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1


class CompiledFunction:
    """A compiled PrimFunc as a Python callable: ``f(*arrays_and_scalars)``."""

    def __init__(self, info: abi.FunctionInfo, address: int, module=None, num_threads=None):
        self.info = info
        self.name = info.name
        self.module = module  # keeps the engine / library (and so the code) alive
        self.num_threads = num_threads
        self._entry = ENTRY_TYPE(address)
        self._parallel = None  # whether a call met a parallel loop (None: not known yet)
        self._slot_of_var = {name: len(info.params) + i
                             for i, name in enumerate(info.bound_vars)}
        # scalar parameters that buffers use as a dimension, stride or offset
        bound = set(info.bound_vars)
        self._scalar_dims = {p.name: i for i, p in enumerate(info.params)
                             if p.kind == "scalar" and p.name not in bound}
        self._checkers = [self._checker(i, p) for i, p in enumerate(info.params)]

    def __repr__(self):
        return f"<irlab compiled function {self.info.signature()}>"

    # one checker per parameter, built once
    def _checker(self, index, param):
        if param.kind == "buffer":
            return self._buffer_checker(index, param)
        if param.kind == "handle":
            return self._handle_checker(index, param)
        return self._scalar_checker(index, param)

    def _where(self, index, param):
        return f"{self.name}: argument {index} ({param.name})"

    def _scalar_checker(self, index, param):
        t = parse_dtype(param.dtype)
        where = self._where(index, param)
        if t.is_float:
            def check(call, value):
                if isinstance(value, (bool, np.bool_)) or not isinstance(
                        value, (int, float, np.integer, np.floating)):
                    raise ArgumentError(f"{where}: expected a {param.dtype} number, "
                                        f"got {type(value).__name__}")
                call.slots[index] = struct.unpack("<q", struct.pack("<d", float(value)))[0]
            return check
        low, high = _int_range(param.dtype)

        def check(call, value):
            if not isinstance(value, (int, np.integer, bool, np.bool_)):
                raise ArgumentError(f"{where}: expected a {param.dtype} integer, "
                                    f"got {type(value).__name__}")
            value = int(value)
            if not low <= value <= high:
                raise ArgumentError(f"{where}: {value} does not fit in {param.dtype}")
            call.slots[index] = value if value < (1 << 63) else value - (1 << 64)
        return check

    def _handle_checker(self, index, param):
        where = self._where(index, param)

        def check(call, value):
            if value is None:
                call.slots[index] = 0
            elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                call.slots[index] = int(value)
            elif hasattr(value, "data_ptr"):
                call.slots[index] = value.data_ptr
                call.keep.append(value)
            else:
                raise ArgumentError(f"{where}: expected an NDArray or an address, "
                                    f"got {type(value).__name__}")
        return check

    def _buffer_checker(self, index, param):
        where = self._where(index, param)
        want = to_numpy_dtype(param.dtype)
        ndim = len(param.shape)
        expected = _dims(param.shape)
        info = self.info

        def bind(call, name, value, what):
            slot = self._slot_of_var.get(name)
            seen = call.bound.get(name)
            if seen is None:
                call.bound[name] = (value, where, what)
                if slot is not None:  # else a scalar parameter, checked in __call__
                    call.slots[slot] = value
            elif seen[0] != value:
                raise ArgumentError(
                    f"{where}: {what} is {value}, but {name} = {seen[0]} from {seen[1]} "
                    f"({seen[2]}); {info.signature()}")

        from irlab.runtime.ndarray import NDArray

        static = tuple(param.shape) if param.strides is None and isinstance(
            param.elem_offset, int) and all(isinstance(d, int) for d in param.shape) else None

        def check(call, value):
            # the common case first: a compact, writable, aligned array of the static shape
            if type(value) is NDArray and value._device.device_type == 1:
                array = value._data
            else:
                array = value
            if static is not None and type(array) is np.ndarray and array.dtype == want \
                    and array.shape == static:
                flags = array.flags
                if flags.c_contiguous and flags.writeable:
                    pointer = array.__array_interface__["data"][0]
                    if not pointer % ALIGNMENT:
                        call.keep.append(array)
                        call.slots[index] = pointer
                        return
            full_check(call, value)

        def full_check(call, value):
            if isinstance(value, NDArray):
                if value.device.device_type != 1:
                    raise ArgumentError(f"{where}: expected an array on cpu, "
                                        f"got one on {value.device}")
                array = value._data
            elif isinstance(value, np.ndarray):
                array = value
            else:
                raise ArgumentError(f"{where}: expected an array {param.describe()}, got "
                                    f"{'None' if value is None else type(value).__name__}")
            if array.dtype != want:
                raise ArgumentError(f"{where}: expected dtype {param.dtype}, "
                                    f"got {array.dtype}")
            if array.ndim != ndim:
                raise ArgumentError(f"{where}: expected {ndim} dimensions {expected}, "
                                    f"got {array.ndim} with shape {array.shape}")
            for axis, (dim, size) in enumerate(zip(param.shape, array.shape)):
                if isinstance(dim, int):
                    if dim != size:
                        raise ArgumentError(f"{where}: expected shape {expected}, got "
                                            f"{tuple(array.shape)} (axis {axis})")
                else:
                    bind(call, dim, size, f"axis {axis}")
            itemsize = array.itemsize
            if param.strides is None:
                if not array.flags.c_contiguous:
                    raise ArgumentError(f"{where}: expected a compact (C-contiguous) array, "
                                        f"got strides {array.strides} (bytes)")
            else:
                if any(s % itemsize for s in array.strides):
                    raise ArgumentError(f"{where}: strides {array.strides} are not a "
                                        f"multiple of the element size")
                for axis, (dim, stride) in enumerate(zip(param.strides, array.strides)):
                    if isinstance(dim, int):
                        if dim != stride // itemsize and array.shape[axis] > 1:
                            raise ArgumentError(
                                f"{where}: expected strides {_dims(param.strides)} "
                                f"(elements), got {tuple(s // itemsize for s in array.strides)}")
                    else:
                        bind(call, dim, stride // itemsize, f"stride {axis}")
            if isinstance(param.elem_offset, str):
                bind(call, param.elem_offset, 0, "elem_offset")
            if not array.flags.writeable and array.size:
                if param.written:  # the results would go to a copy and be lost
                    raise ArgumentError(f"{where}: the array is read-only, but the function "
                                        f"writes {param.name}: pass a writeable array")
                # a buffer only read: the copy keeps the strides bound above
                array = _writable_copy(array)
            pointer = array.ctypes.data
            if pointer % ALIGNMENT and array.size and param.strides is None:
                # compact buffers are declared 64-byte aligned to the code: stage a copy
                staged = _aligned_copy(array)
                if array.flags.writeable:
                    call.write_back.append((array, staged))
                call.keep.append(staged)
                pointer = staged.ctypes.data
            call.keep.append(array)
            call.slots[index] = pointer
        return check

    def __call__(self, *args, **kwargs):
        info = self.info
        if kwargs:
            raise ArgumentError(f"{self.name} takes positional arguments only, got "
                                f"{', '.join(kwargs)}=: {info.signature()}")
        if len(args) != len(info.params):
            raise ArgumentError(f"{self.name} takes {len(info.params)} arguments, got "
                                f"{len(args)}: {info.signature()}")
        call = _Call(info.num_slots)
        for checker, value in zip(self._checkers, args):
            checker(call, value)
        for name in info.bound_vars:
            if name not in call.bound:
                raise ArgumentError(f"{self.name}: nothing binds {name}: {info.signature()}")
        for name, index in self._scalar_dims.items():
            seen = call.bound.get(name)
            if seen is not None and int(args[index]) != seen[0]:
                raise ArgumentError(
                    f"{self._where(index, info.params[index])}: {name} = {int(args[index])}, "
                    f"but {seen[1]} has {seen[2]} = {seen[0]}; {info.signature()}")
        self._enter(call)

    def bind(self, args, dynamic=()):
        """This function with the arguments at every position but those in ``dynamic``
        fixed to ``args[position]``: a callable taking the ``dynamic`` arguments (in order).

        The fixed arguments are checked now, once; the dynamic ones at each call, as
        ``__call__`` checks them. For executors calling a kernel on the same arrays every time
        (the Relax VM's constants and planned tensors, as the graph executor's views): a
        numpy array never changes its shape, dtype or address, so a check that passed once
        cannot fail later. The callable keeps the fixed arrays alive. Returns None (call the
        function itself) when the function has symbolic dimensions (every call binds them)
        or a fixed array would need a staging copy written back after each call."""
        info = self.info
        if len(args) != len(info.params):
            raise ArgumentError(f"{self.name} takes {len(info.params)} arguments, got "
                                f"{len(args)}: {info.signature()}")
        if info.bound_vars or self._scalar_dims:
            return None
        dynamic = tuple(dynamic)
        if any(not _own_memory(value) for position, value in enumerate(args)
               if position not in dynamic):
            return None
        fixed = _Call(info.num_slots)
        for position, (checker, value) in enumerate(zip(self._checkers, args)):
            if position not in dynamic:
                checker(fixed, value)
        if fixed.write_back:
            return None
        if not dynamic:
            return lambda: self._enter(fixed)
        checkers = [self._checkers[position] for position in dynamic]
        slots_type, template = type(fixed.slots), fixed.slots

        def call(*values):
            if len(values) != len(checkers):
                raise ArgumentError(f"{self.name} bound with {len(checkers)} free arguments, "
                                    f"got {len(values)}: {info.signature()}")
            this = _Call.__new__(_Call)
            this.slots, this.bound = slots_type.from_buffer_copy(template), {}
            this.write_back, this.keep = [], []
            for checker, value in zip(checkers, values):
                checker(this, value)
            self._enter(this)
        call.fixed = fixed  # keeps the fixed arrays alive
        return call

    def _enter(self, call):
        """Run the machine code on the checked slots of ``call``."""
        _pending.error = None
        state = _pool._state  # the thread count parallel loops of this call use
        previous = getattr(state, "num_threads", None)
        threads = state.num_threads = self.num_threads or previous
        # a function seen to have no parallel loop does not claim the native dispatcher
        claim = _pool.claim_dispatch(threads) if self._parallel is not False else None
        code = abi.ERR_CALLBACK
        try:
            code = self._entry(call.slots)
        finally:
            state.num_threads = previous
            if claim is not None:
                loops = _pool.release_dispatch(claim, code)
                if self._parallel is None and not code:
                    self._parallel = loops > 0
        for original, staged in call.write_back:
            np.copyto(original, staged, casting="no")
        if code != 0:
            self._raise(code)

    def _raise(self, code):
        if code == abi.ERR_CALLBACK:
            err, _pending.error = getattr(_pending, "error", None), None
            if isinstance(err, IrlabError):
                raise err
            raise IrlabError(f"{self.name}: a function called from compiled code raised "
                             f"{type(err).__name__}: {err}") from err
        if code == abi.ERR_ALLOC:
            raise IrlabError(f"{self.name}: out of memory allocating a buffer")
        if 0 < code <= len(self.info.asserts):
            raise IrlabError(f"{self.name}: assertion failed: {self.info.asserts[code - 1]}")
        raise IrlabError(f"{self.name}: compiled code returned the unknown status {code}")


def _own_memory(value) -> bool:
    """Whether a call passes ``value``'s own memory to the code (no staged copy made from it
    that a later change of ``value`` would not reach): anything but a read-only array."""
    array = getattr(value, "_data", value)
    return not isinstance(array, np.ndarray) or array.flags.writeable


def _writable_copy(array: np.ndarray) -> np.ndarray:
    """A writable copy of ``array`` with exactly its strides (negative or zero included)."""
    if array.flags.c_contiguous:
        return array.copy()
    low = high = 0
    for size, stride in zip(array.shape, array.strides):
        if stride < 0:
            low += stride * (size - 1)
        else:
            high += stride * (size - 1)
    raw = np.empty(high - low + array.itemsize, dtype=np.uint8)
    out = np.ndarray(array.shape, array.dtype, buffer=raw, offset=-low, strides=array.strides)
    np.copyto(out, array, casting="no")
    return out


def _aligned_copy(array: np.ndarray) -> np.ndarray:
    raw = np.empty(array.nbytes + ALIGNMENT, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    out = raw[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    np.copyto(out, array, casting="no")
    return out


__all__ = ["CompiledFunction", "install_hooks", "HOOKS"]
