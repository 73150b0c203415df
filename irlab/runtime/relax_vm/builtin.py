"""The Relax VM's builtins (``vm.builtin.*``), registered as global functions as TVM does:
the shape heap and its match/make codes, run-time struct-info checks, tuples, closures.

A failed check raises ``VMError`` naming the value (``err_ctx``, e.g. ``main: param x``) and the
dimension at fault; it never crashes the process, and the VM stays usable.
"""

from __future__ import annotations

import enum

import numpy as np

from irlab.errors import VMError, VMTypeError, VMValueError
from irlab.runtime.container import ShapeTuple
from irlab.runtime.dtype import normalize_dtype
from irlab.runtime.ndarray import NDArray, array
from irlab.runtime.relax_vm.memory import Storage
from irlab.runtime.relax_vm.specialize import fast_path, reusable_allocation
from irlab.runtime.registry import register_func


class MatchShapeCode(enum.IntEnum):
    """What ``match_shape`` does with dimension ``i`` and its operand."""

    ASSERT_EQUAL_TO_IMM = 0  # the dimension must equal the immediate
    STORE_TO_HEAP = 1  # heap[operand] = dimension (first sight of a symbolic var)
    NO_OP = 2
    ASSERT_EQUAL_TO_LOAD = 3  # the dimension must equal heap[operand] (a var seen before)


class MakeShapeCode(enum.IntEnum):
    """Where ``make_shape`` reads dimension ``i`` from."""

    USE_IMM = 0
    LOAD_SHAPE = 1


# plain ints: comparing them is much cheaper than building enum members on every call
_IMM, _STORE, _LOAD = (int(MatchShapeCode.ASSERT_EQUAL_TO_IMM),
                       int(MatchShapeCode.STORE_TO_HEAP),
                       int(MatchShapeCode.ASSERT_EQUAL_TO_LOAD))
_MATCH_CODES = frozenset(int(c) for c in MatchShapeCode)
_USE_IMM = int(MakeShapeCode.USE_IMM)


class VMClosure:
    """A VM function with some arguments bound (``vm.builtin.make_closure``)."""

    __slots__ = ("func_name", "impl")

    def __init__(self, func_name, impl):
        self.func_name = func_name
        self.impl = impl

    def __call__(self, *args):
        return self.impl(*args)

    def __repr__(self):
        return f"VMClosure({self.func_name})"


def _context(err_ctx) -> str:
    return f"{err_ctx}: " if err_ctx else ""


def _heap_data(heap):
    return None if heap is None else np.asarray(heap)


def _dim_name(names, i) -> str:
    return f" ({names[i]})" if names and i < len(names) and names[i] else ""


@register_func("vm.builtin.alloc_shape_heap")
def alloc_shape_heap(vm, size):
    """The int64 array holding the values of a function's symbolic shape variables (aligned:
    generated shape functions take it as a buffer)."""
    return Storage(8 * int(size)).alloc_tensor(0, (int(size),), "int64")


reusable_allocation("vm.builtin.alloc_shape_heap", alloc_shape_heap)


@register_func("vm.builtin.match_shape")
def match_shape(value, heap, size, *codes_and_ctx):
    """Check ``value``'s shape (a tensor or a shape) against ``size`` (code, operand) pairs;
    after them come the error context and, optionally, each dimension's symbolic name."""
    shape = _shape_of_value(value, codes_and_ctx[2 * size:])
    size = int(size)
    err_ctx = codes_and_ctx[2 * size] if len(codes_and_ctx) > 2 * size else None
    names = codes_and_ctx[2 * size + 1] if len(codes_and_ctx) > 2 * size + 1 else None
    names = names.split(",") if isinstance(names, str) else names
    if len(shape) != size:
        raise VMError(f"{_context(err_ctx)}match_cast: expected {size} dimensions, got "
                      f"{len(shape)} (shape {tuple(shape)})")
    data = _heap_data(heap)
    for i in range(size):
        code, operand = codes_and_ctx[2 * i], int(codes_and_ctx[2 * i + 1])
        dim = int(shape[i])
        if code == _STORE:
            data[operand] = dim
        elif code == _IMM and dim != operand:
            raise VMError(f"{_context(err_ctx)}match_cast: shape[{i}] is {dim}, expected "
                          f"{operand} (shape {tuple(shape)})")
        elif code == _LOAD and dim != int(data[operand]):
            raise VMError(f"{_context(err_ctx)}match_cast: shape[{i}]{_dim_name(names, i)} is "
                          f"{dim}, but {names[i] if names else 'it'} = {int(data[operand])} "
                          f"from an earlier match (shape {tuple(shape)})")
        elif code not in _MATCH_CODES:
            raise VMError(f"match_shape: unknown code {code}")
    return None


