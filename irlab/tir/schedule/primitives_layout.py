"""transform_layout: rewrite a buffer's shape and every access through an index map."""

from __future__ import annotations

import inspect

from irlab.arith import Analyzer
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import Range, decl_buffer
from irlab.tir.functor import StmtExprMutator
from irlab.tir.schedule.errors import ScheduleError


class IndexMap:
    """A Python index map (``lambda i, j: (i // 4, j, i % 4)``) that prints as TVM's."""

    def __init__(self, fn):
        self.fn = fn.fn if isinstance(fn, IndexMap) else fn
        try:
            self.names = list(inspect.signature(self.fn).parameters)
        except (TypeError, ValueError) as exc:
            raise ScheduleError(f"index_map must be a Python function, got {fn!r}") from exc

    def apply(self, indices):
        out = self.fn(*indices)
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        return [E.convert(e) for e in out]

    def __call__(self, *indices):
        return self.apply(indices)

    def __str__(self):
        from irlab.tir.text import expr_to_text

        vs = [E.Var(n, "int32") for n in self.names]
        body = ", ".join(expr_to_text(e) for e in self.apply(vs))
        return f"lambda {', '.join(self.names)}: ({body},)"


class _Rewrite(StmtExprMutator):
    def __init__(self, old, new, index_map):
        super().__init__()
        self.old, self.new, self.map = old, new, index_map

    def indices(self, indices):
        return [Analyzer().simplify(e) for e in self.map.apply(list(indices))]

    def visit_buffer_load(self, e):
        e = self._mutate_children(e)
        if e.buffer is not self.old:
            return e
        return E.BufferLoad(self.new, self.indices(e.indices))

    def visit_buffer_store(self, s):
        s = self._mutate_stmt_children(s)
        if s.buffer is not self.old:
            return s
        return S.BufferStore(self.new, s.value, self.indices(s.indices))

    def region(self, r):
        if r.buffer is not self.old:
            return r
        if not all(isinstance(x.extent, E.IntImm) and x.extent.value == 1 for x in r.region):
            raise ScheduleError(f"an access region of {self.old.name} is not a single point: "
                                "transform_layout supports point regions only")
        return r.with_fields(buffer=self.new, region=tuple(
            Range.from_min_extent(m, 1) for m in self.indices([x.min for x in r.region])))

    def visit_block(self, b):
        b = self._mutate_stmt_children(b)
        if any(m.buffer is self.old for m in b.match_buffers):
            raise ScheduleError(f"buffer {self.old.name} is matched by block {b.name_hint}")
        allocs = tuple(self.new if a is self.old else a for a in b.alloc_buffers)
        return b.with_fields(reads=tuple(self.region(r) for r in b.reads),
                             writes=tuple(self.region(r) for r in b.writes),
                             alloc_buffers=allocs)


def transform_layout(func, realize, buffer, index_map):
    """``func`` with ``buffer`` (``("read"|"write", i)`` of the block, or a name) laid out
    as ``index_map`` says."""
    block = realize.block
    if isinstance(buffer, str) and buffer not in ("read", "write"):
        found = [r.buffer for r in block.reads + block.writes if r.buffer.name == buffer]
        if not found:
            raise ScheduleError(f"block {block.name_hint} does not access a buffer {buffer!r}")
        buf = found[0]
    else:
        try:
            kind, index = buffer
            regions = {"read": block.reads, "write": block.writes}[kind]
            buf = regions[index].buffer
        except (KeyError, IndexError, TypeError, ValueError):
            raise ScheduleError(f"bad buffer {buffer!r} for block {block.name_hint}: use "
                                "(\"read\"|\"write\", index) or a buffer name") from None
    index_map = IndexMap(index_map)
    if len(index_map.names) != len(buf.shape):
        raise ScheduleError(f"index_map takes {len(index_map.names)} indices but buffer "
                            f"{buf.name} has {len(buf.shape)} dimensions")
    analyzer = Analyzer()
    vs = [E.Var(n, s.dtype) for n, s in zip(index_map.names, buf.shape)]
    for v, s in zip(vs, buf.shape):
        analyzer.bind(v, Range.from_min_extent(0, s))
    shape = []
    for e in index_map.apply(vs):
        b = analyzer.const_int_bound(e)
        if b.min_value < 0 or b.max_value >= (1 << 31):
            raise ScheduleError(f"index_map output {e} is not a bounded non-negative index")
        shape.append(b.max_value + 1)
    new = decl_buffer(shape, buf.dtype, buf.name, scope=buf.scope)
    body = _Rewrite(buf, new, index_map).visit_stmt(func.body)
    buffer_map = [(p, new if b is buf else b) for p, b in func.buffer_map.items()]
    return func.with_fields(body=body, buffer_map=type(func.buffer_map)(buffer_map)), index_map
