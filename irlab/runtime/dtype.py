"""Data types as TVM spells them (``float32``, ``int64``, ``uint8``, ``bool``, ``float32x4``)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from irlab.errors import IrlabError

_DTYPE_RE = re.compile(r"^(float|int|uint|bfloat|bool|handle|void)(\d*)(?:x(\d+))?$")


class _DataTypeFields(NamedTuple):
    code: str
    bits: int
    lanes: int = 1


class DataType(_DataTypeFields):
    """A parsed dtype: type code (``float``/``int``/``uint``/``bool``/...), bits and lanes.

    ``DataType("float32")`` parses a string, as ``tvm.DataType`` does."""

    __slots__ = ()

    def __new__(cls, code, bits=None, lanes=1):
        if bits is None:
            return parse_dtype(code)
        return super().__new__(cls, code, bits, lanes)

    def __eq__(self, other):
        """Equal to another DataType with the same fields, or to its string (as TVM's)."""
        if isinstance(other, str):
            return str(self) == other
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    __hash__ = tuple.__hash__

    def __str__(self):
        if self.code == "bool":
            base = "bool"
        elif self.code in ("handle", "void"):
            base = self.code
        else:
            base = f"{self.code}{self.bits}"
        return base if self.lanes == 1 else f"{base}x{self.lanes}"

    @property
    def is_float(self) -> bool:
        return self.code in ("float", "bfloat")

    @property
    def is_int(self) -> bool:
        return self.code == "int"

    @property
    def is_uint(self) -> bool:
        return self.code == "uint"

    @property
    def is_bool(self) -> bool:
        return self.code == "bool"

    def with_lanes(self, lanes: int) -> "DataType":
        return self._replace(lanes=lanes)

    def element_of(self) -> "DataType":
        return self._replace(lanes=1)


@lru_cache(maxsize=None)
def parse_dtype(dtype) -> DataType:
    """Parse a dtype string (or numpy dtype) into a ``DataType``; raise on anything else."""
    if isinstance(dtype, DataType):
        return dtype
    if not isinstance(dtype, str):
        try:
            dtype = np.dtype(dtype).name
        except TypeError:
            raise IrlabError(f"not a data type: {dtype!r}") from None
    match = _DTYPE_RE.match(dtype)
    if not match:
        raise IrlabError(f"unknown data type {dtype!r} (expected e.g. 'float32', 'int64', 'bool')")
    code, bits, lanes = match.group(1), match.group(2), match.group(3)
    if code == "bool":
        bits_value = 1
    elif code in ("handle", "void"):
        bits_value = 64 if code == "handle" else 0
    else:
        if not bits:
            raise IrlabError(f"data type {dtype!r} needs a bit width, e.g. '{code}32'")
        bits_value = int(bits)
        valid = {"float": (16, 32, 64), "bfloat": (16,), "int": (8, 16, 32, 64),
                 "uint": (1, 8, 16, 32, 64)}[code]
        if bits_value not in valid:
            raise IrlabError(f"unsupported bit width in data type {dtype!r}")
    return DataType(code, bits_value, int(lanes) if lanes else 1)


@lru_cache(maxsize=None)
def normalize_dtype(dtype) -> str:
    """The canonical string form of a dtype (``np.float32`` -> ``"float32"``)."""
    return str(parse_dtype(dtype))


def to_numpy_dtype(dtype) -> np.dtype:
    """The numpy dtype holding one element of ``dtype``."""
    parsed = parse_dtype(dtype)
    if parsed.code == "bool":
        return np.dtype("bool")
    if parsed.code == "bfloat":
        raise IrlabError("bfloat16 has no numpy equivalent")
    if parsed.code in ("handle", "void"):
        raise IrlabError(f"{parsed} has no numpy equivalent")
    return np.dtype(f"{parsed.code}{parsed.bits}")
