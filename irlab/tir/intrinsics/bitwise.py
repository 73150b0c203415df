"""The integer bit intrinsics (``tir.bitwise_and``, ``tir.shift_left``, ``tir.popcount``,
``tir.clz``...):
numpy reference and C operator; the LLVM instructions are lowerings of the LLVM codegen."""

from __future__ import annotations

import numpy as np

from irlab.runtime.dtype import parse_dtype
from irlab.tir.intrinsics.record import register_intrinsic


def _invert(x):
    """``~x``; on bools the logical not (Python's ``~True`` is -2)."""
    if isinstance(x, (bool, np.bool_)):
        return not x
    if isinstance(x, np.ndarray) and x.dtype == np.bool_:
        return np.logical_not(x)
    return ~x


def _popcount(x):
    """The number of set bits in the two's-complement pattern of ``x`` (of its own width)."""
    x = np.asarray(x)
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}")) if x.dtype.kind == "i" else x
    return np.bitwise_count(unsigned).astype(x.dtype)


def _clz(x):
    """The number of leading zero bits of ``x`` in its own width (the width when ``x`` is 0)."""
    x = np.asarray(x)
    bits = 8 * x.dtype.itemsize
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    count = np.vectorize(lambda v: bits - int(v).bit_length(), otypes=[x.dtype])(unsigned)
    return count if count.ndim else count[()]


def _int32_result(args):
    return str(parse_dtype("int32").with_lanes(parse_dtype(args[0].dtype).lanes))


# name, numpy reference, C operator (the same on every integer width; shifts on a signed
# left operand are arithmetic, as LLVM's ashr)
_BINARY = (
    ("bitwise_and", np.bitwise_and, "&"),
    ("bitwise_or", np.bitwise_or, "|"),
    ("bitwise_xor", np.bitwise_xor, "^"),
    ("shift_left", np.left_shift, "<<"),
    ("shift_right", np.right_shift, ">>"),
)
for _name, _ref, _operator in _BINARY:
    register_intrinsic("tir." + _name, 2, numpy=_ref, c_operator=_operator)
register_intrinsic("tir.bitwise_not", 1, numpy=_invert)
register_intrinsic("tir.popcount", 1, numpy=_popcount)
register_intrinsic("tir.clz", 1, numpy=_clz, dtype_rule=_int32_result,
                   doc="count leading zeros (the width for 0), as int32 (TVM's tir.clz)")