@fast_path("vm.builtin.match_shape", match_shape)
def _fast_match_shape(values, dynamic, exclusive):
    """The value's shape against the codes: a static shape compares as one tuple; symbolic
    dimensions store to / compare with the heap slots, resolved once."""
    if dynamic != (0,):
        return None
    heap, size, rest = values[1], int(values[2]), values[3:]
    codes = [(int(rest[2 * i]), int(rest[2 * i + 1])) for i in range(size)]
    if any(code not in _MATCH_CODES for code, _ in codes):
        return None
    slow = match_shape

    if all(code == _IMM for code, _ in codes):
        expected = tuple(operand for _, operand in codes)

        def check_static(value):
            if type(value) is not NDArray or value.shape != expected:
                slow(value, *values[1:])
        return check_static
    data = _heap_data(heap)
    if data is None:
        return None
    stores = [(i, operand) for i, (code, operand) in enumerate(codes) if code == _STORE]
    checks = [(i, code, operand) for i, (code, operand) in enumerate(codes)
              if code in (_IMM, _LOAD)]

    def check(value):
        shape = value.shape if type(value) is NDArray else None
        if shape is None or len(shape) != size:
            return slow(value, *values[1:])
        for i, operand in stores:
            data[operand] = shape[i]
        for i, code, operand in checks:
            if shape[i] != (operand if code == _IMM else data[operand]):
                return slow(value, *values[1:])
        return None
    return check


def _shape_of_value(value, ctx):
    if isinstance(value, NDArray):
        return value.shape
    if isinstance(value, (tuple, list)):
        return tuple(value)
    err_ctx = ctx[0] if ctx else None
    raise VMError(f"{_context(err_ctx)}match_cast: expected a tensor or a shape, got "
                  f"{type(value).__name__}")


@register_func("vm.builtin.match_prim_value")
def match_prim_value(value, heap, code, operand, err_ctx=None):
    """``match_shape`` for one integer value (``R.Prim``)."""
    code, value, data = MatchShapeCode(code), int(value), _heap_data(heap)
    if code == MatchShapeCode.STORE_TO_HEAP:
        data[operand] = value
    elif code == MatchShapeCode.ASSERT_EQUAL_TO_IMM and value != operand:
        raise VMError(f"{_context(err_ctx)}match_cast: value is {value}, expected {operand}")
    elif code == MatchShapeCode.ASSERT_EQUAL_TO_LOAD and value != int(data[operand]):
        raise VMError(f"{_context(err_ctx)}match_cast: value is {value}, expected "
                      f"{int(data[operand])} from an earlier match")


@register_func("vm.builtin.make_shape")
def make_shape(heap, size, *codes):
    """A ``ShapeTuple`` of ``size`` dims, each an immediate or a heap slot."""
    data = _heap_data(heap)
    dims = []
    for i in range(int(size)):
        code, operand = codes[2 * i], codes[2 * i + 1]
        dims.append(operand if code == _USE_IMM else int(data[operand]))
    return ShapeTuple(dims)


