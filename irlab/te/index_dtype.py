"""``create_prim_func(..., index_dtype_override="int64")``: every index of a PrimFunc made int64.

Buffer shapes, loop ranges, block iteration domains and bindings and the indices of loads and
stores become int64 expressions over int64 twins of the loop and block variables, as TVM's
index dtype normalizer does. Values keep their dtypes: a comparison of indices is made on the
int64 indices; any other int32 value that uses a loop variable reads it through a cast.
"""

from __future__ import annotations

from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import Buffer, BufferRegion, MatchBufferRegion, Range
from irlab.tir.function import PrimFunc
from irlab.tir.functor import StmtExprMutator

_ARITH = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max)
_NARROW = ("int32", "int16", "int8")


class _IndexDtype(StmtExprMutator):
    """Rewrites a PrimFunc body with ``dtype`` indices (see the module docstring)."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype
        self.vars = {}  # id(int32 var) -> its ``dtype`` twin
        self.buffers = {}  # id(buffer) -> the buffer with ``dtype`` shape

    # -- index context ----------------------------------------------------------------------
    def twin(self, var):
        if id(var) not in self.vars:
            self.vars[id(var)] = type(var)(var.name_hint, self.dtype)
        return self.vars[id(var)]

    def index(self, e):
        """``e`` as a ``dtype`` index expression."""
        e = E.convert(e)
        if e.dtype not in _NARROW:
            return self.visit_expr(e)
        if isinstance(e, E.IntImm):
            return E.IntImm(self.dtype, e.value)
        if isinstance(e, E.Var):
            return self.twin(e)
        if isinstance(e, _ARITH):
            return type(e)(self.index(e.a), self.index(e.b))
        if isinstance(e, E.Select):
            return E.Select(self.visit_expr(e.condition), self.index(e.true_value),
                            self.index(e.false_value))
        if isinstance(e, E.Cast) and e.value.dtype.startswith(("int", "uint")):
            return self.index(e.value)
        return E.Cast(self.dtype, self.visit_expr(e))

    def range(self, r):
        return Range.from_min_extent(self.index(r.min), self.index(r.extent))

    def buffer(self, buf):
        if id(buf) not in self.buffers:
            self.buffers[id(buf)] = buf.with_fields(
                shape=tuple(self.index(d) for d in buf.shape),
                strides=tuple(self.index(d) for d in buf.strides),
                elem_offset=self.index(buf.elem_offset))
        return self.buffers[id(buf)]

    def annotation(self, value):
        """An annotation with the buffers it names replaced (``layout_free_placeholders``)."""
        if isinstance(value, Buffer):
            return self.buffer(value)
        if isinstance(value, (tuple, list)):
            return type(value)(self.annotation(v) for v in value)
        return value

    def region(self, r):
        return BufferRegion(self.buffer(r.buffer), tuple(self.range(x) for x in r.region))

    # -- value context ----------------------------------------------------------------------
    def visit_var(self, v):
        return E.Cast(v.dtype, self.vars[id(v)]) if id(v) in self.vars else v

    visit_size_var = visit_var

    def visit_buffer_load(self, e):
        return E.BufferLoad(self.buffer(e.buffer), tuple(self.index(i) for i in e.indices))

    def _compare(self, e):
        if e.a.dtype in _NARROW and e.a.dtype == e.b.dtype:
            return type(e)(self.index(e.a), self.index(e.b))
        return self._mutate_children(e)

    visit_lt = visit_le = visit_gt = visit_ge = visit_eq = visit_ne = _compare

    # -- statements -------------------------------------------------------------------------
    def visit_buffer_store(self, s):
        return S.BufferStore(self.buffer(s.buffer), self.visit_expr(s.value),
                             tuple(self.index(i) for i in s.indices), span=s.span)

    def visit_for(self, s):
        return s.with_fields(loop_var=self.twin(s.loop_var), min=self.index(s.min),
                             extent=self.index(s.extent), body=self.visit_stmt(s.body))

    def visit_block_realize(self, s):
        return s.with_fields(iter_values=tuple(self.index(v) for v in s.iter_values),
                             predicate=self.visit_expr(s.predicate),
                             block=self.visit_stmt(s.block))

    def visit_block(self, b):
        ivs = tuple(iv.with_fields(var=self.twin(iv.var), dom=self.range(iv.dom))
                    for iv in b.iter_vars)
        return b.with_fields(
            iter_vars=ivs, reads=tuple(self.region(r) for r in b.reads),
            writes=tuple(self.region(r) for r in b.writes),
            alloc_buffers=tuple(self.buffer(x) for x in b.alloc_buffers),
            match_buffers=tuple(MatchBufferRegion(self.buffer(m.buffer), self.region(m.source))
                                for m in b.match_buffers),
            annotations=self.annotation(b.annotations),
            init=None if b.init is None else self.visit_stmt(b.init),
            body=self.visit_stmt(b.body))


def override_index_dtype(func, dtype="int64"):
    """``func`` (a PrimFunc) with ``dtype`` indices; its params and attrs stay."""
    mutator = _IndexDtype(dtype)
    buffer_map = [(p, mutator.buffer(b)) for p, b in func.buffer_map.items()]
    body = mutator.visit_stmt(func.body)
    return PrimFunc(func.params, body, func.ret_type, buffer_map, func.attrs, func.span)
