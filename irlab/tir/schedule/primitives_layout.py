"""transform_layout: rewrite a buffer's shape and every access through an index map."""

from __future__ import annotations

import inspect
import math

import numpy as np

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


# Maps over more points than this are checked by their form only (splits and permutations).
ENUMERATE_LIMIT = 1 << 22


def _check_bijective(index_map, vs, extents, new_shape, buf):
    """Raise unless ``index_map`` maps the points of ``buf``'s shape one-to-one onto the new
    shape: a map folding two elements together (``i // 2``) would make one store overwrite
    another, and one leaving holes would need a ``pad_value`` (not supported)."""
    outputs = index_map.apply(vs)
    if _is_split_permutation(outputs, vs, extents):
        return
    size, new_size = math.prod(extents), math.prod(new_shape)
    if size > ENUMERATE_LIMIT:
        raise ScheduleError(f"cannot check that index_map {index_map} is bijective over the "
                            f"{tuple(extents)} buffer {buf.name}: write it with splits "
                            "(i // c, i % c) and permutations only")
    grids = np.meshgrid(*[np.arange(n, dtype=np.int64) for n in extents], indexing="ij")
    env = {v: g.reshape(-1) for v, g in zip(vs, grids)}
    try:
        points = [np.broadcast_to(_evaluate(e, env), (size,)) for e in outputs]
    except TypeError:
        raise ScheduleError(f"index_map {index_map} uses an operation transform_layout "
                            "cannot check (use + - * // % min max)") from None
    flat = np.ravel_multi_index(points, new_shape) if points else np.zeros(size, np.int64)
    distinct = len(np.unique(flat))
    if distinct < size:
        raise ScheduleError(f"index_map {index_map} is not bijective over the "
                            f"{tuple(extents)} buffer {buf.name}: it maps {size} elements to "
                            f"{distinct} places (two elements would share one)")
    if new_size != size:
        raise ScheduleError(f"index_map {index_map} is not bijective over the "
                            f"{tuple(extents)} buffer {buf.name}: the new shape "
                            f"{tuple(new_shape)} has {new_size - size} elements no old one "
                            "maps to (padding; pad_value is not supported)")


def _is_split_permutation(outputs, vs, extents) -> bool:
    """Every input var appears once as ``v``, or as ``v // c`` and ``v % c`` with ``c``
    dividing its extent; constant outputs are 0."""
    uses = {v: [] for v in vs}
    for e in outputs:
        if isinstance(e, E.IntImm) and e.value == 0:
            continue
        if isinstance(e, E.Var) and e in uses:
            uses[e].append(("whole", 1))
        elif (isinstance(e, (E.FloorDiv, E.FloorMod)) and e.a in uses
              and isinstance(e.b, E.IntImm) and e.b.value > 0):
            uses[e.a].append(("div" if isinstance(e, E.FloorDiv) else "mod", e.b.value))
        else:
            return False
    for v, n in zip(vs, extents):
        found = sorted(uses[v])
        if found == [("whole", 1)]:
            continue
        if len(found) == 2 and found[0][0] == "div" and found[1][0] == "mod" \
                and found[0][1] == found[1][1] and n % found[0][1] == 0:
            continue
        return False
    return True


_NUMPY_OPS = {E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply,
              E.FloorDiv: np.floor_divide, E.FloorMod: np.mod, E.Min: np.minimum,
              E.Max: np.maximum}


def _evaluate(e, env):
    """``e`` over numpy arrays of the variables' values (integer index arithmetic)."""
    if isinstance(e, E.IntImm):
        return np.int64(e.value)
    if isinstance(e, E.Var) and e in env:
        return env[e]
    if isinstance(e, E.Cast):
        return _evaluate(e.value, env)
    op = _NUMPY_OPS.get(type(e))
    if op is None:
        raise TypeError(type(e).__name__)
    return op(_evaluate(e.a, env), _evaluate(e.b, env))


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
    _check_bijective(index_map, vs, [int(analyzer.const_int_bound(s).max_value)
                                     for s in buf.shape], shape, buf)
    new = decl_buffer(shape, buf.dtype, buf.name, scope=buf.scope)
    body = _Rewrite(buf, new, index_map).visit_stmt(func.body)
    buffer_map = [(p, new if b is buf else b) for p, b in func.buffer_map.items()]
    return func.with_fields(body=body, buffer_map=type(func.buffer_map)(buffer_map)), index_map
