"""Buffers (typed multi-dimensional views of memory), ranges and buffer regions."""

from __future__ import annotations

from irlab.errors import TIRError
from irlab.runtime.dtype import normalize_dtype
from irlab.ir.node import Node
from irlab.tir import op as _op
from irlab.tir.expr import BufferLoad, PrimExpr, Var, convert


class Range(Node):
    """The half-open interval ``[min, min + extent)``.

    As in TVM, ``Range(begin, end)`` takes an end and ``Range(n)`` means ``[0, n)``;
    ``Range.from_min_extent(min, extent)`` takes an extent.
    """

    _non_structural = ("span",)
    min: PrimExpr
    extent: PrimExpr
    span: object

    def __init__(self, begin=None, end=None, span=None, *, min=None, extent=None):  # noqa: A002
        if min is None:
            if end is None:
                begin, end = 0, begin
            min = convert(begin)
            extent = _op.subtract(end, min)
        super().__init__(convert(min), convert(extent), span)

    @staticmethod
    def from_min_extent(min_value, extent, span=None) -> "Range":
        return Range(min=min_value, extent=extent, span=span)

    __hash__ = object.__hash__  # identity, in C

    def __eq__(self, other):
        return self is other

    def astext(self):
        from irlab.tir.text import expr_to_text

        return f"Range({expr_to_text(self.min)}, extent={expr_to_text(self.extent)})"


class Buffer(Node):
    """A multi-dimensional view of the memory ``data`` points to.

    ``shape``/``strides`` are tuples of PrimExprs (empty strides: compact row-major);
    ``elem_offset`` is where element 0 sits in ``data``. A Buffer is *defined* by a
    PrimFunc's buffer_map, a Block's alloc_buffers/match_buffers or a DeclBuffer; its ``data``
    var is bound there. The name is for printing only (ignored by structural equality).
    """

    _non_structural = ("name", "span")
    data: Var
    dtype: str
    shape: tuple
    strides: tuple
    elem_offset: PrimExpr
    name: str
    axis_separators: tuple
    scope: str
    span: object

    def __init__(self, data, dtype, shape, strides=(), elem_offset=None, name="buffer",
                 axis_separators=(), scope="global", span=None):
        shape = tuple(convert(s) for s in _as_tuple(shape))
        strides = tuple(convert(s) for s in _as_tuple(strides or ()))
        elem_offset = convert(0 if elem_offset is None else elem_offset,
                              shape[0].dtype if shape else "int32")
        super().__init__(data, normalize_dtype(dtype), shape, strides, elem_offset, str(name),
                         tuple(int(a) for a in axis_separators or ()), scope or "global", span)

    __hash__ = object.__hash__  # identity, in C

    def __eq__(self, other):
        return self is other

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        if any(isinstance(i, slice) for i in indices):
            raise TIRError(f"buffer {self.name}: slices are not supported, index element-wise")
        if len(indices) != len(self.shape):
            raise TIRError(f"buffer {self.name} has {len(self.shape)} dimensions, "
                           f"indexed with {len(indices)}")
        return BufferLoad(self, indices)

    def vload(self, indices, dtype=None):
        return self[tuple(indices) if isinstance(indices, (tuple, list)) else indices]

    def vstore(self, indices, value):
        from irlab.tir.stmt import BufferStore

        return BufferStore(self, value, tuple(indices) if isinstance(indices, (tuple, list))
                           else (indices,))

    def astext(self):
        dims = ", ".join(_text(s) for s in self.shape)
        return f"Buffer({self.name}, ({dims}{',' if len(self.shape) == 1 else ''}), {self.dtype})"


def _text(e):
    from irlab.tir.text import expr_to_text

    return expr_to_text(e)


def _as_tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def decl_buffer(shape, dtype="float32", name="buffer", data=None, strides=None,
                elem_offset=None, scope="", axis_separators=None, span=None) -> Buffer:
    """A new Buffer; a fresh ``data`` handle variable is made unless one is given."""
    shape = _as_tuple(shape)
    if data is None:
        data = Var(name, "handle")
    return Buffer(data, dtype, shape, strides or (), elem_offset, name, axis_separators or (),
                  scope or "global", span)


class BufferRegion(Node):
    """The sub-region ``buffer[r0, r1, ...]`` (one Range per dimension)."""

    _non_structural = ("span",)
    buffer: Buffer
    region: tuple
    span: object

    def __init__(self, buffer, region, span=None):
        region = tuple(r if isinstance(r, Range) else Range.from_min_extent(r, 1)
                       for r in region)
        if len(region) != len(buffer.shape):
            raise TIRError(f"region of {buffer.name} has {len(region)} ranges for "
                           f"{len(buffer.shape)} dimensions")
        super().__init__(buffer, region, span)

    @staticmethod
    def full_region(buffer) -> "BufferRegion":
        return BufferRegion(buffer, [Range.from_min_extent(0, s) for s in buffer.shape])

    __hash__ = object.__hash__  # identity, in C

    def __eq__(self, other):
        return self is other

    def astext(self):
        parts = []
        for r in self.region:
            if isinstance(r.extent, PrimExpr) and getattr(r.extent, "value", None) == 1:
                parts.append(_text(r.min))
            else:
                parts.append(f"{_text(r.min)}:{_text(_op.add(r.min, r.extent))}")
        return f"{self.buffer.name}[{', '.join(parts)}]"


class MatchBufferRegion(Node):
    """A Block-local ``buffer`` that views the region ``source`` (``T.match_buffer``)."""

    buffer: Buffer
    source: BufferRegion

    __hash__ = object.__hash__  # identity, in C

    def __eq__(self, other):
        return self is other
