"""Vector statements in C: the C code generator writes a vector store as a loop over its
lanes (``lane(e, i)`` is the scalar expression of lane ``i``), which reads like the TIR and
which ``-O2 -march=native`` vectorizes again."""

from __future__ import annotations

from irlab.errors import CodegenError
from irlab.runtime.dtype import parse_dtype
from irlab.ir.structural import structural_equal
from irlab.tir import expr as E
from irlab.tir.buffer import Buffer
from irlab.tir.functor import method_table, post_order_visit, visit_name
from irlab.target.c_syntax import (_contains, _elem, _lanes, c_type)


class VectorLanes:
    """Mixin of ``_FunctionWriter``: scalarized vector statements."""

    def local_array(self, hint, dtype):
        t = parse_dtype(dtype)
        data = E.Var(hint, "handle")
        buf = Buffer(data, _elem(dtype), (t.lanes,), name=hint)
        name = self.bind(data)
        elem = c_type(_elem(dtype), memory=True)
        self.ptr_types[data] = elem
        self.line(f"{elem} {name}[{t.lanes}];")
        return buf

    def visit_buffer_store(self, s):
        if parse_dtype(s.buffer.dtype).lanes != 1:
            raise CodegenError(f"C codegen: buffer {s.buffer.name} has vector type "
                               f"{s.buffer.dtype}", s)
        indices = list(s.indices)
        lanes = max([_lanes(s.value)] + [_lanes(i) for i in indices])
        if lanes == 1:
            self.statement(lambda: self.store_text(s.buffer, indices, s.value))
            return
        reads_self = []  # loads of the stored buffer at another index
        post_order_visit(s.value, lambda n: reads_self.append(1) if isinstance(
            n, E.BufferLoad) and n.buffer.data is s.buffer.data and not (
                len(n.indices) == len(indices) and all(
                    structural_equal(a, b) for a, b in zip(n.indices, indices))) else None)
        value = s.value
        if reads_self:  # keep vector semantics: read every lane before writing any
            tmp = self.local_array(s.buffer.name + "_lanes", str(
                parse_dtype(s.value.dtype).with_lanes(lanes)))
            self.store_lanes(tmp, E.IntImm("int32", 0), value, lanes)
            lane = E.Var("lane", "int32")
            value = E.BufferLoad(tmp, [lane])
            self.lane_loop(lanes, lambda ln: self.store_text(
                s.buffer, [self.lane(i, ln) for i in indices],
                value if ln is lane else E.BufferLoad(tmp, [ln])), var=lane)
            return
        self.lane_loop(lanes, lambda ln: self.store_text(
            s.buffer, [self.lane(i, ln) for i in indices], self.lane(value, ln)),
            unroll=_contains(value, E.Shuffle) or any(_contains(i, E.Shuffle) for i in indices))

    def store_lanes(self, buf, base, value, lanes=None):
        lanes = lanes or _lanes(value)
        self.lane_loop(lanes, lambda ln: self.store_text(buf, [ln], self.lane(value, ln)),
                       unroll=_contains(value, E.Shuffle))

    def lane_loop(self, lanes, body, unroll=False, var=None):
        if unroll:
            for k in range(lanes):
                self.statement(lambda k=k: body(E.IntImm("int32", k)))
            return
        lane = var if var is not None else E.Var("lane", "int32")
        self.frames.append([])
        name = self.bind(lane)
        self.frames.pop()
        self.open_block(f"for (int32_t {name} = 0; {name} < {lanes}; ++{name}) {{")
        self.frames[-1].append(lane)
        self.statement(lambda: body(lane))
        self.close_block()

    def lane(self, e, lane, env=None):
        """The scalar expression computing lane ``lane`` (a Var or IntImm) of ``e``."""
        return LaneScalarizer(self.vec_vars).lane(e, lane, env)


