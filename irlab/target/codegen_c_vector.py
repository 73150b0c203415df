"""Vector statements in C: the C code generator writes a vector store as a loop over its
lanes (``lane(e, i)`` is the scalar expression of lane ``i``), which reads like the TIR and
which ``-O2 -march=native`` vectorizes again."""

from __future__ import annotations

from irlab.errors import CodegenError
from irlab.runtime.dtype import parse_dtype
from irlab.ir.structural import structural_equal
from irlab.tir import expr as E
from irlab.tir.buffer import Buffer
from irlab.tir.functor import post_order_visit
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

    def s_BufferStore(self, s):
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
        env = env or {}
        if _lanes(e) == 1 and not isinstance(e, E.Var):
            return e
        rec = lambda x: self.lane(x, lane, env)  # noqa: E731
        elem = _elem(e.dtype)
        if isinstance(e, E.Var):
            if e in env:
                return env[e]
            if _lanes(e) == 1:
                return e
            buf = self.vec_vars.get(e)
            if buf is None:
                raise CodegenError(f"vector variable {e.name_hint} is used outside its scope", e)
            return E.BufferLoad(buf, [lane])
        if isinstance(e, E.Ramp):
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
        if isinstance(e, E.Broadcast):
            return e.value
        if isinstance(e, E.Shuffle):
            if not isinstance(lane, E.IntImm):
                raise CodegenError("Shuffle needs constant lanes", e)
            flat = []
            for v in e.vectors:
                flat += [(v, k) for k in range(_lanes(v))]
            v, k = flat[int(e.indices[int(lane.value)].value)]
            return self.lane(v, E.IntImm("int32", k), env) if _lanes(v) > 1 else v
        if isinstance(e, E.BufferLoad):
            return E.BufferLoad(e.buffer, [rec(i) for i in e.indices])
        if isinstance(e, E.Cast):
            return E.Cast(elem, rec(e.value))
        if isinstance(e, E.Not):
            return E.Not(rec(e.a))
        if isinstance(e, (E.BinaryOpExpr, E.And)):
            return type(e)(rec(e.a), rec(e.b))
        if isinstance(e, E.Select):
            return E.Select(rec(e.condition), rec(e.true_value), rec(e.false_value))
        if isinstance(e, E.Let):
            var = E.Var(e.var.name_hint, _elem(e.var.dtype))
            inner = dict(env)
            inner[e.var] = var
            return E.Let(var, rec(e.value), self.lane(e.body, lane, inner))
        if isinstance(e, E.Call):
            return E.Call(elem, e.op, [rec(a) if isinstance(a, E.PrimExpr) else a
                                       for a in e.args])
        raise CodegenError(f"C codegen cannot scalarize {type(e).__name__}: {e}", e)
