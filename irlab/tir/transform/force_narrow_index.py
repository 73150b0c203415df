"""``tir.ForceNarrowIndexToInt32``: every int64 index of a PrimFunc becomes int32.

Relax shapes are int64, so TIR written against them (``n = T.int64()``) indexes in int64,
while the kernels ``emit_te`` / LegalizeOps make index in int32. FuseTIR merges both into one
function, whose indices must then share a dtype: it narrows the int64 kernels with this pass
(TVM's ``ForceNarrowIndexToInt32`` does the same for GPU kernels).

Before::

    n = T.int64()
    X = T.match_buffer(x, (n,))
    for i in range(n):                      # i: int64
        Y[i] = X[i] + T.float32(1)

After: ``n`` and ``i`` are int32 variables, int64 constants int32 ones, ``T.Cast("int64", e)``
of an index is ``e``. Integer data of 64 bits (an int64 buffer) is refused, as TVM does: its
loads and stores cannot be told from indices. A constant that does not fit in int32 is an
error too; nothing else can overflow, since int32 extents are what irlab's TIR uses anyway.
"""

from __future__ import annotations

from irlab.errors import DiagnosticError
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import Buffer, BufferRegion, MatchBufferRegion
from irlab.tir.function import PrimFunc
from irlab.tir.functor import StmtExprMutator, post_order_visit

__all__ = ["force_narrow_index_to_int32", "has_int64_index", "can_narrow"]

_WIDE = ("int64", "uint64")


def has_int64_index(func: PrimFunc) -> bool:
    """Whether ``func`` indexes in int64: an int64 buffer dim, scalar parameter, loop or block
    variable (int64 *data*, such as ``take``'s indices, does not count)."""
    found = []

    def check(node):
        if isinstance(node, S.For) and node.loop_var.dtype == "int64":
            found.append(node)
        elif isinstance(node, S.Block):
            buffers = node.alloc_buffers + tuple(m.buffer for m in node.match_buffers)
            if any(iv.var.dtype == "int64" for iv in node.iter_vars) or \
                    any(d.dtype == "int64" for b in buffers for d in b.shape):
                found.append(node)

    if any(p.dtype == "int64" for p in func.params) or \
            any(d.dtype == "int64" for b in func.buffer_map.values() for d in b.shape):
        return True
    post_order_visit(func.body, check)
    return bool(found)


def can_narrow(func: PrimFunc) -> bool:
    """Whether ``force_narrow_index_to_int32`` accepts ``func`` (it has no int64 data, or
    indexes in int32 already)."""
    try:
        force_narrow_index_to_int32(func)
    except DiagnosticError:
        return False
    return True


