"""TVMScript parser for TIR: Python source -> ``ast`` -> PrimFunc / IRModule.

Statements are walked here; expressions are evaluated by ``_Expr`` (in this file) against a
scope of TIR vars and buffers, falling back to the function's Python globals/closure, so
``T`` can be any alias of ``irlab.script.tir``. Reads/writes omitted in a block are inferred
from the buffers its body loads/stores (see ``irlab.script.regions``-style helper below).
"""

from __future__ import annotations

import ast
import inspect
import textwrap

from irlab.errors import IrlabError, ParseError
from irlab.ir import Span, structural_equal
from irlab.runtime.dtype import parse_dtype
from irlab.tir import expr as E
from irlab.tir import op as _op
from irlab.tir import stmt as S
from irlab.tir.buffer import Buffer, BufferRegion, MatchBufferRegion, Range
from irlab.tir.function import PrimFunc
from irlab.script import dialect
from irlab.script import tir_builtins as T
from irlab.te.reduction import CommReducer
from irlab.script.inference import infer_regions, contains_block

M = T.MARKERS
_LOOP_KINDS = {id(M["serial"]): S.ForKind.SERIAL, id(M["parallel"]): S.ForKind.PARALLEL,
               id(M["vectorized"]): S.ForKind.VECTORIZED, id(M["unroll"]): S.ForKind.UNROLLED,
               id(M["thread_binding"]): S.ForKind.THREAD_BINDING}
_AXIS = {id(M["axis.spatial"]): S.IterVar.DataPar, id(M["axis.reduce"]): S.IterVar.CommReduce,
         id(M["axis.scan"]): S.IterVar.Ordered, id(M["axis.opaque"]): 4}
def _expand_aug_assign(st: ast.AugAssign) -> ast.Assign:
    """``C[i] += x`` as TVM reads it: ``C[i] = C[i] + x`` (a store of the updated element)."""
    load = ast.fix_missing_locations(ast.copy_location(
        ast.Subscript(value=st.target.value, slice=st.target.slice, ctx=ast.Load()), st.target)) \
        if isinstance(st.target, ast.Subscript) else st.target
    value = ast.copy_location(ast.BinOp(left=load, op=st.op, right=st.value), st)
    return ast.copy_location(ast.Assign(targets=[st.target], value=value), st)


_BINOPS = {ast.Add: (E.Add, _op.add), ast.Sub: (E.Sub, _op.subtract),
           ast.Mult: (E.Mul, _op.multiply), ast.Div: (E.Div, _op.true_divide),
           ast.FloorDiv: (E.FloorDiv, _op.floordiv), ast.Mod: (E.FloorMod, _op.floormod)}
_CMPOPS = {ast.Lt: (E.LT, _op.less), ast.LtE: (E.LE, _op.less_equal),
           ast.Gt: (E.GT, _op.greater), ast.GtE: (E.GE, _op.greater_equal),
           ast.Eq: (E.EQ, _op.equal), ast.NotEq: (E.NE, _op.not_equal)}


# -- entry points ---------------------------------------------------------------------------
def parse_function(fn) -> PrimFunc:
    """The PrimFunc of a Python function decorated with ``@T.prim_func``."""
    src, first_line, filename = _source_of(fn)
    tree = ast.parse(src)
    env = dict(fn.__globals__)
    env.update(inspect.getclosurevars(fn).nonlocals)
    node = tree.body[0]
    return _Parser(env, filename, first_line - 1, src).function(node)


def ir_module(cls):
    """Decorator: an ``IRModule`` of the functions of a class (``@T.prim_func``, and those of
    dialects such as ``@R.function``, which refer to each other as ``cls.f``)."""
    from irlab.ir.module import IRModule

    if not inspect.isclass(cls):
        raise ParseError("@I.ir_module decorates a class whose methods are @T.prim_func or "
                         "@R.function")
    items = [(name, value) for name, value in cls.__dict__.items()
             if dialect.is_module_function(value)]
    attrs = PENDING_MODULE_ATTRS.pop() if PENDING_MODULE_ATTRS else None
    PENDING_MODULE_ATTRS.clear()
    return dialect.build_module(cls.__name__, items, IRModule(attrs=attrs))


# ``I.module_attrs({...})`` calls made by a class body not yet decorated.
PENDING_MODULE_ATTRS: list = []


def _take_module_attrs(node, env):
    """The dict of an ``I.module_attrs({...})`` statement of a class in text (None if
    there is none); the statement is removed from the class body."""
    attrs = None
    for item in list(node.body):
        call = item.value if isinstance(item, ast.Expr) else None
        if isinstance(call, ast.Call) and ast.unparse(call.func).endswith("module_attrs") \
                and len(call.args) == 1:
            attrs = eval(compile(ast.Expression(call.args[0]), "<script>", "eval"),  # noqa
                         dict(env))
            node.body.remove(item)
    return attrs


def from_source(text: str, extra_vars=None):
    """Parse TVMScript text (a ``@T.prim_func`` / ``@R.function`` function or an
    ``@I.ir_module`` class)."""
    import irlab
    from irlab.script import ir_builtins as I
    from irlab.script import relax as R

    env = {"T": T, "I": I, "R": R, "tvm": irlab, "irlab": irlab}
    env.update(extra_vars or {})
    src = textwrap.dedent(text)
    try:
        tree = ast.parse(src)
    except SyntaxError as err:
        raise ParseError(f"<script>:{err.lineno}: invalid Python syntax: {err.msg}",
                         err.lineno, err.offset) from None
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    if len(defs) != 1:
        raise ParseError("the script must hold exactly one function or class", 1)
    node = defs[0]
    source = dialect.SourceInfo(src, "<script>", 0, env)
    if isinstance(node, ast.FunctionDef):
        decorator = dialect.decorator_of(node, source)
        if decorator is not None:
            return dialect.build_module(
                "Module", [(node.name, decorator.defer_source(node, source))],
                _module())[node.name]
        return _Parser(env, "<script>", 0, src).function(node)
    attrs = _take_module_attrs(node, env)
    items = dialect.parse_class_body(
        node, source, lambda item: _Parser(env, "<script>", 0, src).function(item))
    mod = _module()
    if attrs:
        mod = type(mod)(attrs=attrs)
    return dialect.build_module(node.name, items, mod)


