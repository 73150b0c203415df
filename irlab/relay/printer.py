"""The Relay text printer: TVM's text format, byte for byte (``relay_text_printer.cc``).

- ``pretty_print(node)`` is ``print(mod)`` / ``str(expr)``: no version header, no metadata.
- ``astext(node, show_meta_data=True)`` adds ``#[version = "0.0.5"]`` and, when non-scalar
  constants were printed as ``meta[relay.Constant][k]``, a ``#[metadata]`` section (or, with
  ``show_meta_data=False``, TVM's "metadata section has been omitted" comment).
- ``pretty_print_located(node)`` also returns where each expression node was printed.

The algorithm is TVM's: graph normal form through a memo of printed docs, a dependency graph
counting the uses of each node (a node used once and last in its scope is inlined), temporaries
``%N`` numbered per print call, the dataflow part of a graph expanded iteratively (TVM's
``ExpandDataflow``), so a chain of 10,000 calls prints without deep recursion.

Metadata section (irlab's own format, read back by ``irlab.relay.parser``): after the line
``#[metadata]`` comes a JSON object ``{"relay.Constant": [{"dtype": "float32", "shape": [3, 1],
"data": "<base64 of the C-order little-endian bytes>"}, ...]}``; entry ``k`` is
``meta[relay.Constant][k]``. TVM writes its node-graph JSON there instead.

TVM quirks kept on purpose: a non-empty meta table ends the text with a line break even when
the section is not shown (``print(mod)``); a node first printed inside an ``if`` branch or a
``fn`` body may be used as ``%N`` earlier in the text (the parser reads such uses ahead).

One deliberate difference: TVM prints floats with C++'s default 6 significant digits (``%g``),
which can lose bits. irlab prints the same ``%g`` text whenever it reads back to the same value
and the shortest exact form otherwise, so that ``parse(astext(m))`` always equals ``m``.
"""

from __future__ import annotations

import base64
import json
import math

import numpy as np

from irlab.ir.attrs import Attrs, DictAttrs
from irlab.runtime.dtype import to_numpy_dtype
from irlab.ir.expr import GlobalVar, RelayExpr
from irlab.ir.module import IRModule
from irlab.ir.op import Op
from irlab.runtime.registry import register_func
from irlab.ir.type import (FuncType, IncompleteType, PrimType, RelayRefType, TensorType,
                           TupleType, Type, TypeCall)
from irlab.ir.adt import Constructor
from irlab.relay.adt import Match, PatternConstructor, PatternTuple, PatternVar
from irlab.relay.expr import (Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple,
                              TupleGetItem, Var)
from irlab.relay.expr_functor import visit_method
from irlab.relay.function import Function
from irlab.relay.text_doc import BEGIN, END, NL, indent, join, render

VERSION = "0.0.5"

_OMITTED = [
    "/* For debugging purposes the metadata section has been omitted.", NL,
    " * If you would like to see the full metadata section you can set the ", NL,
    " * option to `True` when invoking `astext`. ", NL,
    " */",
]


# ---------------------------------------------------------------------------------------------
# leaves: types, numbers, strings
def type_text(ty) -> str:
    """A type as TVM's Relay printer writes it."""
    if isinstance(ty, TensorType):
        if not ty.shape:
            return ty.dtype
        return f"Tensor[({', '.join(str(d) for d in ty.shape)}), {ty.dtype}]"
    if isinstance(ty, TupleType):
        fields = ", ".join(type_text(f) for f in ty.fields)
        return f"({fields},)" if len(ty.fields) == 1 else f"({fields})"
    if isinstance(ty, FuncType):
        args = ", ".join(type_text(a) for a in ty.arg_types)
        params = ", ".join(type_text(a) for a in ty.type_params)
        params = f"[{params}]" if params else ""
        return f"fn {params}({args}) -> {type_text(ty.ret_type)}"
    if isinstance(ty, TypeCall):
        if not ty.args:
            return type_text(ty.func)
        return f"{type_text(ty.func)}[{', '.join(type_text(a) for a in ty.args)}]"
    if isinstance(ty, RelayRefType):
        return f"ref({type_text(ty.value)})"
    if isinstance(ty, PrimType):
        return ty.dtype
    if isinstance(ty, IncompleteType) or ty is None:
        return "_"  # what the parser reads as an unknown type
    return str(ty)