class _Narrower(StmtExprMutator):
    """Rewrites int64 variables, constants and casts to int32; buffers with int64 dims are
    rebuilt (same data variable) with int32 ones."""

    def __init__(self, func_name):
        super().__init__()
        self.func_name = func_name
        self.var_map: dict = {}
        self.buffer_map: dict = {}

    # -- expressions ---------------------------------------------------------------------
    def visit_var(self, v):
        if v.dtype != "int64":
            return v
        new = self.var_map.get(v)
        if new is None:
            new = self.var_map[v] = type(v)(v.name_hint, "int32", span=v.span)
        return new

    visit_size_var = visit_var

    def visit_int_imm(self, e):
        if e.dtype != "int64":
            return e
        if not -2 ** 31 <= e.value < 2 ** 31:
            raise DiagnosticError(f"ForceNarrowIndexToInt32: {self.func_name} has the int64 "
                                  f"constant {e.value}, which does not fit in int32", e)
        return E.IntImm("int32", e.value, e.span)

    def visit_cast(self, e):
        value = self.visit_expr(e.value)
        dtype = "int32" if e.dtype == "int64" else e.dtype
        if value.dtype == dtype:
            return value
        return e if value is e.value and dtype == e.dtype else E.Cast(dtype, value, e.span)

    def visit_call(self, e):
        new = self._mutate_children(e)
        return new.with_fields(dtype="int32") if new.dtype == "int64" else new

    def visit_buffer_load(self, e):
        indices = tuple(self.visit_expr(i) for i in e.indices)
        buffer = self.buffer(e.buffer)
        if buffer is e.buffer and all(a is b for a, b in zip(indices, e.indices)):
            return e
        return E.BufferLoad(buffer, indices, e.span)

    # -- buffers -------------------------------------------------------------------------
    def buffer(self, buf):
        """``buf`` with int32 dims (the same object when it has none of int64)."""
        new = self.buffer_map.get(buf)
        if new is not None:
            return new
        if buf.dtype in _WIDE:
            raise DiagnosticError(f"ForceNarrowIndexToInt32: {self.func_name} has the "
                                  f"{buf.dtype} buffer {buf.name}; its values cannot be told "
                                  f"from indices", buf)
        shape = tuple(self.visit_expr(d) for d in buf.shape)
        strides = tuple(self.visit_expr(d) for d in buf.strides)
        offset = self.visit_expr(buf.elem_offset)
        new = buf
        if any(a is not b for a, b in zip(shape + strides + (offset,),
                                          buf.shape + buf.strides + (buf.elem_offset,))):
            new = Buffer(buf.data, buf.dtype, shape, strides, offset, buf.name,
                         buf.axis_separators, buf.scope, buf.span)
        self.buffer_map[buf] = new
        return new

    def _mutate_value(self, value):
        if isinstance(value, Buffer):
            return self.buffer(value)
        if isinstance(value, BufferRegion):
            region = self._mutate_value(value.region)
            return BufferRegion(self.buffer(value.buffer), region, value.span)
        if isinstance(value, MatchBufferRegion):
            source = self._mutate_value(value.source)
            return MatchBufferRegion(self.buffer(value.buffer), source)
        if isinstance(value, S.IterVar):
            return value.with_fields(dom=self._mutate_value(value.dom),
                                     var=self.visit_expr(value.var))
        return super()._mutate_value(value)

    def visit_buffer_store(self, s):
        new = self._mutate_stmt_children(s)
        return new.with_fields(buffer=self.buffer(s.buffer))

    def visit_decl_buffer(self, s):
        new = self._mutate_stmt_children(s)
        return new.with_fields(buffer=self.buffer(s.buffer))

    # -- statements binding variables ----------------------------------------------------
    def visit_for(self, s):
        new = self._mutate_stmt_children(s)
        binding = s.thread_binding
        return new.with_fields(loop_var=self.visit_expr(s.loop_var), thread_binding=(
            None if binding is None else self._mutate_value(binding)))

    def visit_let(self, e):
        new = self._mutate_children(e)
        return new.with_fields(var=self.visit_expr(e.var))

    def visit_allocate(self, s):
        if s.dtype in _WIDE:
            raise DiagnosticError(f"ForceNarrowIndexToInt32: {self.func_name} allocates "
                                  f"{s.dtype} data, which cannot be told from indices", s)
        return self._mutate_stmt_children(s)

    def visit_let_stmt(self, s):
        new = self._mutate_stmt_children(s)
        return new.with_fields(var=self.visit_expr(s.var))

    def visit_block(self, block):
        new = self._mutate_stmt_children(block)
        return new.with_fields(
            iter_vars=tuple(self._mutate_value(iv) for iv in block.iter_vars),
            alloc_buffers=tuple(self.buffer(b) for b in block.alloc_buffers),
            match_buffers=tuple(self._mutate_value(m) for m in block.match_buffers))


def force_narrow_index_to_int32(func: PrimFunc, mod=None, ctx=None) -> PrimFunc:
    """``func`` with its int64 indices as int32 (``func`` itself when it has none)."""
    if not has_int64_index(func):
        return func
    name = func.attrs["global_symbol"] if func.attrs is not None and \
        "global_symbol" in func.attrs.keys() else "the PrimFunc"
    narrower = _Narrower(name)
    buffer_map = [(narrower.visit_expr(p), narrower.buffer(b))
                  for p, b in func.buffer_map.items()]
    params = [narrower.visit_expr(p) for p in func.params]
    body = narrower.visit_stmt(func.body)
    return PrimFunc(params, body, func.ret_type, buffer_map, func.attrs, func.span)