@fast_path("vm.builtin.make_shape", make_shape)
def _fast_make_shape(values, dynamic, exclusive):
    """The dims read straight from the heap slots (or immediates), resolved once."""
    data = _heap_data(values[0]) if not dynamic else None
    if data is None:
        return None
    size, codes = int(values[1]), values[2:]
    dims = [(codes[2 * i] == _USE_IMM, int(codes[2 * i + 1])) for i in range(size)]
    return lambda: ShapeTuple([operand if imm else data[operand] for imm, operand in dims])


@register_func("vm.builtin.make_prim_value")
def make_prim_value(heap, code, operand):
    if MakeShapeCode(code) == MakeShapeCode.USE_IMM:
        return int(operand)
    return int(_heap_data(heap)[operand])


@register_func("vm.builtin.check_tensor_info")
def check_tensor_info(value, ndim, *dtype_and_ctx):
    """``value`` is a tensor of ``ndim`` dims (-1: any) and dtype (``""``/absent: any)."""
    dtype, err_ctx = (None, dtype_and_ctx[0]) if len(dtype_and_ctx) == 1 else dtype_and_ctx
    if not isinstance(value, NDArray):
        raise VMTypeError(f"{_context(err_ctx)}expected a Tensor, got {_kind(value)}")
    if ndim != -1 and value.ndim != ndim:
        raise VMValueError(f"{_context(err_ctx)}expected a Tensor with ndim {ndim}, got ndim "
                           f"{value.ndim} (shape {value.shape})")
    if dtype and str(dtype) not in ("void", "") and value.dtype != normalize_dtype(str(dtype)):
        raise VMValueError(f"{_context(err_ctx)}expected a Tensor with dtype {dtype}, got "
                           f"{value.dtype}")


@fast_path("vm.builtin.check_tensor_info", check_tensor_info)
def _fast_check_tensor_info(values, dynamic, exclusive):
    """One comparison of ndim and dtype for a tensor."""
    if dynamic != (0,):
        return None
    ndim, rest = values[1], values[2:]
    dtype = None if len(rest) == 1 else rest[0]
    want = normalize_dtype(str(dtype)) if dtype and str(dtype) not in ("void", "") else None
    slow = check_tensor_info

    def check(value):
        if type(value) is not NDArray or (ndim != -1 and value.ndim != ndim) or \
                (want is not None and value.dtype != want):
            slow(value, *values[1:])
    return check


@register_func("vm.builtin.check_shape_info")
def check_shape_info(value, ndim, err_ctx=None):
    if not isinstance(value, ShapeTuple):
        raise VMTypeError(f"{_context(err_ctx)}expected a Shape, got {_kind(value)}")
    if ndim != -1 and len(value) != ndim:
        raise VMValueError(f"{_context(err_ctx)}expected a Shape with ndim {ndim}, got "
                           f"{len(value)}")


@register_func("vm.builtin.check_prim_value_info")
def check_prim_value_info(value, dtype, err_ctx=None):
    kinds = {"int": (int, np.integer), "uint": (int, np.integer), "bool": (bool, np.bool_),
             "float": (float, int, np.floating)}
    code = "".join(c for c in str(dtype) if c.isalpha())
    if isinstance(value, NDArray) or not isinstance(value, kinds.get(code, object)):
        raise VMTypeError(f"{_context(err_ctx)}expected a {dtype} value, got {_kind(value)}")


@register_func("vm.builtin.check_tuple_info")
def check_tuple_info(value, size, err_ctx=None):
    if not isinstance(value, (tuple, list)) or isinstance(value, ShapeTuple):
        raise VMTypeError(f"{_context(err_ctx)}expected a Tuple, got {_kind(value)}")
    if len(value) != size:
        raise VMValueError(f"{_context(err_ctx)}expected a Tuple of {size} elements, got "
                           f"{len(value)}")


@register_func("vm.builtin.check_func_info")
def check_func_info(value, err_ctx=None):
    if not callable(value):
        raise VMTypeError(f"{_context(err_ctx)}expected a Function, got {_kind(value)}")


def _kind(value) -> str:
    if isinstance(value, NDArray):
        return f"a Tensor of shape {value.shape}"
    return type(value).__name__


