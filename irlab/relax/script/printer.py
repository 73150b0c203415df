"""TVMScript printer for Relax functions, in TVM v0.16's layout (src/script/printer/relax/*).

``print_function(f, name, class_name)`` gives the lines of one ``@R.function``; symbolic
variables print as strings in the signature (``R.Tensor(("n", 4), dtype="float32")``) and are
declared first in the body (``n = T.int64()``), a module's functions are reached through
``cls = Module``. ``irlab.relax.script.parser`` reads the text back into an equal function.
"""

from __future__ import annotations

import json
import keyword
import math
import re

import numpy as np

from irlab import relax as _relax
from irlab.relax.analysis import free_vars
from irlab.relax.expr_dispatch import method_of
from irlab.relax.expr_functor import ExprVisitor
from irlab.ir.attrs import Attrs, DictAttrs
from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.ir.structural import structural_equal
from irlab.tir import expr as E
from irlab.script import dialect

HEADER_R = "# from tvm.script import relax as R"
HEADER_T = "# from tvm.script import tir as T"

_BIN = {E.Add: ("+", 6), E.Sub: ("-", 6), E.Mul: ("*", 7), E.FloorDiv: ("//", 7),
        E.FloorMod: ("%", 7)}
_DPS_OPS = ("relax.call_tir", "relax.call_dps_packed")
INLINE_CONSTANT = 16  # elements of the biggest constant printed in full by default


def print_function(func, name=None, class_name=None, options=None):
    """(lines, header lines) of ``func`` as an ``@R.function`` (in class ``class_name``);
    any other Relax node (an expression, a binding, a block, a struct info) prints as TVM
    prints it alone: its free variables declared first, no header."""
    if isinstance(func, _relax.ExternFunc) and name is not None:
        return [f"{name} = R.ExternFunc({json.dumps(func.global_symbol)})"], {HEADER_R}
    if not isinstance(func, _relax.Function):
        return print_node(func, options), set()
    printer = FunctionPrinter(class_name, options)
    lines = printer.function(func, name or _default_name(func))
    headers = {HEADER_R} | ({HEADER_T} if printer.uses_tir else set())
    return lines, headers


def print_node(node, options=None) -> list:
    """The lines of a Relax node other than a function."""
    printer = FunctionPrinter(None, options)
    printer.used_vars = set()
    if isinstance(node, _relax.StructInfo):
        return printer.head + [printer.sinfo(node)]  # sinfo() declares the dims first
    if isinstance(node, _relax.Binding):
        scope = _relax.SeqExpr([_relax.BindingBlock([node])], node.var)
    elif isinstance(node, _relax.BindingBlock):
        scope = _relax.SeqExpr([node], _relax.Tuple([]))
    else:
        scope = node
    for var in free_vars(scope):
        sinfo = printer.sinfo(var.struct_info)
        printer.head.append(f"{printer.define(var, var.name_hint)}: {sinfo}")
    if isinstance(node, _relax.Binding):
        body = printer.binding(node)
    elif isinstance(node, _relax.BindingBlock):
        body = printer.block(node)
    elif isinstance(node, _relax.SeqExpr):
        body = [ln for block in node.blocks for ln in printer.block(block)]
        body.append(printer.expr(node.body))
    else:
        body = [printer.expr(node)]
    return printer.head + body


def _default_name(func) -> str:
    symbol = func.attrs.as_dict().get("global_symbol") if func.attrs is not None else None
    return symbol if isinstance(symbol, str) and symbol.isidentifier() else "main"


def _identifier(name: str) -> str:
    name = re.sub(r"\W", "_", str(name)) or "v"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = "v_" + name
    return name