def format_float(value, cast=float) -> str:
    """C++ ``os << value`` (``%g``, 6 digits) when that reads back exactly, else the shortest
    exact text. ``cast`` is the precision the value lives in (``np.float32`` for float32)."""
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = "%g" % value
    if cast(float(text)) == cast(value):
        return text
    if cast is float:
        return repr(value)
    return str(cast(value))


def quote(text: str) -> str:
    """A double-quoted string literal (TVM's ``Doc::StrLiteral`` escaping)."""
    out = []
    for ch in text:
        if ch == "\\" or ch == '"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 32:
            out.append("\\x%02x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_SCALAR_DTYPES = ("int16", "int32", "int64", "float16", "float32", "float64", "bool")


def is_simple_scalar(const: Constant) -> bool:
    """Rank-0 constants of the dtypes TVM prints inline (``support::IsSimpleScalar``)."""
    return const.data.ndim == 0 and const.data.dtype in _SCALAR_DTYPES


def scalar_text(const: Constant) -> str:
    """``1f``, ``1``, ``1i64``, ``1f16``, ``True``... (``support::NDArrayScalarToString``)."""
    value = const.data.numpy()[()]
    dtype = const.data.dtype
    if dtype == "bool":
        return "True" if value else "False"
    if dtype == "int32":
        return str(int(value))
    if dtype in ("int16", "int64"):
        return f"{int(value)}i{dtype[3:]}"
    suffix = {"float16": "f16", "float32": "f", "float64": "f64"}[dtype]
    cast = {"float16": np.float16, "float32": np.float32, "float64": float}[dtype]
    return format_float(value, cast) + suffix


def attr_value_text(value) -> str:
    """The right-hand side of ``key=value`` in call and function attributes."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value) + "f"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(attr_value_text(v) for v in value) + "]"
    if isinstance(value, Type):
        return type_text(value)
    if isinstance(value, GlobalVar):
        return "'" + value.name_hint + "'"
    return str(value)


def read_metadata(text: str) -> dict:
    """The ``#[metadata]`` JSON as ``{"relay.Constant": [Constant, ...]}``; raises
    ``ValueError`` (or ``KeyError``/``TypeError``) on anything else."""
    table = json.loads(text)
    if not isinstance(table, dict):
        raise ValueError("the metadata section must be a JSON object")
    if "root" in table and "nodes" in table:
        raise ValueError("TVM's node-graph JSON is not supported, only irlab's format")
    out = {}
    for key, entries in table.items():
        constants = []
        for entry in entries:
            dtype = to_numpy_dtype(entry["dtype"]).newbyteorder("<")
            raw = base64.b64decode(entry["data"], validate=True)
            array = np.frombuffer(raw, dtype=dtype).reshape(entry["shape"])
            constants.append(Constant(array.astype(dtype.newbyteorder("="))))
        out[key] = constants
    return out


def _constant_json(const: Constant) -> str:
    array = np.ascontiguousarray(const.data.numpy())
    data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    return json.dumps({"dtype": const.data.dtype, "shape": list(array.shape),
                       "data": base64.b64encode(data).decode("ascii")})


# ---------------------------------------------------------------------------------------------
# the printer
_ALWAYS_INLINE = (GlobalVar, Constant, Op, Var, Constructor)
_INFO_NODES = (Constant, Call, Var, Function, Tuple, TupleGetItem)


class _Printer:
    """One print call's state: TVM's ``RelayTextPrinter`` members of the same names."""

    def __init__(self, show_meta_data: bool):
        self.show_meta_data = show_meta_data
        self.doc_stack: list = []
        self.memo: dict = {}  # expr -> tuple doc (its text, or its %N once bound)
        self.var_memo: set = set()  # exprs already bound to a %N (or declared free vars)
        self.opt_info_memo: set = set()
        self.result_memo: dict = {}
        self.name_alloc: dict = {}
        self.temp_counter = 0
        self.meta: dict = {}  # type key -> [nodes]
        self.meta_repr: dict = {}
        self.parents: dict = {}  # expr -> number of uses (TVM's DependencyGraph)

    # -- dependency graph ---------------------------------------------------------------------
    def build_dependency_graph(self, root):
        """Count the uses of every node under ``root``, iteratively. Function params and let
        variables are binders, not uses; branches, bodies and let values hang off scope nodes
        (one use each), as in TVM's ``DependencyGraph``."""
        parents: dict = {}
        seen = {root}
        stack = [root]
        while stack:
            node = stack.pop()
            cls = type(node)
            if cls is Call or isinstance(node, Call):
                children = (node.op, *node.args)
            elif isinstance(node, Tuple):
                children = node.fields
            elif isinstance(node, TupleGetItem):
                children = (node.tuple_value,)
            elif isinstance(node, If):
                children = (node.cond, node.true_branch, node.false_branch)
            elif isinstance(node, Function):
                children = (node.body,)
            elif isinstance(node, Let):
                children = (node.value, node.body)
            elif isinstance(node, Match):
                children = (node.data, *(c.rhs for c in node.clauses))
            elif isinstance(node, (RefCreate, RefRead, RefWrite)):
                children = tuple(getattr(node, f) for f in ("ref", "value") if f in cls._fields)
            else:
                continue
            for child in children:
                parents[child] = parents.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        self.parents = parents

    def is_unique(self, expr) -> bool:
        return self.parents.get(expr, 0) <= 1

    # -- names and metadata -------------------------------------------------------------------
    def unique_name(self, prefix: str) -> str:
        name = prefix
        count = self.name_alloc.get(prefix)
        if count is not None:
            while True:
                count += 1
                candidate = f"{prefix}{count}"
                if candidate not in self.name_alloc:
                    name = candidate
                    break
            self.name_alloc[prefix] = count
        self.name_alloc[name] = 0
        return name

    def meta_node(self, node) -> str:
        text = self.meta_repr.get(node)
        if text is None:
            nodes = self.meta.setdefault("relay.Constant", [])
            text = f"meta[relay.Constant][{len(nodes)}]"
            nodes.append(node)
            self.meta_repr[node] = text
        return text

    def meta_section(self) -> str:
        lines = ["{"]
        keys = sorted(self.meta)
        for i, key in enumerate(keys):
            lines.append(f"  {json.dumps(key)}: [")
            entries = self.meta[key]
            for j, node in enumerate(entries):
                comma = "," if j + 1 < len(entries) else ""
                lines.append(f"    {_constant_json(node)}{comma}")
            lines.append("  ]" + ("," if i + 1 < len(keys) else ""))
        lines.append("}")
        return "\n".join(lines)

    def optional_info(self, expr) -> str:
        """`` /* ty=T span=... */`` once per node (TVM's ``PrintOptionalInfo``)."""
        if expr in self.opt_info_memo:
            return ""
        self.opt_info_memo.add(expr)
        if not isinstance(expr, _INFO_NODES):
            return ""
        ty = getattr(expr, "_checked_type", None)
        span = expr.span
        if ty is None and span is None:
            return ""
        text = " /*"
        if ty is not None:
            text += " ty=" + type_text(ty)
        if span is not None:
            source = getattr(span.source_name, "name", span.source_name)
            text += f" span={source}:{span.line}:{span.column}"
        return text + " */"

    # -- expressions --------------------------------------------------------------------------
    def print_expr(self, expr, meta=False, try_inline=False, optional_info=True) -> list:
        """TVM's ``PrintExpr``: the doc of ``expr``, binding it to a fresh ``%N`` when it is
        neither atomic nor inlinable here."""
        inline = isinstance(expr, _ALWAYS_INLINE) or (try_inline and self.is_unique(expr))
        if meta:
            printed = [(BEGIN, expr), self.meta_node(expr), (END, expr)]
        elif not inline and isinstance(expr, Let):
            printed = ["(", *indent(2, [NL, *self.visit_expr(expr)]), NL, ")"]
        else:
            printed = list(self.visit_expr(expr))
        if optional_info:
            info = self.optional_info(expr)
            if info:
                printed.append(info)
        if isinstance(expr, Var):
            if expr not in self.var_memo:
                self.var_memo.add(expr)
                declared = self.result_memo.get(expr)
                if declared is not None:  # first sight of a free variable
                    self.doc_stack[-1].extend(["free_var ", *declared, ";", NL])
            return list(self.memo[expr])
        if inline:
            self.memo[expr] = tuple(printed)
            return printed
        if expr in self.var_memo:
            return list(self.memo[expr])
        self.var_memo.add(expr)
        temp = f"%{self.temp_counter}"
        self.temp_counter += 1
        self.memo[expr] = (temp,)
        self.doc_stack[-1].extend([temp, " = ", *printed, ";", NL])
        return [temp]

    def visit_expr(self, expr):
        memo = self.memo
        if expr not in memo:
            self.expand_dataflow(expr)
        return memo[expr]

    def expand_dataflow(self, expr):
        """Visit the dataflow graph below ``expr`` in post-order with an explicit stack; a
        call's op comes first, then its arguments in order (TVM's ``ExpandDataflow``)."""
        memo = self.memo
        stack = [[expr, False]]
        while stack:
            top = stack[-1]
            node = top[0]
            if node in memo:
                stack.pop()
            elif top[1]:
                self.visit_leaf(node)
                stack.pop()
            else:
                top[1] = True
                if isinstance(node, Call):
                    children = (*reversed(node.args), node.op)
                elif isinstance(node, Tuple):
                    children = tuple(reversed(node.fields))
                elif isinstance(node, TupleGetItem):
                    children = (node.tuple_value,)
                else:
                    continue
                for child in children:
                    if child not in memo:
                        stack.append([child, False])

    def visit_leaf(self, expr):
        if expr in self.memo:
            return self.memo[expr]
        result = tuple(self.dispatch(expr))
        if expr not in self.memo:
            self.memo[expr] = result
        else:
            self.result_memo[expr] = result
        return result

    def dispatch(self, expr) -> list:
        """The document of ``expr`` from its ``visit_<kind>``; any other node prints as
        ``str(expr)``."""
        print_node = visit_method(type(self), type(expr))
        if print_node is None:
            return [(BEGIN, expr), str(expr), (END, expr)]
        return print_node(self, expr)

    # -- one node of each kind: a document spanning (BEGIN, node) ... (END, node) ---------------
    def visit_var(self, var) -> list:
        return self.alloc_var(var)

    def visit_constant(self, const) -> list:
        if is_simple_scalar(const):
            return [(BEGIN, const), scalar_text(const), (END, const)]
        return self.print_expr(const, meta=True, try_inline=False, optional_info=False)

    def visit_call(self, call) -> list:
        if isinstance(call.op, Constructor) and not call.args:
            return [(BEGIN, call), call.op.name_hint, (END, call)]  # ``Nil``
        # Arguments first, so their bindings come before the callee's (TVM's order).
        args = [self.print_expr(a) for a in call.args]
        args.extend([text] for text in self.call_attrs(call.attrs, call.op))
        return [(BEGIN, call), *self.print_expr(call.op), "(", *join(args), ")", (END, call)]

    def visit_tuple(self, tup) -> list:
        fields = [self.print_expr(f) for f in tup.fields]
        return [(BEGIN, tup), "(", *join(fields), *([","] if len(fields) == 1 else []), ")",
                (END, tup)]

    def visit_tuple_getitem(self, item) -> list:
        return [(BEGIN, item), *self.print_expr(item.tuple_value), f".{item.index}",
                (END, item)]

    def visit_if(self, node) -> list:
        return [(BEGIN, node), "if (", *self.print_expr(node.cond), ") ",
                *self.print_body(node.true_branch), " else ",
                *self.print_body(node.false_branch), (END, node)]

    def visit_function(self, fn) -> list:
        return [(BEGIN, fn), *self.print_func(["fn "], fn), (END, fn)]

    def visit_global_var(self, gv) -> list:
        return [(BEGIN, gv), "@" + gv.name_hint, (END, gv)]

    def visit_op(self, op) -> list:
        return [(BEGIN, op), op.name, (END, op)]

    def visit_constructor(self, ctor) -> list:
        return [(BEGIN, ctor), ctor.name_hint, (END, ctor)]

    def visit_ref_create(self, node) -> list:
        return [(BEGIN, node), "ref(", *self.print_expr(node.value), ")", (END, node)]

    def visit_ref_read(self, node) -> list:
        return [(BEGIN, node), "ref_read(", *self.print_expr(node.ref), ")", (END, node)]

    def visit_ref_write(self, node) -> list:
        return [(BEGIN, node), "ref_write(", *self.print_expr(node.ref), ", ",
                *self.print_expr(node.value), ")", (END, node)]

    def visit_match(self, node) -> list:
        """``match (%x) { Cons(%h, _) => ..., Nil => ..., }`` (``match?`` when incomplete)."""
        keyword = "match" if node.complete else "match?"
        doc = [(BEGIN, node), keyword, " (", *self.print_expr(node.data), ") {"]
        clauses = []
        for clause in node.clauses:
            lhs = self.print_pattern(clause.lhs)
            clauses.append([NL, *lhs, " => ", *self.print_body(clause.rhs), ","])
        doc.extend(indent(2, [part for c in clauses for part in c]))
        doc.extend([NL, "}", (END, node)])
        return doc

    def print_pattern(self, pattern) -> list:
        if isinstance(pattern, PatternVar):
            return self.alloc_var(pattern.var)
        if isinstance(pattern, PatternTuple):
            return ["(", *join([self.print_pattern(p) for p in pattern.patterns]), ")"]
        if isinstance(pattern, PatternConstructor):
            if not pattern.patterns:
                return [pattern.constructor.name_hint]
            return [pattern.constructor.name_hint, "(",
                    *join([self.print_pattern(p) for p in pattern.patterns]), ")"]
        return ["_"]

    def visit_let(self, let) -> list:
        """A chain of lets, iteratively: each binding's doc is pushed on the doc stack so that
        the bindings its value needs land right after it."""
        base = len(self.doc_stack)
        count = 0
        node = let
        while isinstance(node, Let):
            doc = ["let ", *self.alloc_var(node.var), " = "]
            doc.extend(self.print_expr(node.value, False, True))
            doc.extend([";", NL])
            self.doc_stack.append(doc)
            node = node.body
            count += 1
        body = self.print_scope(node)
        out: list = []
        for doc in self.doc_stack[base:base + count]:
            out.extend(doc)
        out.extend(body)
        del self.doc_stack[base:base + count]
        return [(BEGIN, let), *out, (END, let)]

    def alloc_var(self, var) -> list:
        if var in self.memo:  # bound twice: still print, but say so (as TVM)
            return [*self.memo[var], "-malformed-ir"]
        name = var.name_hint
        if not name or not (name[0].isascii() and name[0].isalpha()):
            name = "v" + name
        name = self.unique_name("%" + name)
        self.memo[var] = (name,)
        doc = [(BEGIN, var), name]
        if var.type_annotation is not None:
            doc.append(": " + type_text(var.type_annotation))
        doc.append((END, var))
        info = self.optional_info(var)
        if info:
            doc.append(info)
        return doc

    def call_attrs(self, attrs, op) -> list:
        if attrs is None:
            return []
        if isinstance(attrs, DictAttrs):
            return [f"{k}={attr_value_text(v)}" for k, v in attrs.items]
        if isinstance(attrs, Attrs):
            docs = [f"{k}={attr_value_text(v)}" for k, v in attrs.non_default_items()]
            if not isinstance(op, Op):
                docs.append(f"attrs_type_key={quote(attrs._type_key)}")
            return docs
        return [str(attrs)]

    # -- scopes and functions -----------------------------------------------------------------
    def print_scope(self, node) -> list:
        self.doc_stack.append([])
        doc = self.print_expr(node, False, True)
        return self.doc_stack.pop() + doc

    def print_body(self, node) -> list:
        return ["{", *indent(2, [NL, *self.print_scope(node)]), NL, "}"]

    def print_func(self, prefix, fn) -> list:
        params = [self.alloc_var(p) for p in fn.params]
        if fn.attrs is not None:
            params.extend([f"{k}={attr_value_text(v)}"] for k, v in fn.attrs.items)
        type_params = ", ".join(type_text(t) for t in fn.type_params)
        doc = [*prefix, f"[{type_params}]" if type_params else "", "(", *join(params), ") "]
        if fn.ret_type is not None:
            doc.append("-> " + type_text(fn.ret_type) + " ")
        doc.extend(self.print_body(fn.body))
        return doc

    def print_type_data(self, data) -> list:
        """``type List[A] {`` one ``Cons(A, List[A]),`` line per constructor ``}``."""
        params = ", ".join(type_text(t) for t in data.type_vars)
        head = data.header.name_hint + (f"[{params}]" if params else "")
        lines = []
        for ctor in data.constructors:
            inputs = ", ".join(type_text(t) for t in ctor.inputs)
            lines.extend([NL, ctor.name_hint + (f"({inputs})" if inputs else "") + ","])
        return ["type ", head, " {", *indent(2, lines), NL, "}", NL]

    def print_module(self, mod) -> list:
        doc: list = []
        for gtv in mod.get_global_type_vars():
            doc.extend(self.print_type_data(mod.type_definitions[gtv]))
            doc.append(NL)
        functions = mod.functions
        for i, gv in enumerate(sorted(functions, key=lambda g: g.name_hint)):
            func = functions[gv]
            if i:
                doc.append(NL)
            if isinstance(func, Function):
                self.build_dependency_graph(func)
                doc.extend(self.print_func(["def @" + gv.name_hint], func))
            else:  # a TIR PrimFunc: its own printer
                doc.append(f"@{gv.name_hint} = {func}")
            doc.append(NL)
        return doc

    def print_final(self, node) -> list:
        if isinstance(node, IRModule):
            return self.print_module(node)
        if isinstance(node, RelayExpr):
            self.build_dependency_graph(node)
            return self.print_scope(node)
        if isinstance(node, Type):
            return [type_text(node)]
        return [str(node)]


def _print(node, show_meta_data: bool, show_warning: bool, header: bool):
    printer = _Printer(show_meta_data)
    doc = ['#[version = "' + VERSION + '"]', NL] if header else []
    doc.extend(printer.print_final(node))
    if printer.meta:
        doc.append(NL)
        if show_meta_data:
            doc.extend(["#[metadata]", NL, printer.meta_section()])
        elif show_warning:
            doc.extend(_OMITTED)
    return doc


def pretty_print(node) -> str:
    """``print(mod)``/``str(expr)``: the program without version header or metadata."""
    return render(_print(node, False, False, False))[0]


def astext(node, show_meta_data=True) -> str:
    """``#[version = "0.0.5"]``, the program, then the metadata section (or TVM's comment
    saying it was omitted) when non-scalar constants were printed."""
    return render(_print(node, bool(show_meta_data), True, True))[0]


def pretty_print_located(node):
    """``(text, locations)``: ``pretty_print(node)`` and, for every printed expression node,
    ``(line, start_col, end_col)`` of its text (0-based lines and columns, end exclusive;
    the first occurrence, i.e. the definition, for nodes printed several times)."""
    return render(_print(node, False, False, False), track=True)


register_func("relay.ir.pretty_print", pretty_print)
register_func("relay.ir.astext", astext)

__all__ = ["pretty_print", "astext", "pretty_print_located", "type_text", "format_float",
           "read_metadata", "VERSION"]
