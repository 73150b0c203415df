"""TVMScript printer for TIR, in TVM's current format (src/script/printer/tir/*).

``print_prim_func(f)`` / ``print_module(mod)`` give text that ``irlab.script.parse`` reads back
into a structurally equal function. Names are made unique per function (``i``, ``i_1``...).
"""

from __future__ import annotations

import json
import keyword
import math
import re

from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as E
from irlab.tir import stmt as S
from irlab.tir.buffer import Buffer
from irlab.tir.functor import StmtExprVisitor, post_order_below, post_order_visit
from irlab.tir.functor import method_table, visit_name
from irlab.tir.intrinsics import INTRINSICS
from irlab.runtime.registry import register_func
from irlab.script import dialect
from irlab.te.reduction import CommReducer

HEADER_T = "# from tvm.script import tir as T"
HEADER_I = "# from tvm.script import ir as I"

# Python precedence levels (higher binds tighter).
_BIN = {E.Add: ("+", 6), E.Sub: ("-", 6), E.Mul: ("*", 7), E.FloorDiv: ("//", 7),
        E.FloorMod: ("%", 7), E.EQ: ("==", 4), E.NE: ("!=", 4), E.LT: ("<", 4),
        E.LE: ("<=", 4), E.GT: (">", 4), E.GE: (">=", 4), E.And: ("and", 2),
        E.Or: ("or", 1)}
_LEFT_ASSOCIATIVE = (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod, E.And, E.Or)
_KIND = {S.ForKind.PARALLEL: "T.parallel", S.ForKind.VECTORIZED: "T.vectorized",
         S.ForKind.UNROLLED: "T.unroll", S.ForKind.SERIAL: "T.serial"}


def script(node, *args, show_meta=False, **kwargs) -> str:
    """TVMScript text of a PrimFunc, an IRModule or a dialect's function (Relax);
    ``show_meta`` prints big constants in full instead of ``metadata[...]`` references."""
    if type(node).__name__ == "IRModule":
        return print_module(node, show_meta=show_meta)
    printer = dialect.function_printer(node)
    if printer is not None:
        options = dialect.PrintOptions(show_meta)
        lines, headers = printer.print_lines(node, None, None, options)
        head = _header_lines(headers) + [""] if headers else []
        return "\n".join(head + lines + _note(options)) + "\n"
    return print_prim_func(node)


def print_prim_func(func, name=None) -> str:
    return HEADER_T + "\n\n" + "\n".join(_FuncPrinter(func).lines(name)) + "\n"


def print_module(mod, show_meta=False, **_) -> str:
    """The module as an ``@I.ir_module`` class in TVM's order (PrimFuncs, then external
    functions, then Relax functions, each by name, ``main`` last); PrimFuncs print here, other
    functions by their dialect's registered printer."""
    class_name = "Module"
    options = dialect.PrintOptions(show_meta)
    body, headers, after_def = [], {HEADER_I}, False
    for gv in sorted(mod.get_global_vars(), key=lambda gv: _print_order(gv, mod[gv])):
        func = mod[gv]
        if type(func).__name__ == "PrimFunc":
            headers.add(HEADER_T)
            lines = _FuncPrinter(func).lines(gv.name_hint)
        else:
            printer = dialect.function_printer(func)
            if printer is None:
                continue
            lines, used = printer.print_lines(func, gv.name_hint, class_name, options)
            headers.update(used)
        if after_def:  # a blank line after each function definition (none after `f = ...`)
            body.append("")
        after_def = lines[0].startswith("@")
        body.extend("    " + ln if ln else "" for ln in lines)
    out = _header_lines(headers) + ["", "@I.ir_module", f"class {class_name}:"]
    attrs = dict(mod.attrs.as_dict()) if mod.attrs is not None else {}
    if attrs and _is_literal(attrs):  # other attributes (objects) are not printable
        out.append(f"    I.module_attrs({attrs!r})")
    return "\n".join(out + (body or ["    pass"]) + _note(options)) + "\n"


def _is_literal(value) -> bool:
    """Whether ``repr(value)`` reads back as the same Python value."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_literal(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_literal(v) for k, v in value.items())
    return False


def _print_order(gv, func) -> tuple:
    """TVM's order of a module's functions (src/script/printer/ir/ir.cc)."""
    kind = type(func).__name__
    rank = 1000 if gv.name_hint == "main" else {"PrimFunc": 1, "ExternFunc": 2}.get(kind, 3)
    return rank, gv.name_hint


def _note(options) -> list:
    """TVM's closing note when some objects were left out of the text."""
    return ["", dialect.METADATA_NOTE] if options.metadata else []