class FunctionPrinter:
    """Prints one Relax function; holds its variable naming."""

    def __init__(self, class_name=None, options=None):
        self.class_name = class_name
        self.options = options or dialect.PrintOptions()
        self.names: dict[int, str] = {}
        self.suffix: dict[str, int] = {}
        # names the text itself uses: a variable called so is renamed (R_1, cls_1...)
        self.used: set[str] = {"R", "T", "I", "metadata"} | (
            {class_name, "cls"} if class_name else set())
        self.head: list[str] = []  # declarations printed before the body statements
        self.signature_vars: set | None = None  # ids of symbolic vars the signature defines
        self.cls_alias = False
        self.uses_tir = False
        self.nested = False  # a function bound inside another (printed as a local def)

    # -- naming -----------------------------------------------------------------------------
    def define(self, obj, hint) -> str:
        base = _identifier(hint or "v")
        name, k = base, self.suffix.get(base, 0)
        while name in self.used:  # lv, lv_1, lv_2...: the next free suffix, kept per base
            k += 1
            name = f"{base}_{k}"
        self.suffix[base] = k
        self.used.add(name)
        self.names[id(obj)] = name
        return name

    def symbolic(self, var) -> str:
        """The name of a symbolic dim, declared (``n = T.int64()``) on first use."""
        name = self.names.get(id(var))
        if name is None:
            name = self.define(var, var.name_hint)
            self.head.append(f"{name} = T.{var.dtype}()")
            self.uses_tir = True
            if self.signature_vars is not None:
                self.signature_vars.add(id(var))
        return name

    # -- function ---------------------------------------------------------------------------
    def function(self, func, name) -> list:
        attrs = func.attrs.as_dict() if func.attrs is not None else {}
        self.used_vars = _UsedVars.of(func)
        self.signature_vars = set()
        ret = func.ret_struct_info
        ret_text = f" -> {self.sinfo(ret)}" if ret is not None else ""
        params = [self.define(p, p.name_hint) + self.annotation(p.struct_info_)
                  for p in func.params]
        self.signature_vars = None
        if attrs.get("global_symbol") == name:
            del attrs["global_symbol"]
        if attrs:
            self.head.append(f"R.func_attr({self.value(attrs)})")
        options = []
        if not func.is_pure:
            options.append("pure=False")
        if not self.nested and "global_symbol" not in (
                func.attrs.as_dict() if func.attrs is not None else {}):
            options.append("private=True")
        decorator = "@R.function" + (f"({', '.join(options)})" if options else "")
        body = self.seq_body(func.body)
        return [decorator, f"def {name}({', '.join(params)}){ret_text}:"] + \
            _indent(self.head + body)

    def seq_body(self, seq) -> list:
        """The statements of a function body: its blocks, then ``return``."""
        lines = []
        if not isinstance(seq, _relax.SeqExpr):
            return [f"return {self.expr(seq)}"]
        for block in seq.blocks:
            lines.extend(self.block(block))
        lines.append(f"return {self.expr(seq.body)}")
        return lines

    def block(self, block) -> list:
        if not isinstance(block, _relax.DataflowBlock):
            return [line for b in block.bindings for line in self.binding(b)]
        lines = ["with R.dataflow():"]
        for b in block.bindings:
            lines.extend(_indent(self.binding(b)))
        outputs = [self.names[id(b.var)] for b in block.bindings
                   if not isinstance(b.var, _relax.DataflowVar)]
        lines.append(f"    R.output({', '.join(outputs)})")
        return lines

    def binding(self, b) -> list:
        value = b.value
        if isinstance(b, _relax.MatchCast):
            rhs = f"R.match_cast({self.expr(value)}, {self.sinfo(b.struct_info)})"
            ann = self.sinfo(b.var.struct_info)
            return [f"{self.define(b.var, b.var.name_hint)}: {ann} = {rhs}"]
        if isinstance(value, _relax.If):
            return self.if_binding(b)
        if isinstance(value, _relax.Function):
            return self.local_function(b)
        rhs = self.expr(value)
        sinfo = b.var.struct_info_
        if _is_void(sinfo) and _is_void(value.struct_info_) and id(b.var) not in self.used_vars:
            return [rhs]  # a statement: its value is nothing and nobody reads it
        ann = "" if self.hide_annotation(value, sinfo) else self.annotation(sinfo)
        return [f"{self.define(b.var, b.var.name_hint)}{ann} = {rhs}"]

    def local_function(self, b) -> list:
        """A function bound inside another prints as a local ``@R.function`` def (TVM's
        layout: its own header comment, blank lines around it)."""
        inner = FunctionPrinter(self.class_name, self.options)
        inner.names, inner.used, inner.suffix = self.names, self.used, self.suffix
        inner.nested = True
        lines = inner.function(b.value, self.define(b.var, b.var.name_hint))
        self.uses_tir |= inner.uses_tir
        return [HEADER_R, ""] + lines + [""]

    def if_binding(self, b) -> list:
        """``if c:`` / ``else:``, each branch's statements ending with ``v: sinfo = value``."""
        lines = [f"if {self.expr(b.value.cond)}:"]
        branches = []
        for seq in (b.value.true_branch, b.value.false_branch):
            body = [line for block in seq.blocks for line in self.block(block)]
            branches.append((body, self.expr(seq.body)))
        name = self.define(b.var, b.var.name_hint)
        last = f"{name}: {self.sinfo(b.var.struct_info)} = "
        for k, (body, value) in enumerate(branches):
            if k:
                lines.append("else:")
            lines.extend(_indent(body + [last + value]))
        return lines

    def annotation(self, sinfo) -> str:
        """``: R.Tensor(...)``, or nothing for a variable without struct info (not
        normalized; the parser then asks for one)."""
        return "" if sinfo is None else f": {self.sinfo(sinfo)}"

    @staticmethod
    def hide_annotation(value, sinfo) -> bool:
        """As TVM: a ``call_tir`` / ``call_dps_packed`` result shows no annotation when its
        ``out_sinfo`` already says it."""
        if not (isinstance(value, _relax.Call) and isinstance(value.op, Op)
                and value.op.name in _DPS_OPS):
            return False
        deduced = value.struct_info_
        return deduced is not None and structural_equal(deduced, sinfo)

    # -- struct info ------------------------------------------------------------------------
    def sinfo(self, s) -> str:
        if isinstance(s, _relax.ObjectStructInfo):
            return "R.Object"
        if isinstance(s, _relax.PrimStructInfo):
            if s.value is not None:
                return f"R.Prim(value={self.dim(s.value)})"
            return f"R.Prim({json.dumps(s.dtype)})"
        if isinstance(s, _relax.ShapeStructInfo):
            if s.values is None:
                return f"R.Shape(ndim={s.ndim})"
            return f"R.Shape([{', '.join(self.dim(d) for d in s.values)}])"
        if isinstance(s, _relax.TensorStructInfo):
            return self.tensor_sinfo(s)
        if isinstance(s, _relax.TupleStructInfo):
            if not s.fields:
                return "R.Tuple"
            return f"R.Tuple({', '.join(self.sinfo(f) for f in s.fields)})"
        if isinstance(s, _relax.FuncStructInfo):
            return self.func_sinfo(s)
        raise TypeError(f"the Relax printer cannot print struct info {type(s).__name__}")

    def tensor_sinfo(self, s) -> str:
        args = []
        if isinstance(s.shape, _relax.ShapeExpr):
            dims = [self.dim(d) for d in s.shape.values]
            args.append(f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})")
        elif s.shape is not None:
            args.append(self.expr(s.shape))
        if not s.is_unknown_dtype:
            args.append(f"dtype={json.dumps(s.dtype)}")
        if s.shape is None and s.ndim != -1:
            args.append(f"ndim={s.ndim}")
        return f"R.Tensor({', '.join(args)})" if args else "R.Tensor"

    def func_sinfo(self, s) -> str:
        ret = self.sinfo(s.ret)
        if s.params is None:
            keys = [] if isinstance(s.ret, _relax.ObjectStructInfo) else [f"ret={ret}"]
            keys += ["purity=True"] if s.purity else []
            return f"R.Callable({', '.join(keys)})" if keys else "R.Callable"
        params = ", ".join(self.sinfo(p) for p in s.params)
        params = f"({params},)" if len(s.params) == 1 else f"({params})"
        return f"R.Callable({params}, {ret}, {s.purity})"

    # -- symbolic dims (TIR expressions) ----------------------------------------------------
    def dim(self, e) -> str:
        """A shape dimension; in the signature, one over the symbolic variables it defines
        prints as a string (``"n * 4"``), as TVM does."""
        text = self.prim(e)
        if self.signature_vars is not None and _mentions(e, self.signature_vars):
            return json.dumps(text)
        return text

    def prim(self, e, prec=0) -> str:
        t = type(e)
        if t in _BIN:
            op, p = _BIN[t]
            text = f"{self.prim(e.a, p)} {op} {self.prim(e.b, p + 1)}"
            return f"({text})" if p < prec else text
        if isinstance(e, E.Var):
            return self.symbolic(e)
        if isinstance(e, E.IntImm):
            if e.dtype == "int64":
                return str(e.value) if e.value >= 0 or prec == 0 else f"({e.value})"
            self.uses_tir = True
            return f"T.{e.dtype}({bool(e.value) if e.dtype == 'bool' else e.value})"
        if isinstance(e, E.FloatImm):
            self.uses_tir = True
            return f"T.{e.dtype}({_float_text(e.value)})"
        if isinstance(e, (E.Min, E.Max)):
            self.uses_tir = True
            return f"T.{t.__name__.lower()}({self.prim(e.a)}, {self.prim(e.b)})"
        raise TypeError(f"the Relax printer cannot print the TIR expression {t.__name__}")

    # -- expressions ------------------------------------------------------------------------
    def expr(self, e) -> str:
        """``e`` as TVMScript, by its ``visit_<kind>_`` method (``relax.expr_dispatch``)."""
        return method_of(type(self), e, "print")(self, e)

    def visit_var_(self, e) -> str:
        return self.names.get(id(e)) or _identifier(e.name_hint)

    visit_dataflow_var_ = visit_var_

    def visit_tuple_(self, e) -> str:
        fields = [self.expr(f) for f in e.fields]
        if not fields:
            return "R.tuple()"
        return f"({fields[0]},)" if len(fields) == 1 else f"({', '.join(fields)})"

    def visit_tuple_getitem_(self, e) -> str:
        return f"{self.expr(e.tuple_value)}[{e.index}]"

    def visit_shape_expr_(self, e) -> str:
        return f"R.shape([{', '.join(self.dim(d) for d in e.values)}])"

    def visit_prim_value_(self, e) -> str:
        return f"R.prim_value({self.prim(e.value)})"

    def visit_string_imm_(self, e) -> str:
        return f"R.str({json.dumps(e.value)})"

    def visit_data_type_imm_(self, e) -> str:
        return f"R.dtype({json.dumps(e.value)})"

    def visit_extern_func_(self, e) -> str:
        return f"R.ExternFunc({json.dumps(e.global_symbol)})"

    def visit_global_var_(self, gv) -> str:
        if self.class_name is None:
            return _identifier(gv.name_hint)
        if not self.cls_alias:
            self.cls_alias = True
            self.used.add("cls")
            self.head.append(f"cls = {self.class_name}")
        return f"cls.{gv.name_hint}"

    def callee(self, e) -> str:
        """A called function: an ExternFunc prints as its name string."""
        if isinstance(e, _relax.ExternFunc):
            return json.dumps(e.global_symbol)
        return self.expr(e)

    def visit_call_(self, e) -> str:
        op = e.op
        if isinstance(op, Op) and op.name in _DPS_OPS:
            return self.dps_call(e)
        args, kwargs = [], []
        if isinstance(op, _relax.ExternFunc):
            head, args = "R.call_packed", [json.dumps(op.global_symbol)]
        elif isinstance(op, Op):
            head = "R." + (op.name[6:] if op.name.startswith("relax.") else op.name)
        else:
            head = self.expr(op)
        args += [self.callee(a) if k == 0 else self.expr(a) for k, a in enumerate(e.args)]
        kwargs += [f"{k}={self.value(v)}" for k, v in _attr_items(e.attrs)]
        if e.sinfo_args:
            sinfos = [self.sinfo(s) for s in e.sinfo_args]
            text = f"({sinfos[0]},)" if len(sinfos) == 1 else f"({', '.join(sinfos)})"
            kwargs.append(f"sinfo_args={text}")
        return f"{head}({', '.join(args + kwargs)})"

    def dps_call(self, e) -> str:
        """``R.call_tir(cls.f, (x,), out_sinfo=..., tir_vars=...)`` / ``R.call_dps_packed``."""
        out = e.sinfo_args[0]
        if isinstance(out, _relax.TupleStructInfo):
            out_text = f"[{', '.join(self.sinfo(f) for f in out.fields)}]"
        else:
            out_text = self.sinfo(out)
        parts = [self.callee(e.args[0]), self.expr(e.args[1]), f"out_sinfo={out_text}"]
        if len(e.args) > 2:
            parts.append(f"tir_vars={self.expr(e.args[2])}")
        return f"R.{e.op.name[6:]}({', '.join(parts)})"

    def visit_constant_(self, e) -> str:
        """``R.const(value, dtype)``; a constant bigger than ``INLINE_CONSTANT`` elements is a
        ``metadata`` reference unless ``show_meta`` (as TVM, which shows scalars only)."""
        array = e.data.numpy()
        if array.size > INLINE_CONSTANT and not self.options.show_meta:
            return self.options.reference("relax.expr.Constant", e)
        dtype = json.dumps(str(array.dtype))
        return f"R.const({self.value(array.tolist())}, {dtype})"

    def value(self, v) -> str:
        """A Python-level value: an attribute, a ``func_attr`` entry, constant data."""
        if isinstance(v, bool) or v is None:
            return repr(v)
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        if isinstance(v, (float, np.floating)):
            return _float_text(float(v))
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, (list, tuple)):
            return f"[{', '.join(self.value(x) for x in v)}]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{json.dumps(str(k))}: {self.value(x)}"
                                   for k, x in v.items()) + "}"
        if isinstance(v, E.PrimExpr):
            return self.prim(v)
        if isinstance(v, _relax.StructInfo):
            return self.sinfo(v)
        if isinstance(v, (_relax.Expr, GlobalVar)):
            return self.expr(v)
        raise TypeError(f"the Relax printer cannot print the value {v!r}")