@register_func("vm.builtin.shape_of")
def shape_of(tensor):
    if not isinstance(tensor, NDArray):
        raise VMError(f"shape_of: expected a Tensor, got {_kind(tensor)}")
    return ShapeTuple(tensor.shape)


@register_func("vm.builtin.tensor_to_shape")
def tensor_to_shape(tensor):
    """A 1-d integer tensor's values as a shape."""
    values = tensor.numpy()
    if values.ndim != 1 or values.dtype.kind not in "iu":
        raise VMError(f"tensor_to_shape: expected a 1-d integer tensor, got {values.dtype} "
                      f"of shape {values.shape}")
    return ShapeTuple(values.tolist())


@register_func("vm.builtin.reshape")
def reshape(tensor, shape):
    """A view of ``tensor`` with ``shape`` (same number of elements)."""
    data = np.asarray(tensor)
    if int(np.prod(shape, dtype=np.int64)) != data.size:
        raise VMError(f"reshape: cannot view shape {tensor.shape} as {tuple(shape)}")
    return NDArray(data.reshape(tuple(shape)), tensor.device)


@register_func("vm.builtin.copy")
def copy(value):
    return value


@register_func("vm.builtin.null_value")
def null_value():
    return None


@register_func("vm.builtin.read_if_cond")
def read_if_cond(cond):
    """The truth of an ``If`` condition: a scalar (or size-1) tensor, or a Python value."""
    if isinstance(cond, NDArray):
        data = np.asarray(cond)
        if data.size != 1:
            raise VMError(f"if: the condition must be a scalar, got shape {cond.shape}")
        return bool(data.reshape(()))
    return bool(cond)


@register_func("vm.builtin.make_tuple")
def make_tuple(*fields):
    return tuple(fields)


@register_func("vm.builtin.tuple_getitem")
def tuple_getitem(tup, index):
    if not isinstance(tup, (tuple, list)):
        raise VMError(f"tuple_getitem: expected a Tuple, got {_kind(tup)}")
    if not -len(tup) <= index < len(tup):
        raise VMError(f"tuple_getitem: index {index} out of a Tuple of {len(tup)}")
    return tup[index]


@register_func("vm.builtin.make_closure")
def make_closure(func, *captured):
    """``func`` with its first arguments bound to ``captured``."""
    if not callable(func):
        raise VMError(f"make_closure: expected a function, got {_kind(func)}")
    name = getattr(func, "func_name", getattr(func, "name", "closure"))
    return VMClosure(name, lambda *args: func(*captured, *args))


@register_func("vm.builtin.invoke_closure")
def invoke_closure(vm, closure, *args):
    if not callable(closure):
        raise VMError(f"invoke_closure: expected a closure, got {_kind(closure)}")
    return closure(*args)


@register_func("vm.builtin.to_device")
def to_device(tensor, device_type=1, device_id=0):
    """Every irlab tensor lives on the CPU: a copy there."""
    return array(tensor)


@register_func("vm.builtin.multinomial_from_uniform")
def multinomial_from_uniform(prob, uniform_sample):
    """Sample one index per row of ``prob`` (batch, vocab): the first index whose cumulative
    probability exceeds the row's uniform sample in [0, 1] (the last index if none does)."""
    probs, samples = prob.numpy(), uniform_sample.numpy().reshape(-1)
    if probs.ndim != 2 or samples.shape[0] != probs.shape[0]:
        raise VMValueError(f"multinomial_from_uniform: expected probabilities (batch, vocab) "
                           f"and samples (batch, 1), got {probs.shape} and "
                           f"{uniform_sample.shape}")
    cumulative = np.cumsum(probs, axis=1)
    index = (cumulative <= samples[:, None]).sum(axis=1)
    return array(np.minimum(index, probs.shape[1] - 1).astype("int64").reshape(-1, 1))


__all__ = ["MatchShapeCode", "MakeShapeCode", "VMClosure"]
