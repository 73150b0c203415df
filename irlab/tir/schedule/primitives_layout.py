"""transform_layout: rewrite a buffer's shape and every access through an index map."""

from __future__ import annotations

import ast
import inspect
import math
import operator
import types

import numpy as np

from irlab.arith import Analyzer
from irlab.errors import IrlabError
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir import op as O
from irlab.tir.buffer import BufferRegion, Range, decl_buffer
from irlab.tir.functor import StmtExprMutator
from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.primitives_getters import replace, scope_of, walk


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _eval_index(node, env, text):
    """The value of one index expression of a lambda's text: its parameters, integers,
    + - * // %, unary minus and min/max; anything else is refused (the text may come from a
    tuning database, so it is never handed to ``eval``)."""
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval_index(node.left, env, text),
                                      _eval_index(node.right, env, text))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval_index(node.operand, env, text)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("min", "max") and len(node.args) == 2 and not node.keywords:
        args = [E.convert(_eval_index(a, env, text)) for a in node.args]
        return (O.min if node.func.id == "min" else O.max)(*args)
    raise ScheduleError(f"index map {text!r}: cannot read {ast.dump(node)[:80]} (an index map "
                        "text uses its parameters, integers, + - * // %, min and max)")


def _parse_lambda(text):
    """A Python function from an index map's text (``"lambda i, j: (i // 4, j)"``)."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ScheduleError(f"index map {text!r} is not a lambda: {exc}") from None
    if not isinstance(tree, ast.Lambda) or tree.args.vararg or tree.args.kwarg:
        raise ScheduleError(f"index map {text!r} is not a lambda of plain parameters")
    names = [a.arg for a in tree.args.args]
    body = tree.body.elts if isinstance(tree.body, ast.Tuple) else [tree.body]

    def fn(*indices):
        env = dict(zip(names, indices))
        return tuple(_eval_index(e, env, text) for e in body)

    fn.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return fn


def _parameter_names(fn, given) -> list:
    """The parameter names of ``fn``: read from its code object for a plain function of
    positional parameters (``inspect.signature`` costs ~0.5 ms, and TOPI's conv schedules
    make an IndexMap per kernel), else from its signature."""
    code = getattr(fn, "__code__", None)
    if (type(fn) is types.FunctionType and "__signature__" not in fn.__dict__
            and "__wrapped__" not in fn.__dict__ and code.co_kwonlyargcount == 0
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)):
        return list(code.co_varnames[:code.co_argcount])
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError) as exc:
        raise ScheduleError(f"index_map must be a Python function, got {given!r}") from exc


class IndexMap:
    """A Python index map (``lambda i, j: (i // 4, j, i % 4)``, or that text) that prints
    as TVM's; its text form is how a trace's JSON record keeps it."""

    def __init__(self, fn):
        if isinstance(fn, str):
            fn = _parse_lambda(fn)
        self.fn = fn.fn if isinstance(fn, IndexMap) else fn
        self.names = _parameter_names(self.fn, fn)

    def apply(self, indices):
        out = self.fn(*indices)
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        return [E.convert(e) for e in out]

    def __call__(self, *indices):
        return self.apply(indices)

    def map_ndarray(self, array):
        """``array`` (numpy) laid out as this map says: element ``x[i]`` goes to
        ``y[map(i)]`` (TVM's ``IndexMap.map_ndarray``); the map must be one-to-one."""
        array = np.asarray(array)
        grids = np.meshgrid(*[np.arange(n, dtype=np.int64) for n in array.shape],
                            indexing="ij")
        out = self.fn(*grids)
        outs = [np.broadcast_to(np.asarray(o, dtype=np.int64), array.shape)
                for o in (out if isinstance(out, (list, tuple)) else [out])]
        shape = tuple(int(o.max()) + 1 if o.size else 1 for o in outs)
        result = np.zeros(shape, dtype=array.dtype)
        result[tuple(outs)] = array
        return result

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


def _check_bijective(index_map, vs, extents, new_shape, buf, pad):
    """Raise unless ``index_map`` maps the points of ``buf``'s shape one-to-one onto the new
    shape (or, with a ``pad`` value, into it): a map folding two elements together
    (``i // 2``) would make one store overwrite another, and one leaving holes needs a
    ``pad_value``. Returns whether the new shape has holes to pad."""
    outputs = index_map.apply(vs)
    size, new_size = math.prod(extents), math.prod(new_shape)
    if _split_inverse(outputs, vs) is not None:  # one-to-one by its form
        if new_size != size and pad:
            return True
    elif size > ENUMERATE_LIMIT:
        raise ScheduleError(f"cannot check that index_map {index_map} is bijective over the "
                            f"{tuple(extents)} buffer {buf.name}: write it with splits "
                            "(i // c, i % c) and permutations only")
    else:
        _check_injective(index_map, outputs, vs, extents, new_shape, buf)
    if new_size != size and not pad:
        raise ScheduleError(f"index_map {index_map} is not bijective over the "
                            f"{tuple(extents)} buffer {buf.name}: the new shape "
                            f"{tuple(new_shape)} has {new_size - size} elements no old one "
                            "maps to (padding: give a pad_value)")
    if new_size != size:
        raise ScheduleError(f"pad_value: index_map {index_map} must be made of splits "
                            "(i // c, i % c) and permutations to pad the buffer")
    return False


def _check_injective(index_map, outputs, vs, extents, new_shape, buf):
    """Enumerate the old shape: no two points may map to the same new one."""
    size = math.prod(extents)
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


def _split_inverse(outputs, vs):
    """When every input var appears once as ``v``, or as ``v // c`` and ``v % c`` (constant
    outputs being 0) -- a one-to-one map, onto the new shape when each ``c`` divides its
    extent --: a function of the output indices giving each input var back. Else None."""
    uses = {v: {} for v in vs}
    for k, e in enumerate(outputs):
        if isinstance(e, E.IntImm) and e.value == 0:
            continue
        if isinstance(e, E.Var) and e in uses:
            var, kind, c = e, "whole", 1
        elif (isinstance(e, (E.FloorDiv, E.FloorMod)) and e.a in uses
              and isinstance(e.b, E.IntImm) and e.b.value > 0):
            var, kind, c = e.a, ("div" if isinstance(e, E.FloorDiv) else "mod"), e.b.value
        else:
            return None
        if kind in uses[var]:
            return None
        uses[var][kind] = (k, c)
    for v in vs:
        kinds = uses[v]
        if set(kinds) == {"whole"}:
            continue
        if set(kinds) != {"div", "mod"} or kinds["div"][1] != kinds["mod"][1]:
            return None

    def inverse(out):
        values = {}
        for v in vs:
            kinds = uses[v]
            if "whole" in kinds:
                values[v] = out[kinds["whole"][0]]
            else:
                (kd, c), (km, _) = kinds["div"], kinds["mod"]
                values[v] = out[kd] * c + out[km]
        return values

    return inverse


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


def transform_layout(func, realize, buffer, index_map, pad_value=None):
    """``func`` with ``buffer`` (``("read"|"write", i)`` of the block, or a name) laid out
    as ``index_map`` says; elements of the new shape no old one maps to are set to
    ``pad_value`` after the block writing the buffer (a map of splits may leave such holes:
    ``lambda i: (i // 4, i % 4)`` over 14 elements)."""
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
    extents = [int(analyzer.const_int_bound(s).max_value) for s in buf.shape]
    padded = _check_bijective(index_map, vs, extents, shape, buf, pad_value is not None)
    new = decl_buffer(shape, buf.dtype, buf.name, scope=buf.scope)
    body = _Rewrite(buf, new, index_map).visit_stmt(func.body)
    buffer_map = [(p, new if b is buf else b) for p, b in func.buffer_map.items()]
    func = func.with_fields(body=body, buffer_map=type(func.buffer_map)(buffer_map))
    if padded:
        inverse = _split_inverse(index_map.apply(vs), vs)
        func = _write_padding(func, new, inverse, vs, extents, pad_value)
    return func, index_map


def _write_padding(func, buf, inverse, vs, extents, pad_value):
    """``func`` with a block ``<buf>_pad`` writing ``pad_value`` into the holes of ``buf``,
    placed right after the loop nest of the last block writing ``buf``."""
    try:
        value = E.convert(pad_value)
    except IrlabError:
        value = None
    if not isinstance(value, (E.IntImm, E.FloatImm)):
        raise ScheduleError(f"pad_value must be a constant number, got {pad_value!r}")
    writers = [n for n, _ in walk(func.body) if isinstance(n, S.BlockRealize)
               and any(w.buffer is buf for w in n.block.writes)]
    if not writers:
        raise ScheduleError(f"pad_value: no block writes {buf.name} (an input buffer): "
                            "padding an input is not supported")
    producer = writers[-1]
    scope = scope_of(func, producer)
    if scope is None:
        raise ScheduleError(f"pad_value: block {producer.block.name_hint} has no scope block")
    children = list(scope.body.seq) if isinstance(scope.body, S.SeqStmt) else [scope.body]
    pos = max(k for k, c in enumerate(children)
              if any(n is producer for n, _ in walk(c))) + 1
    nest = _pad_nest(func, buf, inverse, vs, extents, O.cast(value, buf.dtype))
    body = S.SeqStmt.flatten(*(children[:pos] + [nest] + children[pos:]))
    return replace(func, scope, scope.with_fields(body=body))


def _pad_nest(func, buf, inverse, vs, extents, value):
    """Loops over ``buf``'s shape and a block storing ``value`` where no old index maps."""
    taken = {n.block.name_hint for n, _ in walk(func.body) if isinstance(n, S.BlockRealize)}
    name, k = f"{buf.name}_pad", 0
    while name in taken:
        k += 1
        name = f"{buf.name}_pad_{k}"
    axes = [E.Var(f"ax{d}", s.dtype) for d, s in enumerate(buf.shape)]
    ivars = [E.Var(f"v{d}", s.dtype) for d, s in enumerate(buf.shape)]
    olds = inverse(axes)
    holes = [O.greater_equal(olds[v], n) for v, n in zip(vs, extents)
             if not isinstance(olds[v], E.Var)]
    predicate = holes[0]
    for hole in holes[1:]:
        predicate = O.logical_or(predicate, hole)
    point = tuple(Range.from_min_extent(v, 1) for v in ivars)
    block = S.Block([S.IterVar(Range.from_min_extent(0, s), v, S.IterVar.DataPar)
                     for v, s in zip(ivars, buf.shape)], [], [BufferRegion(buf, point)],
                    name, S.BufferStore(buf, value, ivars))
    stmt = S.BlockRealize(axes, predicate, block)
    for ax, s in reversed(list(zip(axes, buf.shape))):
        stmt = S.For(ax, 0, s, S.ForKind.SERIAL, stmt)
    return stmt