class _UsedVars(ExprVisitor):
    """The ids of the Relax variables an expression reads."""

    def __init__(self):
        super().__init__()
        self.ids: set = set()

    @classmethod
    def of(cls, expr) -> set:
        visitor = cls()
        visitor.visit_expr(expr)
        return visitor.ids

    def visit_var_(self, var):
        self.ids.add(id(var))


def _attr_items(attrs) -> list:
    if attrs is None:
        return []
    if isinstance(attrs, DictAttrs):
        return sorted(attrs.as_dict().items())
    if isinstance(attrs, Attrs):
        return [(k, v) for k, v in attrs.field_values().items() if k != "span"]
    raise TypeError(f"the Relax printer cannot print attrs {type(attrs).__name__}")


def _indent(lines) -> list:
    return ["    " + line if line else "" for line in lines]


def _is_void(sinfo) -> bool:
    return isinstance(sinfo, _relax.TupleStructInfo) and not sinfo.fields


def _mentions(e, var_ids) -> bool:
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, E.Var) and id(node) in var_ids:
            return True
        stack.extend(c for c in node.children() if isinstance(c, E.PrimExpr))
    return False


def _float_text(value: float) -> str:
    if math.isinf(value) or math.isnan(value):
        return f'float("{value}")'
    return repr(float(value))