def _header_lines(headers) -> list:
    """The ``# from tvm.script import ...`` lines in TVM's order: I, T, then the dialects."""
    order = [HEADER_I, HEADER_T]
    return [h for h in order if h in headers] + sorted(set(headers) - set(order))


def _identifier(name: str) -> str:
    name = re.sub(r"\W", "_", str(name)) or "v"
    if name[0].isdigit() or keyword.iskeyword(name) or name in ("T", "I"):
        name = "v_" + name
    return name


def _float_text(value) -> str:
    if math.isinf(value) or math.isnan(value):
        return json.dumps(repr(value))  # "inf", "-inf", "nan"
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


_DEEP = 100  # expression depth past which what is below is printed iteratively first

class _UsesOutsideLets(StmtExprVisitor):
    """The ids of LetStmt-bound variables read outside the bodies of their LetStmts (one
    walk: the variables of the LetStmts open at each point are kept on a stack)."""

    def __init__(self):
        super().__init__()
        self.open, self.found = [], set()

    def visit_let_stmt(self, s):
        self._scoped(s, self.visit_stmt)

    def visit_let(self, e):
        self._scoped(e, self.visit_expr)

    def _scoped(self, let, visit_body):
        """The value outside the binding, the body with ``let.var`` open."""
        self.visit_expr(let.value)
        self.open.append(id(let.var))
        try:
            visit_body(let.body)
        finally:
            self.open.pop()

    def visit_var(self, v):
        if id(v) not in self.open:
            self.found.add(id(v))

    def visit_expr(self, e):
        if type(e) is E.Var:  # not memoized: read inside a let body, it may be read outside
            return self.visit_var(e)
        return super().visit_expr(e)


def _used_outside_their_lets(body) -> set:
    finder = _UsesOutsideLets()
    finder.visit_stmt(body)
    return finder.found


# AttrStmt keys whose node is a thread IterVar that T.launch_thread binds.
_THREAD_KEYS = ("thread_extent", "virtual_thread")


class _IdSet:
    """``node in _IdSet(memo)``: whether a memo keyed by ``id`` holds the node."""

    def __init__(self, memo):
        self.memo = memo

    def __contains__(self, node):
        return id(node) in self.memo


def _const_text(value) -> str:
    """A constant of ``T.allocate_const``: ints as written, floats so they read back exactly."""
    return _float_text(value) if isinstance(value, float) else str(value)