def _module():
    from irlab.ir.module import IRModule

    return IRModule()


parse = from_source


def _source_of(fn):
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as err:
        raise ParseError(f"cannot read the source of {fn!r}: {err}") from None
    return textwrap.dedent("".join(lines)), first, inspect.getsourcefile(fn) or "<unknown>"


# -- the parser -----------------------------------------------------------------------------
class _LoopInfo:
    def __init__(self, var, lo, extent):
        self.var, self.min, self.extent = var, lo, extent


class _BlockFrame:
    """What the leading ``T.*`` statements of a block declare."""

    def __init__(self):
        self.iter_vars, self.values = [], []
        self.reads = self.writes = None
        self.predicate = None
        self.annotations = None
        self.alloc_buffers, self.match_buffers = [], []
        self.init = None


def _identifier_of(tag: str) -> str:
    """``threadIdx.x`` -> ``threadIdx_x``: a thread tag as a variable name."""
    return tag.replace(".", "_")


class _Parser:
    def __init__(self, env, filename, line_offset, src):
        self.env = env
        self.filename = filename
        self.offset = line_offset
        self.src_lines = src.splitlines()
        self.scopes = [{}]
        self.loops = []
        self.frames = []
        self.root_allocs = []
        self.env_threads = {}  # id(var) -> the IterVar ``var = T.env_thread(tag)`` declared

    # -- errors and scopes ------------------------------------------------------------------
    def fail(self, node, message):
        line = getattr(node, "lineno", None)
        col = getattr(node, "col_offset", 0)
        if line is None:
            raise ParseError(message)
        text = self.src_lines[line - 1] if 0 < line <= len(self.src_lines) else ""
        caret = " " * col + "^"
        raise ParseError(f"{self.filename}:{line + self.offset}:{col + 1}: {message}\n"
                         f"    {text}\n    {caret}", line + self.offset, col + 1)

    def lookup(self, name, node):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.env:
            return self.env[name]
        import builtins

        if hasattr(builtins, name):
            return getattr(builtins, name)
        self.fail(node, f"undefined name {name!r}")

    def lookup_or_none(self, name):
        """What ``name`` is bound to in the function's scopes (None if unbound there)."""
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def bind(self, name, value):
        self.scopes[-1][name] = value

    def push(self):
        self.scopes.append({})

    def pop(self):
        self.scopes.pop()

    # -- function ---------------------------------------------------------------------------
    def function(self, node) -> PrimFunc:
        if not isinstance(node, ast.FunctionDef):
            self.fail(node, "@T.prim_func must decorate a function")
        params, buffer_map, attrs = [], {}, None
        self.buffer_map = buffer_map
        for arg in node.args.args:
            if arg.annotation is None:
                self.fail(arg, f"parameter {arg.arg} needs a type annotation "
                               "(T.Buffer(...), T.handle or a dtype such as T.int32)")
            ann = self.annotation(arg.annotation)
            if isinstance(ann, Buffer):
                var = E.Var(arg.arg, "handle")
                ann = ann.with_fields(name=arg.arg, data=E.Var(arg.arg, "handle"))
                buffer_map[var] = ann
                self.bind(arg.arg, ann)
            elif ann is M["handle"]:
                var = E.Var(arg.arg, "handle")
                self.bind(arg.arg, var)
            else:
                var = E.Var(arg.arg, ann.dtype)
                self.bind(arg.arg, var)
            params.append(var)
        body_nodes = list(node.body)
        if body_nodes and isinstance(body_nodes[0], ast.Expr) and isinstance(
                body_nodes[0].value, ast.Constant) and isinstance(body_nodes[0].value.value,
                                                                  str):
            body_nodes = body_nodes[1:]  # docstring
        rest = []
        for k, st in enumerate(body_nodes):  # function-level declarations come first
            call = st.value if isinstance(st, (ast.Expr, ast.Assign)) else None
            callee = self.callee(call) if isinstance(call, ast.Call) else None
            if callee is M["func_attr"]:  # T.bool(True) must stay a bool, not become 1
                attrs = {k: bool(v.value) if isinstance(v, E.IntImm) and v.dtype == "bool"
                         else v for k, v in self.func_attrs(call).items()}
            elif isinstance(callee, T._DType) and isinstance(st, ast.Assign) and not \
                    call.args and isinstance(st.targets[0], ast.Name):
                # ``n = T.int32()``: a symbolic shape variable used by the match_buffers below
                name = st.targets[0].id
                self.bind(name, type(self.eval(call))(name, callee.dtype))
            elif self._head_var_tuple(st):
                pass  # ``m, n = T.int32(), T.int32()``
            elif callee is M["match_buffer"] and isinstance(st, ast.Assign):
                src = self.eval(call.args[0]) if call.args else None
                if not (isinstance(src, E.Var) and any(src is p for p in params)):
                    self.fail(call, "T.match_buffer at function level takes a handle parameter")
                buf = self.buffer_decl(call, 1, st.targets[0])
                buffer_map[src] = buf
            elif callee is M["env_thread"] and isinstance(st, ast.Assign) and isinstance(
                    st.targets[0], ast.Name):
                self.env_thread(call, st.targets[0].id)  # may come before the match_buffers
            elif self._head_var(st, call, callee):
                pass  # ``off = te.var("elem_offset")``: a variable the match_buffers below use
            elif callee is M["alloc_buffer"] and isinstance(st, ast.Assign):
                # TVM lets root allocations and handle matches interleave in the head
                self.root_allocs.append(self.buffer_decl(call, 0, st.targets[0]))
            elif callee is M["Buffer"] and isinstance(st, ast.Assign):
                self.buffer_decl(call, 0, st.targets[0])  # a buffer declaration, no storage
            else:
                rest = body_nodes[k:]
                break
        body = self.stmts(rest, node)
        if self.root_allocs or contains_block(body):
            if not (isinstance(body, S.BlockRealize) and not self.root_allocs
                    and not body.block.iter_vars and body.block.name_hint == "root"):
                root = S.Block([], [], [], "root", body, alloc_buffers=self.root_allocs)
                body = S.BlockRealize([], True, root)
        order = {id(p): k for k, p in enumerate(params)}
        bmap = sorted(buffer_map.items(), key=lambda kv: order[id(kv[0])])
        try:
            return PrimFunc(params, body, None, bmap, attrs)
        except IrlabError as err:
            self.fail(node, str(err))

    def _head_var_tuple(self, st) -> bool:
        """Bind ``m, n = T.int32(), T.int32()``: several shape variables at once."""
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(
                st.targets[0], ast.Tuple) and isinstance(st.value, ast.Tuple)
                and len(st.targets[0].elts) == len(st.value.elts)):
            return False
        pairs = list(zip(st.targets[0].elts, st.value.elts))
        if not all(isinstance(t, ast.Name) and isinstance(v, ast.Call) and not v.args
                   and isinstance(self.callee(v), T._DType) for t, v in pairs):
            return False
        for t, v in pairs:
            self.bind(t.id, type(self.eval(v))(t.id, self.callee(v).dtype))
        return True

    def _head_var(self, st, call, callee) -> bool:
        """Bind ``name = <Python call returning a TIR Var>`` met among the head declarations."""
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(
                st.targets[0], ast.Name) and callable(callee)
                and not isinstance(callee, (T._Marker, T._DType))):
            return False
        value = self.eval(call)
        if not isinstance(value, E.Var):
            return False
        self.bind(st.targets[0].id, value)
        return True

    def env_thread(self, call, name):
        """``name = T.env_thread("threadIdx.x")``: a thread variable T.launch_thread binds."""
        tag = self.eval(call.args[0]) if len(call.args) == 1 else None
        if not isinstance(tag, str):
            self.fail(call, 'T.env_thread takes a thread tag, e.g. T.env_thread("threadIdx.x")')
        var = E.Var(name, "int32")
        self.env_threads[id(var)] = S.IterVar(None, var, S.IterVar.ThreadIndex, tag)
        self.bind(name, var)
        return None

    def attr_stmt(self, call, callee, body, name=None):
        """``T.attr(node, key, value)`` or ``T.launch_thread(thread, extent)`` over the
        statements ``body()`` parses (the rest of the sequence or a ``with`` body)."""
        args = [self.eval(a) for a in call.args]
        if callee is M["attr"]:
            if len(args) != 3 or call.keywords:
                self.fail(call, "T.attr takes (node, attr_key, value)")
            self.push()
            try:
                return S.AttrStmt(*args, body())
            finally:
                self.pop()
        if len(args) != 2:
            self.fail(call, "T.launch_thread takes (thread, extent): an env_thread variable "
                            'or a tag such as "threadIdx.x", and the number of threads')
        thread, extent = args[0], E.convert(args[1])
        if isinstance(thread, str):
            iv = S.IterVar(None, E.Var(name or _identifier_of(thread), "int32"),
                           S.IterVar.ThreadIndex, thread)
        elif isinstance(thread, E.Var) and id(thread) in self.env_threads:
            iv = self.env_threads[id(thread)]
        else:
            self.fail(call, f"T.launch_thread: {thread!r} is neither a thread tag nor a "
                            "variable declared with T.env_thread")
        iv = iv.with_fields(dom=Range.from_min_extent(_op.const(0, extent.dtype), extent))
        key = "virtual_thread" if iv.thread_tag.startswith("vthread") else "thread_extent"
        self.push()
        try:
            if name is not None:
                self.bind(name, iv.var)
            return S.AttrStmt(iv, key, extent, body())
        finally:
            self.pop()

    def comm_reducer(self, call):
        """``T.comm_reducer(lambda x0, x1, y0, y1: (r0, r1), [id0, id1])``: the accumulators
        come first in the lambda's parameters, then the new values (one each per identity)."""
        if len(call.args) != 2 or not isinstance(call.args[0], ast.Lambda):
            self.fail(call, "T.comm_reducer takes (lambda lhs..., rhs...: result, identities)")
        fn, identity = call.args[0], self.eval(call.args[1])
        identity = [E.convert(e) for e in (identity if isinstance(identity, (list, tuple))
                                           else [identity])]
        names = [a.arg for a in fn.args.args]
        if len(names) != 2 * len(identity):
            self.fail(fn, f"T.comm_reducer: {len(identity)} identity value(s) need "
                          f"{2 * len(identity)} lambda parameters, got {len(names)}")
        dtypes = [e.dtype for e in identity] * 2
        params = [E.Var(n, d) for n, d in zip(names, dtypes)]
        self.push()
        try:
            for n, v in zip(names, params):
                self.bind(n, v)
            result = self.eval(fn.body)
        finally:
            self.pop()
        result = list(result) if isinstance(result, (list, tuple)) else [result]
        k = len(identity)
        return CommReducer(params[:k], params[k:], result, identity)

    def func_attrs(self, call) -> dict:
        """The dict of ``T.func_attr({...})``."""
        value = self.eval(call.args[0]) if len(call.args) == 1 and not call.keywords else None
        if not isinstance(value, dict):
            self.fail(call, 'T.func_attr takes one dict, e.g. T.func_attr({"global_symbol": '
                            '"main", "tir.noalias": True})')
        return value

    def annotation(self, node):
        value = self.eval(node)
        if isinstance(value, (Buffer, T._DType)) or value is M["handle"]:
            return value
        self.fail(node, "a parameter annotation must be T.Buffer(shape, dtype), T.handle or "
                        "a dtype such as T.int32")

    # -- statements -------------------------------------------------------------------------
    def stmts(self, nodes, parent):
        """One Stmt for a statement list; 'scoped' statements (let, allocate, assert...) take
        the rest of the list as their body."""
        out = []
        for k, st in enumerate(nodes):
            res = self.stmt(st, nodes[k + 1:])
            if isinstance(res, tuple):  # (stmt, consumed_rest)
                out.append(res[0])
                break
            if res is not None:
                out.append(res)
        if not out:
            if isinstance(parent, ast.With) or isinstance(parent, (ast.For, ast.If, ast.While)):
                return S.Evaluate(0)
            return S.Evaluate(0)
        return S.SeqStmt.flatten(*out)

    def stmt(self, st, rest):
        try:
            return self._stmt(st, rest)
        except ParseError:
            raise
        except (IrlabError, TypeError, ValueError, IndexError, KeyError) as err:
            self.fail(st, f"{type(err).__name__}: {err}")

    def _stmt(self, st, rest):
        if isinstance(st, ast.For):
            return self.for_stmt(st)
        if isinstance(st, ast.With):
            return self.with_stmt(st, rest)
        if isinstance(st, ast.Assign):
            return self.assign(st, rest)
        if isinstance(st, ast.AnnAssign):
            if st.value is None or not isinstance(st.target, ast.Name):
                self.fail(st, "expected `name: T.<dtype> = value`")
            dtype = self.eval(st.annotation)
            value = self.eval(st.value)
            var = E.Var(st.target.id, dtype.dtype)
            return self.scoped_let(var, value, st.target.id, rest, st), None
        if isinstance(st, ast.AugAssign):
            return self.assign(_expand_aug_assign(st), rest)
        if isinstance(st, ast.If):
            cond = self.eval(st.test)
            then = self.block_body(st.body, st)
            other = self.block_body(st.orelse, st) if st.orelse else None
            return S.IfThenElse(cond, then, other)
        if isinstance(st, ast.While):
            return S.While(self.eval(st.test), self.block_body(st.body, st))
        if isinstance(st, ast.Assert):
            cond = self.eval(st.test)
            msg = self.eval(st.msg) if st.msg is not None else "assert failed"
            return S.AssertStmt(cond, msg, self.stmts(rest, st)), None
        if isinstance(st, ast.Pass):
            return None
        if isinstance(st, ast.Expr):
            callee = self.callee(st.value) if isinstance(st.value, ast.Call) else None
            if callee in (M["launch_thread"], M["attr"]):  # the rest is its body
                return self.attr_stmt(st.value, callee, lambda: self.stmts(rest, st)), None
            return self.expr_stmt(st)
        self.fail(st, f"unsupported statement {type(st).__name__} in TVMScript")

    def block_body(self, nodes, parent):
        self.push()
        try:
            return self.stmts(nodes, parent)
        finally:
            self.pop()

    def expr_stmt(self, st):
        v = st.value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return None  # a string statement is a comment
        callee = self.callee(v) if isinstance(v, ast.Call) else None
        frame = self.frames[-1] if self.frames else None
        if callee is M["evaluate"]:
            return S.Evaluate(self.eval(v.args[0]))
        if callee in (M["reads"], M["writes"]) and frame is not None:
            regions = [self.region(a) for a in v.args]
            regions = [r for group in regions for r in group]
            if callee is M["reads"]:
                frame.reads = regions
            else:
                frame.writes = regions
            return None
        if callee is M["where"] and frame is not None:
            frame.predicate = self.eval(v.args[0])
            return None
        if callee is M["block_attr"] and frame is not None:
            frame.annotations = self.eval(v.args[0])
            return None
        if callee is M["func_attr"]:
            self.fail(v, "T.func_attr must come first in the function body")
        if isinstance(callee, T._Marker):
            self.fail(v, f"{callee!r} cannot be used here")
        value = self.eval(v)
        if not isinstance(value, E.PrimExpr):
            self.fail(v, "an expression statement must be a TIR call (or T.evaluate(...))")
        return S.Evaluate(value)

    def scoped_let(self, var, value, name, rest, st):
        self.push()
        self.bind(name, var)
        try:
            return S.LetStmt(var, value, self.stmts(rest, st))
        finally:
            self.pop()

    def assign(self, st, rest):
        if len(st.targets) != 1:
            self.fail(st, "chained assignment is not supported")
        target, v = st.targets[0], st.value
        callee = self.callee(v) if isinstance(v, ast.Call) else None
        if callee is M["axis.remap"]:
            return self.axis_remap(st, v)
        if callee in [M[k] for k in ("axis.spatial", "axis.reduce", "axis.scan",
                                     "axis.opaque")]:
            return self.axis(st, v, callee)
        if callee in (M["alloc_buffer"], M["match_buffer"], M["Buffer"]):
            return self.buffer_assign(st, v, callee)
        if callee is M["decl_buffer"]:
            buf = self.buffer_decl(v, 0, target)
            return S.DeclBuffer(buf, self.stmts(rest, st)), None
        if callee is M["env_thread"] and isinstance(target, ast.Name):
            return self.env_thread(v, target.id)
        if callee is M["launch_thread"] and isinstance(target, ast.Name):
            return self.attr_stmt(v, callee, lambda: self.stmts(rest, st), target.id), None
        if callee in (M["allocate"], M["allocate_const"]):
            var = self.allocate_var(v, target)
            self.bind(target.id, var)
            return self.allocate(v, var, self.stmts(rest, st)), None
        if isinstance(target, ast.Subscript):
            buf = self.eval(target.value)
            if not isinstance(buf, Buffer):
                self.fail(target, "only buffers can be stored to with `X[...] = value`")
            idx = self.indices(target.slice)
            value = self.eval(v)
            if not isinstance(value, E.PrimExpr):
                value = _op.const(value, buf.dtype)
            return S.BufferStore(buf, self.store_value(buf, idx, value, st), idx,
                                 span=self.span(st))
        if not isinstance(target, ast.Name):
            self.fail(target, "can only assign to a name or a buffer element")
        value = self.eval_capturing_buffers(v)
        if isinstance(value, T.BufferRequest):  # a helper function declared a buffer
            buf = self.make_buffer(v, list(value.args), dict(value.kwargs), target.id)
            self.bind(target.id, buf)
            return (S.DeclBuffer(buf, self.stmts(rest, st)), None) \
                if value.kind == "decl_buffer" else None
        if isinstance(value, E.Var) and isinstance(v, ast.Call) and isinstance(
                self.callee(v), T._DType):  # ``n = T.int32()`` declares a variable
            self.bind(target.id, type(value)(target.id, value.dtype))
            return None
        if not isinstance(value, E.PrimExpr):
            self.bind(target.id, value)  # a Python value (a constant, a tuple...)
            return None
        var = E.Var(target.id, value.dtype)
        return self.scoped_let(var, value, target.id, rest, st), None

    def eval_capturing_buffers(self, node):
        """``self.eval(node)``, where T.decl_buffer/T.Buffer called by a Python helper
        function return a request for the parser instead of failing."""
        saved, T.CAPTURE_BUFFERS[0] = T.CAPTURE_BUFFERS[0], True
        try:
            return self.eval(node)
        finally:
            T.CAPTURE_BUFFERS[0] = saved

    def store_value(self, buf, indices, value, st):
        """``value`` cast to the stored element's dtype, as TVM's parser does
        (``B[i] = T.int32(3)`` into a float32 buffer stores ``T.float32(3)``)."""
        lanes = max([parse_dtype(E.convert(i).dtype).lanes for i in indices] or [1])
        base = parse_dtype(buf.dtype)
        expected = str(base.with_lanes(base.lanes * lanes))
        if value.dtype == expected:
            return value
        if parse_dtype(value.dtype).lanes not in (1, base.lanes * lanes):
            self.fail(st, f"cannot store a {value.dtype} value into {buf.name} "
                          f"({expected} at this index)")
        return _op.cast(value, expected)

    def span(self, node) -> Span:
        """Where ``node`` is in the source (kept on the IR for the verifier's messages)."""
        return Span(self.filename, node.lineno + self.offset, node.col_offset + 1)

    def buffer_assign(self, st, call, callee):
        target = st.targets[0]
        frame = self.frames[-1] if self.frames else None
        if callee is M["Buffer"]:
            self.buffer_decl(call, 0, target)
            return None
        if callee is M["alloc_buffer"]:
            buf = self.buffer_decl(call, 0, target)
            (frame.alloc_buffers if frame is not None else self.root_allocs).append(buf)
            return None
        if frame is None:
            self.fail(call, "T.match_buffer of a handle must come first in the function")
        region = self.region(call.args[0])
        if len(region) != 1:
            self.fail(call, "T.match_buffer takes one buffer region")
        buf = self.buffer_decl(call, 1, target)
        frame.match_buffers.append(MatchBufferRegion(buf, region[0]))
        return None

    def buffer_decl(self, call, skip, target) -> Buffer:
        """A Buffer from ``(shape, dtype, data=, strides=, elem_offset=, scope=...)``."""
        if not isinstance(target, ast.Name):
            self.fail(target, "a buffer must be assigned to a name")
        args = [self.eval(a) for a in call.args[skip:]]
        kw = {k.arg: self.eval(k.value) for k in call.keywords}
        buf = self.make_buffer(call, args, kw, target.id)
        self.bind(target.id, buf)
        return buf

    def make_buffer(self, node, args, kw, name) -> Buffer:
        names = ("shape", "dtype", "data", "strides", "elem_offset", "scope", "align",
                 "offset_factor", "buffer_type", "axis_separators")
        for k, a in enumerate(args):
            kw.setdefault(names[k], a)
        if "shape" not in kw:
            self.fail(node, "a buffer needs a shape")
        shape = kw["shape"]
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        dtype = kw.get("dtype") or "float32"
        dtype = dtype.dtype if isinstance(dtype, T._DType) else dtype
        data = kw.get("data")
        data = E.Var(name, "handle") if data is None else data
        # a string stride names a new variable (TVM's legacy ``strides=("A_s0",)``)
        strides = tuple(E.Var(x, "int32") if isinstance(x, str) else x
                        for x in kw.get("strides") or ())
        return Buffer(data, dtype, shape, strides, kw.get("elem_offset"), name,
                      kw.get("axis_separators") or (), kw.get("scope") or "global")

    def allocate_var(self, call, target):
        if not isinstance(target, ast.Name):
            self.fail(target, "T.allocate must be assigned to a name")
        return E.Var(target.id, "handle")

    def allocate(self, call, var, body):
        args = [self.eval(a) for a in call.args]
        kw = {k.arg: self.eval(k.value) for k in call.keywords}
        if self.callee(call) is M["allocate_const"]:  # (data, dtype, extents, annotations)
            names = ("data", "dtype", "extents", "annotations")
            got = dict(zip(names, args), **kw)
            if "data" not in got or "extents" not in got:
                self.fail(call, "T.allocate_const needs its data and extents")
            extents = got["extents"]
            extents = extents if isinstance(extents, (list, tuple)) else [extents]
            try:
                return S.AllocateConst(var, got.get("dtype", "float32"), extents, got["data"],
                                       body, got.get("annotations"), span=self.span(call))
            except IrlabError as err:
                self.fail(call, str(err))
        extents = args[0] if isinstance(args[0], (list, tuple)) else [args[0]]
        dtype = args[1] if len(args) > 1 else kw.get("dtype", "float32")
        cond = args[3] if len(args) > 3 else kw.get("condition", True)
        return S.Allocate(var, dtype, extents, cond, body, kw.get("annotations"))

    # -- loops ------------------------------------------------------------------------------
    def for_stmt(self, st):
        if st.orelse:
            self.fail(st, "for ... else is not supported")
        it = st.iter
        callee = self.callee(it) if isinstance(it, ast.Call) else None
        names = self.target_names(st.target)
        args = [self.eval(a) for a in it.args] if isinstance(it, ast.Call) else []
        kw = {k.arg: self.eval(k.value) for k in it.keywords} if isinstance(it, ast.Call) else {}
        if callee is M["grid"]:
            if len(names) != len(args):
                self.fail(st, f"T.grid has {len(args)} extents for {len(names)} loop vars")
            specs = [(0, a, S.ForKind.SERIAL, None, None) for a in args]
        elif callee is range or (callee is not None and id(callee) in _LOOP_KINDS):
            if len(names) != 1:
                self.fail(st.target, "this loop defines one variable")
            kind = _LOOP_KINDS.get(id(callee), S.ForKind.SERIAL)
            lo, extent = self.range_args(it, args, kw)
            thread = None
            if kind == S.ForKind.THREAD_BINDING:
                tag = kw.get("thread", args[2] if len(args) > 2 else "")
                thread = S.IterVar(None, E.Var(tag, "int32"), S.IterVar.ThreadIndex, tag)
            specs = [(lo, extent, kind, thread, kw.get("annotations"))]
        else:
            self.fail(it, "a loop must iterate over range(...), T.grid, T.serial, T.parallel, "
                          "T.vectorized, T.unroll or T.thread_binding")
        self.push()
        loops = []
        for name, (lo, extent, kind, thread, ann) in zip(names, specs):
            extent = E.convert(extent)
            var = E.Var(name, extent.dtype)
            self.bind(name, var)
            info = _LoopInfo(var, E.convert(lo, extent.dtype), extent)
            self.loops.append(info)
            loops.append((info, kind, thread, ann))
        try:
            body = self.stmts(st.body, st)
        finally:
            del self.loops[len(self.loops) - len(loops):]
            self.pop()
        for info, kind, thread, ann in reversed(loops):
            if thread is not None:
                thread = thread.with_fields(dom=Range.from_min_extent(info.min, info.extent))
            body = S.For(info.var, info.min, info.extent, kind, body, thread, ann)
        return body

    def range_args(self, node, args, kw):
        args = [a for a in args[:2] if not isinstance(a, str)]
        if len(args) == 1:
            return 0, args[0]
        if len(args) != 2:
            self.fail(node, "a loop range takes (extent) or (begin, end)")
        return args[0], self.extent(args[0], args[1])

    @staticmethod
    def extent(lo, end):
        """``end - lo``; ``lo + n`` gives back ``n`` itself (as printed by the printer)."""
        if isinstance(end, E.Add) and structural_equal(end.a, lo):
            return end.b
        return _op.subtract(end, lo)

    def target_names(self, target):
        if isinstance(target, ast.Name):
            return [target.id]
        if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            return [e.id for e in target.elts]
        self.fail(target, "loop targets must be names")

    # -- with: blocks, init, attr, scoped let/allocate -------------------------------------
    def with_stmt(self, st, rest):
        if len(st.items) != 1:
            self.fail(st, "one context manager per `with`")
        item = st.items[0]
        call = item.context_expr
        callee = self.callee(call) if isinstance(call, ast.Call) else None
        if callee is M["block"]:
            return self.block(st, call)
        if callee is M["init"]:
            frame = self.frames[-1] if self.frames else None
            if frame is None:
                self.fail(st, "T.init() is only allowed inside a block")
            frame.init = self.block_body(st.body, st)
            return None
        if callee is M["grid"] and item.optional_vars is not None:  # old `with T.grid(n) as i`
            fake = ast.For(target=item.optional_vars, iter=call, body=st.body, orelse=[])
            ast.copy_location(fake, st)
            return self.for_stmt(fake)
        if callee in (M["attr"], M["launch_thread"]):
            name = item.optional_vars.id if isinstance(item.optional_vars, ast.Name) else None
            return self.attr_stmt(call, callee, lambda: self.stmts(st.body, st), name)
        if callee is M["Assert"]:
            cond, msg = [self.eval(a) for a in call.args]
            return S.AssertStmt(cond, msg, self.block_body(st.body, st))
        name = item.optional_vars
        if callee is M["LetStmt"] and name is None and any(k.arg == "var" for k in
                                                          call.keywords):
            return self.let_stmt_to_var(st, call)
        if callee in (M["LetStmt"], M["let"], M["allocate"], M["allocate_const"],
                      M["decl_buffer"]):
            if not isinstance(name, ast.Name):
                self.fail(st, f"{callee!r} needs `as name`")
            self.push()
            try:
                if callee in (M["allocate"], M["allocate_const"]):
                    var = self.allocate_var(call, name)
                    self.bind(name.id, var)
                    return self.allocate(call, var, self.stmts(st.body, st))
                if callee is M["decl_buffer"]:
                    buf = self.buffer_decl(call, 0, name)
                    return S.DeclBuffer(buf, self.stmts(st.body, st))
                value = E.convert(self.eval(call.args[0]))
                var = E.Var(name.id, value.dtype)
                self.bind(name.id, var)
                return S.LetStmt(var, value, self.stmts(st.body, st))
            finally:
                self.pop()
        self.fail(call, "unsupported `with`: expected T.block, T.init, T.attr, T.LetStmt, "
                        "T.allocate, T.decl_buffer or T.Assert")

    def let_stmt_to_var(self, st, call):
        """``with T.LetStmt(value, var=v):`` binds the variable ``v`` declared before."""
        var = self.eval(next(k.value for k in call.keywords if k.arg == "var"))
        if not isinstance(var, E.Var) or len(call.args) != 1:
            self.fail(call, "T.LetStmt(value, var=v) takes one value and a variable v")
        value = E.convert(self.eval(call.args[0]), var.dtype)
        return S.LetStmt(var, value, self.block_body(st.body, st))

    def block(self, st, call):
        name = self.eval(call.args[0]) if call.args else ""
        frame = _BlockFrame()
        self.frames.append(frame)
        self.push()
        try:
            body = self.stmts(st.body, st)
        finally:
            self.pop()
            self.frames.pop()
        reads, writes = frame.reads, frame.writes
        if reads is None or writes is None:
            local = {id(b) for b in frame.alloc_buffers}
            local |= {id(m.buffer) for m in frame.match_buffers}
            inf_reads, inf_writes = infer_regions(body, frame.init, local)
            reads = inf_reads if reads is None else reads
            writes = inf_writes if writes is None else writes
        block = S.Block(frame.iter_vars, reads, writes, name, body, frame.init,
                        frame.alloc_buffers, frame.match_buffers, frame.annotations,
                        span=self.span(st))
        pred = True if frame.predicate is None else frame.predicate
        return S.BlockRealize(frame.values, pred, block, span=self.span(st))

    def axis(self, st, call, callee):
        frame = self.current_frame(st)
        target = st.targets[0]
        if not isinstance(target, ast.Name) or len(call.args) != 2:
            self.fail(st, "expected `v = T.axis.spatial(dom, value)`")
        dom, value = self.eval(call.args[0]), E.convert(self.eval(call.args[1]))
        if isinstance(dom, (tuple, list)):
            lo, end = E.convert(dom[0]), E.convert(dom[1])
            rng = Range.from_min_extent(lo, self.extent(lo, end))
        elif isinstance(dom, Range):
            rng = dom
        else:
            rng = Range.from_min_extent(E.convert(0, E.convert(dom).dtype), dom)
        var = E.Var(target.id, rng.extent.dtype)
        frame.iter_vars.append(S.IterVar(rng, var, _AXIS[id(callee)]))
        frame.values.append(value)
        self.bind(target.id, var)
        return None

    def axis_remap(self, st, call):
        frame = self.current_frame(st)
        names = self.target_names(st.targets[0])
        kinds = self.eval(call.args[0])
        values = self.eval(call.args[1])
        if not isinstance(kinds, str) or len(kinds) != len(names) or len(values) != len(names):
            self.fail(call, f"T.axis.remap: {len(names)} names need a kind string and a "
                            "list of the same length")
        for name, kind, value in zip(names, kinds, values):
            loop = next((lp for lp in reversed(self.loops) if lp.var is value), None)
            if loop is None or kind not in "SR":
                self.fail(call, "T.axis.remap binds loop variables with kinds 'S' or 'R'")
            var = E.Var(name, value.dtype)
            it = S.IterVar.DataPar if kind == "S" else S.IterVar.CommReduce
            frame.iter_vars.append(S.IterVar(Range.from_min_extent(loop.min, loop.extent),
                                             var, it))
            frame.values.append(value)
            self.bind(name, var)
        return None

    def current_frame(self, st):
        if not self.frames:
            self.fail(st, "T.axis.* is only allowed inside a block")
        return self.frames[-1]

    def region(self, node):
        """Buffer regions from ``A[i, 0:4]`` (or a list of them, or a whole buffer)."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return [r for e in node.elts for r in self.region(e)]
        if isinstance(node, ast.Subscript):
            buf = self.eval(node.value)
            if isinstance(buf, Buffer):
                elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                ranges = []
                for e in elts:
                    if isinstance(e, ast.Slice):
                        lo = E.convert(self.eval(e.lower)) if e.lower else E.convert(0)
                        end = self.eval(e.upper)
                        ranges.append(Range.from_min_extent(lo, self.extent(lo, end)))
                    else:
                        index = E.convert(self.eval(e))  # extent 1 in the index's dtype
                        ranges.append(Range.from_min_extent(index, E.convert(1, index.dtype)))
                return [BufferRegion(buf, ranges)]
        value = self.eval(node)
        if isinstance(value, Buffer):
            return [BufferRegion.full_region(value)]
        if isinstance(value, BufferRegion):
            return [value]
        self.fail(node, "expected a buffer region such as A[vi, 0:4]")

    # -- expressions ------------------------------------------------------------------------
    def callee(self, call):
        try:
            return self.eval(call.func)
        except ParseError:
            return None

    def indices(self, node):
        elts = node.elts if isinstance(node, ast.Tuple) else [node]
        out = []
        for e in elts:
            if isinstance(e, ast.Slice):
                self.fail(e, "slices are only allowed in T.reads/T.writes/T.match_buffer")
            index = self.eval(e)
            dtype = getattr(index, "dtype", None)
            if isinstance(index, float) or (isinstance(dtype, str) and parse_dtype(
                    dtype).code not in ("int", "uint")):
                self.fail(e, f"a buffer index must be an integer, got {ast.unparse(e)} "
                             f"({dtype or 'a Python float'})")
            out.append(index)
        return out

    def eval(self, node):
        try:
            return self._eval(node)
        except ParseError:
            raise
        except (IrlabError, TypeError, ValueError, IndexError, KeyError) as err:
            self.fail(node, f"{type(err).__name__}: {err}")

    def _eval(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.lookup(node.id, node)
        if isinstance(node, ast.Attribute):
            base = self.eval(node.value)
            if not hasattr(base, node.attr):
                self.fail(node, f"{node.attr!r} is not defined in {ast.unparse(node.value)}")
            return getattr(base, node.attr)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.eval(e) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.UnaryOp):
            x = self.eval(node.operand)
            if isinstance(node.op, ast.USub):
                return -x if not isinstance(x, E.PrimExpr) else _op.negate(x)
            if isinstance(node.op, ast.Not):
                return E.Not(x) if isinstance(x, E.PrimExpr) else not x
            if isinstance(node.op, ast.UAdd):
                return x
            return ~x
        if isinstance(node, ast.BoolOp):
            vals = [self.eval(v) for v in node.values]
            cls = E.And if isinstance(node.op, ast.And) else E.Or
            out = vals[0]
            for v in vals[1:]:
                out = cls(out, v)
            return out
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                self.fail(node, "chained comparisons are not supported; use `and`")
            a, b = self.eval(node.left), self.eval(node.comparators[0])
            node_cls, fn = _CMPOPS[type(node.ops[0])]
            return self.build(node_cls, fn, a, b)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.IfExp):
            return E.Select(self.eval(node.test), self.eval(node.body), self.eval(node.orelse))
        self.fail(node, f"unsupported expression {type(node).__name__} in TVMScript")

    @staticmethod
    def build(node_cls, fn, a, b):
        """The node itself when dtypes agree (exact round trip), else TVM's dtype matching."""
        if not isinstance(a, E.PrimExpr) and not isinstance(b, E.PrimExpr):
            return fn(E.convert(a), E.convert(b))
        ea = E.convert(a, b.dtype if isinstance(b, E.PrimExpr) and isinstance(a, (int, float))
                       else None)
        eb = E.convert(b, ea.dtype if isinstance(b, (int, float)) else None)
        if ea.dtype == eb.dtype:
            return node_cls(ea, eb)
        return fn(ea, eb)

    def binop(self, node):
        a, b = self.eval(node.left), self.eval(node.right)
        if not isinstance(a, E.PrimExpr) and not isinstance(b, E.PrimExpr):
            return _python_binop(node.op, a, b)
        entry = _BINOPS.get(type(node.op))
        if entry is None:
            self.fail(node, f"operator {type(node.op).__name__} is not supported here")
        return self.build(*entry, a, b)

    def subscript(self, node):
        base = self.eval(node.value)
        if isinstance(base, Buffer):
            return base[tuple(self.indices(node.slice))]
        if base is M["Buffer"]:  # old spelling T.Buffer[(128, 128), "float32"]
            args = self.eval(node.slice)
            args = args if isinstance(args, tuple) else (args,)
            return self.make_buffer(node, list(args), {}, "buffer")
        return base[self.eval(node.slice)]

    def call(self, node):
        fn = self.eval(node.func)
        if fn is T.Let and node.keywords and isinstance(node.keywords[0].value, ast.Dict):
            d = node.keywords[0].value  # T.Let(body, where={v: value}) binds v in body
            value = self.eval(d.values[0])
            known = self.lookup_or_none(d.keys[0].id) if isinstance(d.keys[0], ast.Name) \
                else None
            if isinstance(known, E.Var):  # ``x = T.int32()`` declared above: bind that one
                return E.Let(known, E.convert(value, known.dtype), self.eval(node.args[0]))
            value = E.convert(value)
            var = E.Var(d.keys[0].id, value.dtype)
            self.push()
            self.bind(d.keys[0].id, var)
            try:
                return E.Let(var, value, self.eval(node.args[0]))
            finally:
                self.pop()
        if fn is M["Buffer"]:
            args = [self.eval(a) for a in node.args]
            kw = {k.arg: self.eval(k.value) for k in node.keywords}
            return self.make_buffer(node, args, kw, "buffer")
        if fn is M["comm_reducer"]:
            return self.comm_reducer(node)
        if fn is M["handle"] and isinstance(node.func, ast.Attribute):  # a pointer annotation
            return fn(*[self.eval(a) for a in node.args])
        if isinstance(fn, T._Marker):
            self.fail(node, f"{fn!r} cannot be used inside an expression")
        args = [self.eval(a) for a in node.args]
        kw = {k.arg: self.eval(k.value) for k in node.keywords}
        return fn(*args, **kw)


def _python_binop(op, a, b):
    import operator

    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow}
    return ops[type(op)](a, b)