class LaneScalarizer:
    """The scalar expression of one lane of a vector expression; vector variables
    (``vec_vars``: Var -> the local array holding its lanes) are read from their arrays."""

    def __init__(self, vec_vars):
        self.vec_vars = vec_vars

    def lane(self, e, lane, env=None):
        """The scalar expression computing lane ``lane`` (a Var or IntImm) of ``e``, by the
        ``visit_<node>`` rules (found through ``tir.functor.method_table``)."""
        env = env or {}
        if _lanes(e) == 1 and not isinstance(e, E.Var):
            return e
        rule = method_table(type(self))[type(e)]
        if rule is None:
            raise CodegenError(f"C codegen cannot scalarize {type(e).__name__}: {e}", e)
        return rule(self, e, lane, env)

    def visit_var(self, e, lane, env):
        if e in env:
            return env[e]
        if _lanes(e) == 1:
            return e
        buf = self.vec_vars.get(e)
        if buf is None:
            raise CodegenError(f"vector variable {e.name_hint} is used outside its scope", e)
        return E.BufferLoad(buf, [lane])

    visit_size_var = visit_var

    def visit_ramp(self, e, lane, env):
        base = e.base
        if isinstance(lane, E.IntImm) and isinstance(e.stride, E.IntImm):
            k = int(lane.value) * int(e.stride.value)
            if isinstance(base, E.IntImm):
                return E.IntImm(base.dtype, int(base.value) + k)
            if isinstance(base, E.Add) and isinstance(base.b, E.IntImm):
                k += int(base.b.value)
                base = base.a
            return base if k == 0 else E.Add(base, E.IntImm(base.dtype, k))
        if isinstance(lane, E.IntImm):
            offset = E.IntImm(base.dtype, int(lane.value))
        else:
            offset = lane if lane.dtype == base.dtype else E.Cast(base.dtype, lane)
        if not (isinstance(e.stride, E.IntImm) and e.stride.value == 1):
            offset = E.Mul(e.stride, offset)
        if isinstance(base, E.IntImm) and base.value == 0:
            return offset
        return E.Add(base, offset)

    def visit_broadcast(self, e, lane, env):
        return e.value

    def visit_shuffle(self, e, lane, env):
        if not isinstance(lane, E.IntImm):
            raise CodegenError("Shuffle needs constant lanes", e)
        flat = []
        for v in e.vectors:
            flat += [(v, k) for k in range(_lanes(v))]
        v, k = flat[int(e.indices[int(lane.value)].value)]
        return self.lane(v, E.IntImm("int32", k), env) if _lanes(v) > 1 else v

    def visit_buffer_load(self, e, lane, env):
        return E.BufferLoad(e.buffer, [self.lane(i, lane, env) for i in e.indices])

    def visit_cast(self, e, lane, env):
        return E.Cast(_elem(e.dtype), self.lane(e.value, lane, env))

    def visit_not(self, e, lane, env):
        return E.Not(self.lane(e.a, lane, env))

    def _visit_binary(self, e, lane, env):
        return type(e)(self.lane(e.a, lane, env), self.lane(e.b, lane, env))

    def visit_select(self, e, lane, env):
        return E.Select(self.lane(e.condition, lane, env), self.lane(e.true_value, lane, env),
                        self.lane(e.false_value, lane, env))

    def visit_let(self, e, lane, env):
        var = E.Var(e.var.name_hint, _elem(e.var.dtype))
        inner = dict(env)
        inner[e.var] = var
        return E.Let(var, self.lane(e.value, lane, env), self.lane(e.body, lane, inner))

    def visit_call(self, e, lane, env):
        args = [self.lane(a, lane, env) if isinstance(a, E.PrimExpr) else a for a in e.args]
        return E.Call(_elem(e.dtype), e.op, args)


def _binary_kinds(cls):
    """``cls`` and every class derived from it."""
    return [cls] + [k for sub in cls.__subclasses__() for k in _binary_kinds(sub)]


for _kind in _binary_kinds(E.BinaryOpExpr) + _binary_kinds(E.And):  # And, Or
    setattr(LaneScalarizer, visit_name(_kind), LaneScalarizer._visit_binary)