class _FuncPrinter:
    """Prints one PrimFunc; holds the var/buffer naming of that function."""

    def __init__(self, func):
        self.func = func
        self.names: dict[int, str] = {}
        self.used: set[str] = {"T", "I"}
        self.scope_names: list[str] = []
        self.out: list[str] = []
        self.loop_dom: dict[int, tuple] = {}
        self._collect_implicit_buffers()

    # -- naming -----------------------------------------------------------------------------
    def define(self, obj, hint) -> str:
        base = _identifier(hint)
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        self.names[id(obj)] = name
        self.scope_names.append(name)
        return name

    def define_buffer(self, buf) -> str:
        """Name a buffer a block allocates or matches; its data handle prints as
        ``name.data`` (the handle has no definition of its own to print)."""
        name = self.define(buf, buf.name)
        self.names.setdefault(id(buf.data), f"{name}.data")
        return name

    def open_scope(self) -> int:
        return len(self.scope_names)

    def close_scope(self, mark):
        """Names defined in a loop/block body are free again after it (as TVM prints)."""
        for name in self.scope_names[mark:]:
            self.used.discard(name)
        del self.scope_names[mark:]

    def name_of(self, obj) -> str:
        name = self.names.get(id(obj))
        if name is None:  # a free variable: print its own name
            hint = obj.name_hint if isinstance(obj, E.Var) else obj.name
            return _identifier(hint)
        return name

    def _collect_implicit_buffers(self):
        """Buffers used but defined by no node print as ``T.Buffer(..., data=v)`` where
        their data var is defined (TVM does the same)."""
        defined, used = set(), []
        for b in self.func.buffer_map.values():
            defined.add(id(b))

        def visit(n):
            if isinstance(n, (E.BufferLoad, S.BufferStore)):
                used.append(n.buffer)
            elif isinstance(n, S.DeclBuffer):
                defined.add(id(n.buffer))
            elif isinstance(n, S.Block):
                defined.update(id(b) for b in n.alloc_buffers)
                defined.update(id(m.buffer) for m in n.match_buffers)
                used.extend(r.buffer for r in n.reads + n.writes)
                used.extend(m.source.buffer for m in n.match_buffers)

        post_order_visit(self.func.body, visit)
        self.implicit: dict[int, list] = {}
        seen = set()
        for b in used:
            if id(b) in defined or id(b) in seen:
                continue
            seen.add(id(b))
            self.implicit.setdefault(id(b.data), []).append(b)

    def emit_implicit(self, var, indent):
        for b in self.implicit.pop(id(var), []):
            self.emit(indent, f"{self.define(b, b.name)} = "
                              f"T.Buffer({self.buffer_args(b, data=True)})")

    def emit(self, indent, text):
        self.out.append("    " * indent + text)

    # -- function ---------------------------------------------------------------------------
    def lines(self, name=None) -> list:
        f = self.func
        attrs = f.attrs.as_dict() if f.attrs is not None else {}
        if name is None:
            sym = attrs.get("global_symbol")
            name = sym if isinstance(sym, str) and sym.isidentifier() else "main"
        params, pre = [], []
        for p in f.params:
            buf = f.buffer_map.get(p)
            if buf is not None and self._inline_param(buf):
                self.names[id(p)] = self.define(buf, buf.name)
                # Flattened views of a parameter alias its data: ``data=A.data`` (as TVM).
                self.names.setdefault(id(buf.data), f"{self.names[id(p)]}.data")
                params.append(f"{self.names[id(p)]}: "
                              f"T.Buffer({self.buffer_args(buf, ann=True)})")
            elif buf is not None or p.dtype == "handle":
                params.append(f"{self.define(p, p.name_hint)}: T.handle")
                if buf is not None:
                    pre.append((p, buf))
            else:
                params.append(f"{self.define(p, p.name_hint)}: T.{p.dtype}")
        self.emit(0, "@T.prim_func")
        self.emit(0, f"def {name}({', '.join(params)}):")
        if attrs:
            self.emit(1, f"T.func_attr({self.attr_value(attrs)})")
        for p, buf in pre:  # symbolic shape vars first, then the buffers
            for e in buf.shape + buf.strides + (buf.elem_offset,):
                if isinstance(e, E.Var) and id(e) not in self.names:
                    self.emit(1, f"{self.define(e, e.name_hint)} = T.{e.dtype}()")
            self.emit(1, f"{self.define(buf, buf.name)} = T.match_buffer("
                         f"{self.names[id(p)]}, {self.buffer_args(buf)})")
            self.names.setdefault(id(buf.data), f"{self.names[id(buf)]}.data")
        for p in f.params:
            self.emit_implicit(p, 1)
        for iv in self._launched_threads():  # ``tx = T.env_thread("threadIdx.x")``
            self.emit(1, f"{self.define(iv.var, iv.var.name_hint)} = "
                         f"T.env_thread({json.dumps(iv.thread_tag)})")
        for v in self._free_scalar_vars():  # ``a = T.int32()``: a variable bound nowhere
            self.emit(1, f"{self.define(v, v.name_hint)} = T.{v.dtype}()")
        for var_id in list(self.implicit):  # data vars defined nowhere in the function
            if var_id in self.names:  # a parameter buffer's data (``A.data``)
                for b in self.implicit.pop(var_id):
                    self.emit(1, f"{self.define(b, b.name)} = "
                                 f"T.Buffer({self.buffer_args(b, data=True)})")
                continue
            if not self._var_defined_below(var_id):
                # ``X = T.Buffer(shape)`` declares its own data: the first buffer on this
                # data owns it (``X.data``), the others view it (``data=X.data``)
                for k, b in enumerate(self.implicit.pop(var_id)):
                    name = self.define(b, b.name)
                    self.emit(1, f"{name} = T.Buffer({self.buffer_args(b, data=k > 0)})")
                    if k == 0:
                        self.names[var_id] = f"{name}.data"
        body = f.body
        if self._implicit_root(body):
            self.emit(1, '# with T.block("root"):')
            for b in body.block.alloc_buffers:
                self.emit(1, f"{self.define_buffer(b)} = T.alloc_buffer({self.buffer_args(b)})")
            body = body.block.body
        self.stmt(body, 1, last=True)
        return self.out

    def _launched_threads(self) -> list:
        """The thread IterVars ``T.launch_thread`` binds (one per variable), in the order the
        body launches them."""
        found = []

        def visit(n):
            if isinstance(n, S.AttrStmt) and n.attr_key in _THREAD_KEYS and isinstance(
                    n.node, S.IterVar):
                found.append(n.node)

        post_order_visit(self.func.body, visit)
        out, seen = [], set()
        for iv in reversed(found):  # post-order lists an outer launch after the inner ones
            if id(iv.var) not in seen:
                seen.add(id(iv.var))
                out.append(iv)
        return out

    def _free_scalar_vars(self) -> list:
        """Non-handle variables the body uses that no parameter, buffer, loop, let, block
        or allocation binds (TVMScript declares them as ``a = T.int32()``)."""
        bound = set(self.names)
        for buf in self.func.buffer_map.values():
            bound.update(id(e) for e in buf.shape + buf.strides + (buf.elem_offset,))
        used, let_vars, seen_buffers = [], [], set()

        def visit(n):
            if isinstance(n, S.For):
                bound.add(id(n.loop_var))
            elif isinstance(n, (S.LetStmt, E.Let)):
                let_vars.append(n.var)
            elif isinstance(n, S.Block):
                bound.update(id(iv.var) for iv in n.iter_vars)
            elif isinstance(n, E.Var) and n.dtype != "handle":
                used.append(n)
            elif isinstance(n, (S.DeclBuffer, E.BufferLoad, S.BufferStore)) and \
                    id(n.buffer) not in seen_buffers:  # ``n = T.int32()`` used by a shape
                buf = n.buffer
                seen_buffers.add(id(buf))
                for e in buf.shape + buf.strides + (buf.elem_offset,):
                    if e is not None:
                        post_order_visit(e, visit)

        post_order_visit(self.func.body, visit)
        outside = _used_outside_their_lets(self.func.body) if let_vars else set()
        for v in let_vars:  # ``y`` read before ``with T.LetStmt(0, var=y)`` is declared
            if id(v) not in outside:
                bound.add(id(v))
        out, seen = [], set()
        for v in used:
            if id(v) not in bound and id(v) not in seen and type(v) is E.Var:
                seen.add(id(v))
                out.append(v)
        return out

    def _var_defined_below(self, var_id) -> bool:
        found = []

        def visit(n):
            if isinstance(n, (S.Allocate, S.AllocateConst)) and id(n.buffer_var) == var_id:
                found.append(n)
            elif isinstance(n, S.LetStmt) and id(n.var) == var_id:
                found.append(n)

        post_order_visit(self.func.body, visit)
        return bool(found)

    @staticmethod
    def _inline_param(buf) -> bool:
        return (all(isinstance(s, E.IntImm) for s in buf.shape) and not buf.strides
                and isinstance(buf.elem_offset, E.IntImm) and buf.elem_offset.value == 0
                and buf.scope == "global" and not buf.axis_separators)

    @staticmethod
    def _implicit_root(body) -> bool:
        if not isinstance(body, S.BlockRealize):
            return False
        b = body.block
        return (b.name_hint == "root" and not b.iter_vars and not b.reads and not b.writes
                and b.init is None and not b.match_buffers and not b.annotations
                and isinstance(body.predicate, E.IntImm) and body.predicate.value == 1)

    def buffer_args(self, b, ann=False, data=False) -> str:
        """``(shape), "dtype"`` plus non-default keywords; float32 is omitted unless ``ann``."""
        shape = self.tuple_text(b.shape)
        parts = [shape]
        if ann or b.dtype != "float32" or data:
            parts.append(json.dumps(b.dtype))
        if data:
            parts.append(f"data={self.name_of(b.data)}")
        if b.strides:
            parts.append(f"strides={self.tuple_text(b.strides)}")
        if not (isinstance(b.elem_offset, E.IntImm) and b.elem_offset.value == 0):
            parts.append(f"elem_offset={self.expr(b.elem_offset)}")
        if b.scope != "global":
            parts.append(f"scope={json.dumps(b.scope)}")
        if b.axis_separators:
            parts.append(f"axis_separators={list(b.axis_separators)}")
        return ", ".join(parts)

    def tuple_text(self, items) -> str:
        texts = [self.expr(e) for e in items]
        return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"

    def attr_value(self, v) -> str:
        if isinstance(v, dict):
            return "{" + ", ".join(f"{json.dumps(k)}: {self.attr_value(x)}"
                                   for k, x in v.items()) + "}"
        if isinstance(v, bool):
            return f"T.bool({v})"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(self.attr_value(x) for x in v) + "]"
        if isinstance(v, E.PrimExpr):
            return self.expr(v)
        return repr(v)

    # -- statements -------------------------------------------------------------------------
    def stmt(self, s, ind, last):
        m = method_table(type(self))[type(s)]
        if m is None:
            raise TypeError(f"the TVMScript printer cannot print {type(s).__name__}")
        m(self, s, ind, last)

    def visit_seq_stmt(self, s, ind, last):
        for k, x in enumerate(s.seq):
            self.stmt(x, ind, last and k == len(s.seq) - 1)

    def visit_buffer_store(self, s, ind, last):
        self.emit(ind, f"{self.load_text(s.buffer, s.indices)} = {self.expr(s.value)}")

    def visit_evaluate(self, s, ind, last):
        self.emit(ind, f"T.evaluate({self.expr(s.value)})")

    def visit_if_then_else(self, s, ind, last):
        self.emit(ind, f"if {self.expr(s.condition)}:")
        self.nested(s.then_case, ind + 1)
        if s.else_case is not None:
            self.emit(ind, "else:")
            self.nested(s.else_case, ind + 1)

    def nested(self, body, ind):
        mark = self.open_scope()
        self.stmt(body, ind, True)
        self.close_scope(mark)

    def visit_while(self, s, ind, last):
        self.emit(ind, f"while {self.expr(s.condition)}:")
        self.nested(s.body, ind + 1)

    def _scoped(self, ind, last, flat, with_head, body):
        """A statement whose body is 'the rest': flat when last in its sequence, else a
        ``with`` so the parser does not swallow the statements that follow."""
        if last:
            self.emit(ind, flat)
            self.stmt(body, ind, True)
        else:
            self.emit(ind, with_head)
            self.stmt(body, ind + 1, True)

    def visit_let_stmt(self, s, ind, last):
        value = self.expr(s.value)
        if id(s.var) in self.names:  # declared above (``y = T.int32()``): rebind that one
            self.emit(ind, f"with T.LetStmt({value}, var={self.names[id(s.var)]}):")
            self.stmt(s.body, ind + 1, True)
            return
        name = self.define(s.var, s.var.name_hint)
        if last:
            self.emit(ind, f"{name}: T.{s.var.dtype} = {value}")
            self.emit_implicit(s.var, ind)
            self.stmt(s.body, ind, True)
        else:
            self.emit(ind, f"with T.LetStmt({value}) as {name}:")
            self.emit_implicit(s.var, ind + 1)
            self.stmt(s.body, ind + 1, True)

    def visit_assert_stmt(self, s, ind, last):
        cond, msg = self.expr(s.condition), self.expr(s.message)
        self._scoped(ind, last, f"assert {cond}, {msg}", f"with T.Assert({cond}, {msg}):",
                     s.body)

    def visit_allocate(self, s, ind, last):
        args = f"[{', '.join(self.expr(e) for e in s.extents)}], {json.dumps(s.dtype)}"
        scope = getattr(s.buffer_var.type_annotation, "storage_scope", None) or "global"
        args += f", {json.dumps(scope)}"
        if not (isinstance(s.condition, E.IntImm) and s.condition.value == 1):
            args += f", {self.expr(s.condition)}"
        self._allocation(s, "T.allocate", args, ind, last)

    def visit_allocate_const(self, s, ind, last):
        values = ", ".join(_const_text(v) for v in s.data)
        args = (f"[{values}], {json.dumps(s.dtype)}, "
                f"[{', '.join(self.expr(e) for e in s.extents)}]")
        self._allocation(s, "T.allocate_const", args, ind, last)

    def _allocation(self, s, builder, args, ind, last):
        """An Allocate / AllocateConst as ``name = builder(args)`` (the last statement of its
        scope) or ``with builder(args) as name:``, then its body."""
        if s.annotations:
            args += f", annotations={self.attr_value(dict(s.annotations))}"
        name = self.define(s.buffer_var, s.buffer_var.name_hint)
        inner = ind if last else ind + 1
        self.emit(ind, f"{name} = {builder}({args})" if last
                  else f"with {builder}({args}) as {name}:")
        self.emit_implicit(s.buffer_var, inner)
        self.stmt(s.body, inner, True)

    def visit_decl_buffer(self, s, ind, last):
        b = s.buffer
        args = self.buffer_args(b, data=id(b.data) in self.names)
        name = self.define(b, b.name)
        self._scoped(ind, last, f"{name} = T.decl_buffer({args})",
                     f"with T.decl_buffer({args}) as {name}:", s.body)

    def visit_attr_stmt(self, s, ind, last):
        node = s.node
        if s.attr_key in _THREAD_KEYS and isinstance(node, S.IterVar) and \
                id(node.var) in self.names:
            launch = f"T.launch_thread({self.names[id(node.var)]}, {self.expr(s.value)})"
            self._scoped(ind, last, launch, f"with {launch}:", s.body)
            return
        if isinstance(node, CommReducer):
            node = self.comm_reducer(node)
        else:
            node = self.expr(node) if isinstance(node, (E.PrimExpr, str)) else \
                json.dumps(str(node))
        self.emit(ind, f"with T.attr({node}, {json.dumps(s.attr_key)}, {self.expr(s.value)}):")
        self.stmt(s.body, ind + 1, True)

    def comm_reducer(self, r) -> str:
        """``T.comm_reducer(lambda x, y: x + y, [T.float32(0)])``: accumulators, then values."""
        mark = self.open_scope()
        params = [self.define(v, v.name_hint) for v in r.lhs + r.rhs]
        result = [self.expr(e) for e in r.result]
        body = result[0] if len(result) == 1 else f"({', '.join(result)})"
        ident = ", ".join(self.expr(e) for e in r.identity_element)
        self.close_scope(mark)
        return f"T.comm_reducer(lambda {', '.join(params)}: {body}, [{ident}])"

    def _grid_loop(self, s) -> bool:
        return (isinstance(s, S.For) and s.kind == S.ForKind.SERIAL and not s.annotations
                and s.thread_binding is None and isinstance(s.min, E.IntImm)
                and s.min.value == 0)

    def visit_for(self, s, ind, last):
        loops = [s]
        if self._grid_loop(s):
            while self._grid_loop(loops[-1].body) and not self._uses(
                    loops[-1].body.extent, loops):
                loops.append(loops[-1].body)
        for lp in loops:
            self.loop_dom[id(lp.loop_var)] = (lp.min, lp.extent)
        mark = self.open_scope()
        names = [self.define(lp.loop_var, lp.loop_var.name_hint) for lp in loops]
        if len(loops) > 1:
            extents = ", ".join(self.expr(lp.extent) for lp in loops)
            head = f"for {', '.join(names)} in T.grid({extents}):"
        else:
            head = f"for {names[0]} in {self.loop_range(s)}:"
        self.emit(ind, head)
        self.stmt(loops[-1].body, ind + 1, True)
        self.close_scope(mark)

    def _uses(self, e, loops) -> bool:
        ids = {id(lp.loop_var) for lp in loops}
        hit = []
        post_order_visit(e, lambda n: hit.append(n) if id(n) in ids else None)
        return bool(hit)

    def loop_range(self, s) -> str:
        zero = isinstance(s.min, E.IntImm) and s.min.value == 0
        if zero:
            args = self.expr(s.extent)
        else:
            args = f"{self.expr(s.min)}, {self.end_text(s.min, s.extent)}"
        if s.kind == S.ForKind.THREAD_BINDING or s.thread_binding is not None:
            tag = s.thread_binding.thread_tag if s.thread_binding is not None else ""
            ann = f", annotations={self.attr_value(dict(s.annotations))}" \
                if s.annotations else ""
            return f"T.thread_binding({args}, thread={json.dumps(tag)}{ann})"
        if s.annotations:
            return f"{_KIND[s.kind]}({args}, annotations={self.attr_value(dict(s.annotations))})"
        if s.kind == S.ForKind.SERIAL:
            return f"range({args})"
        return f"{_KIND[s.kind]}({args})"

    def end_text(self, lo, extent) -> str:
        """``lo + extent`` folded when both are constants (so ``0:128`` not ``0:0 + 128``)."""
        if isinstance(lo, E.IntImm) and isinstance(extent, E.IntImm) and lo.dtype == "int32":
            return str(lo.value + extent.value)
        return self.expr(E.Add(lo, extent))

    def visit_block_realize(self, s, ind, last):
        b = s.block
        self.emit(ind, f"with T.block({json.dumps(b.name_hint)}):")
        mark = self.open_scope()
        ind += 1
        k, ivs = 0, b.iter_vars
        while k < len(ivs):  # runs of remappable iter vars print as one T.axis.remap
            run = k
            while run < len(ivs) and self._remappable(ivs[run], s.iter_values[run]):
                run += 1
            if run > k + 1:  # TVM uses remap for two or more iter vars
                names = [self.define(iv.var, iv.var.name_hint) for iv in ivs[k:run]]
                kinds = "".join("S" if iv.iter_type == S.IterVar.DataPar else "R"
                                for iv in ivs[k:run])
                vals = ", ".join(self.expr(v) for v in s.iter_values[k:run])
                self.emit(ind, f"{', '.join(names)} = T.axis.remap(\"{kinds}\", [{vals}])")
                k = run
                continue
            iv, val = ivs[k], s.iter_values[k]
            kind = {S.IterVar.DataPar: "spatial", S.IterVar.CommReduce: "reduce",
                    S.IterVar.Ordered: "scan"}.get(iv.iter_type, "opaque")
            dom = iv.dom
            if isinstance(dom.min, E.IntImm) and dom.min.value == 0:
                dom_text = self.expr(dom.extent)
            else:
                dom_text = f"({self.expr(dom.min)}, {self.end_text(dom.min, dom.extent)})"
            value = self.expr(val)
            name = self.define(iv.var, iv.var.name_hint)
            self.emit(ind, f"{name} = T.axis.{kind}({dom_text}, {value})")
            k += 1
        if not (isinstance(s.predicate, E.IntImm) and s.predicate.value == 1):
            self.emit(ind, f"T.where({self.expr(s.predicate)})")
        self.emit(ind, f"T.reads({', '.join(self.region_text(r) for r in b.reads)})")
        self.emit(ind, f"T.writes({', '.join(self.region_text(r) for r in b.writes)})")
        if b.annotations:
            self.emit(ind, f"T.block_attr({self.attr_value(dict(b.annotations))})")
        for buf in b.alloc_buffers:
            self.emit(ind, f"{self.define_buffer(buf)} = T.alloc_buffer("
                           f"{self.buffer_args(buf)})")
        for mb in b.match_buffers:
            src = self.region_text(mb.source)
            self.emit(ind, f"{self.define_buffer(mb.buffer)} = T.match_buffer("
                           f"{src}, {self.buffer_args(mb.buffer)})")
        if b.init is not None:
            self.emit(ind, "with T.init():")
            self.stmt(b.init, ind + 1, True)
        self.stmt(b.body, ind, True)
        self.close_scope(mark)

    def _remappable(self, iv, value) -> bool:
        if not isinstance(value, E.Var) or iv.iter_type not in (S.IterVar.DataPar,
                                                                S.IterVar.CommReduce):
            return False
        dom = self.loop_dom.get(id(value))
        if dom is None:
            return False
        from irlab.ir import structural_equal

        return (structural_equal(dom[0], iv.dom.min, map_free_vars=False)
                and structural_equal(dom[1], iv.dom.extent)
                and iv.var.dtype == value.dtype)

    def region_text(self, r) -> str:
        parts = []
        for rg in r.region:
            if isinstance(rg.extent, E.IntImm) and rg.extent.value == 1:
                parts.append(self.expr(rg.min))
            else:
                parts.append(f"{self.expr(rg.min)}:{self.end_text(rg.min, rg.extent)}")
        return f"{self.name_of(r.buffer)}[{', '.join(parts) or '()'}]"

    def load_text(self, buffer, indices) -> str:
        """``B[i, j]``; a rank-0 buffer's element is ``B[()]`` (``B[]`` is not Python)."""
        return f"{self.name_of(buffer)}[{', '.join(self.expr(i) for i in indices) or '()'}]"

    # -- expressions ------------------------------------------------------------------------
    def expr(self, e, prec=0) -> str:
        if isinstance(e, str):
            return json.dumps(e)
        memo = self.__dict__.get("_memo")
        if memo is None:  # the outermost call: texts are shared within this expression only
            self._memo, self._depth = {}, 0
            try:
                return self.expr(e, prec)
            finally:
                self._memo = None
        hit = memo.get(id(e))
        if hit is None:
            if self._depth > _DEEP:  # print what is below first, so that recursion stops there
                saved, self._depth = self._depth, 0
                for node in post_order_below(e, _IdSet(memo)):
                    self.expr(node)
                self._depth = saved
            self._depth += 1
            try:
                text, p = self._expr(e)
            finally:
                self._depth -= 1
            if not isinstance(e, E.Let):  # a Let defines its variable where it is printed
                memo[id(e)] = hit = (e, text, p)
            else:
                hit = (e, text, p)
        _, text, p = hit
        return f"({text})" if p < prec else text

    def _expr(self, e):
        """(text, precedence) of ``e`` through the ``visit_<node>`` methods."""
        method = method_table(type(self))[type(e)]
        if method is None:
            raise TypeError(f"the TVMScript printer cannot print {type(e).__name__}")
        return method(self, e)

    def _visit_binary(self, e):
        op, p = _BIN[type(e)]
        if type(e) in _LEFT_ASSOCIATIVE:  # the right operand needs a strictly tighter binding
            return f"{self.expr(e.a, p)} {op} {self.expr(e.b, p + 1)}", p
        return f"{self.expr(e.a, p + 1)} {op} {self.expr(e.b, p + 1)}", p

    def visit_var(self, e):
        return self.name_of(e), 10

    visit_size_var = visit_var

    def visit_int_imm(self, e):
        if e.dtype == "int32":
            return str(e.value), (10 if e.value >= 0 else 8)
        if e.dtype == "bool":
            return f"T.bool({bool(e.value)})", 10
        return f"T.{e.dtype}({e.value})", 10

    def visit_float_imm(self, e):
        return f"T.{e.dtype}({_float_text(e.value)})", 10

    def visit_string_imm(self, e):
        return json.dumps(e.value), 10

    def visit_not(self, e):
        return f"not {self.expr(e.a, 3)}", 3

    def visit_div(self, e):
        if parse_dtype(e.dtype).is_float:
            return f"{self.expr(e.a, 7)} / {self.expr(e.b, 8)}", 7
        return f"T.Div({self.expr(e.a)}, {self.expr(e.b)})", 10

    def visit_mod(self, e):
        return f"T.truncmod({self.expr(e.a)}, {self.expr(e.b)})", 10

    def _visit_min_max(self, e):
        return f"T.{type(e).__name__.lower()}({self.expr(e.a)}, {self.expr(e.b)})", 10

    visit_min = visit_max = _visit_min_max

    def visit_cast(self, e):
        return f"T.Cast({json.dumps(e.dtype)}, {self.expr(e.value)})", 10

    def visit_select(self, e):
        return (f"T.Select({self.expr(e.condition)}, {self.expr(e.true_value)}, "
                f"{self.expr(e.false_value)})"), 10

    def visit_buffer_load(self, e):
        return self.load_text(e.buffer, e.indices), 10

    def visit_ramp(self, e):
        return f"T.Ramp({self.expr(e.base)}, {self.expr(e.stride)}, {e.lanes})", 10

    def visit_broadcast(self, e):
        return f"T.Broadcast({self.expr(e.value)}, {e.lanes})", 10

    def visit_shuffle(self, e):
        vecs = ", ".join(self.expr(v) for v in e.vectors)
        idx = ", ".join(self.expr(i) for i in e.indices)
        return f"T.Shuffle([{vecs}], [{idx}])", 10

    def visit_let(self, e):
        value = self.expr(e.value)
        name = self.names.get(id(e.var)) or self.define(e.var, e.var.name_hint)
        return f"T.Let({self.expr(e.body)}, where={{{name}: {value}}})", 10

    def visit_call(self, e):
        return self.call_text(e), 10

    def call_text(self, e) -> str:
        name = e.op[4:] if e.op.startswith("tir.") else e.op
        args = [self.expr(a) for a in e.args]
        record = INTRINSICS.get(e.op)
        if record is not None and record.tvmscript and e.args and \
                record.num_args in (None, len(e.args)) and all(a.dtype == e.dtype for a in e.args):
            return f"T.{name}({', '.join(args)})"
        if name == "if_then_else" and e.dtype == e.args[1].dtype:
            return f"T.if_then_else({', '.join(args)})"
        if name == "likely" and e.dtype == "bool":
            return f"T.likely({args[0]})"
        if name == "tvm_call_packed" and e.dtype == "int32":
            return f"T.call_packed({', '.join(args)})"
        if name == "call_extern" and args:
            return f"T.call_extern({json.dumps(e.dtype)}, {', '.join(args)})"
        return f"T.call_intrin({json.dumps(e.dtype)}, {json.dumps(e.op)}, {', '.join(args)})"


for _binary in _BIN:
    setattr(_FuncPrinter, visit_name(_binary), _FuncPrinter._visit_binary)


def _is_buffer(x):
    return isinstance(x, Buffer)


register_func("script.print_module", print_module)
register_func("script.script", script)
