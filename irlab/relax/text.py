"""A plain TVMScript-like text of Relax IR for ``repr`` (the full printer/parser, which
round-trips, is ``irlab.script``'s; this one only has to be readable)."""

from __future__ import annotations

from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.runtime.registry import register_func
from irlab.relax import expr as rx
from irlab.relax.struct_info import StructInfo, struct_info_text
from irlab.tir import expr as tir_expr


class _Namer:
    """Unique printed names per variable (``lv``, ``lv1``...)."""

    def __init__(self):
        self.names: dict = {}
        self.used: set = set()

    def __call__(self, var) -> str:
        name = self.names.get(var)
        if name is None:
            base = var.name_hint or "v"
            name, k = base, 0
            while name in self.used:
                k += 1
                name = f"{base}{k}"
            self.used.add(name)
            self.names[var] = name
        return name


class _Printer:
    def __init__(self):
        self.name = _Namer()

    def expr(self, e) -> str:
        if isinstance(e, rx.Var):
            return self.name(e)
        if isinstance(e, GlobalVar):
            return f"cls.{e.name_hint}"
        if isinstance(e, Op):
            return e.name.replace("relax.", "R.", 1)
        if isinstance(e, rx.Call):
            return self.call(e)
        if isinstance(e, rx.Tuple):
            inner = ", ".join(self.expr(f) for f in e.fields)
            return f"({inner}{',' if len(e.fields) == 1 else ''})"
        if isinstance(e, rx.TupleGetItem):
            return f"{self.expr(e.tuple_value)}[{e.index}]"
        if isinstance(e, rx.ShapeExpr):
            return "R.shape([" + ", ".join(_prim(v) for v in e.values) + "])"
        if isinstance(e, rx.PrimValue):
            return f"R.prim_value({_prim(e.value)})"
        if isinstance(e, rx.StringImm):
            return f"R.str({e.value!r})"
        if isinstance(e, rx.DataTypeImm):
            return f"R.dtype({e.value!r})"
        if isinstance(e, rx.Constant):
            return f"R.const({e.data.numpy().tolist()!r}, {e.data.dtype!r})" \
                if e.data.numpy().size <= 4 else f"metadata[constant {e.data.shape}]"
        if isinstance(e, rx.ExternFunc):
            return f"R.ExternFunc({e.global_symbol!r})"
        if isinstance(e, (rx.SeqExpr, rx.If, rx.Function)):
            return "\n".join(self.lines(e, 0))
        return repr(e)

    def call(self, e) -> str:
        args = [self.expr(a) for a in e.args]
        if e.attrs is not None:
            args += [f"{k}={v!r}" for k, v in e.attrs.field_values().items()] \
                if hasattr(e.attrs, "field_values") else []
        if e.sinfo_args:
            sinfo = [_sinfo(s) for s in e.sinfo_args]
            key = "out_sinfo" if isinstance(e.op, Op) and "call_tir" in e.op.name or \
                isinstance(e.op, Op) and "dps" in e.op.name else "sinfo_args"
            args.append(f"{key}={sinfo[0] if len(sinfo) == 1 else '[' + ', '.join(sinfo) + ']'}")
        return f"{self.expr(e.op)}({', '.join(args)})"

    def binding(self, b, indent) -> list:
        pad = " " * indent
        if isinstance(b, rx.MatchCast):
            return [f"{pad}{self.name(b.var)} = R.match_cast({self.expr(b.value)}, "
                    f"{_sinfo(b.struct_info)})"]
        value = b.value
        if isinstance(value, (rx.If, rx.Function, rx.SeqExpr)):
            body = self.lines(value, indent)
            return [f"{pad}{self.name(b.var)} = ..."] + body
        return [f"{pad}{self.name(b.var)}: {_sinfo(b.var.struct_info_)} = {self.expr(value)}"]

    def lines(self, e, indent, name=None) -> list:
        pad = " " * indent
        if isinstance(e, rx.Function):
            params = ", ".join(f"{self.name(p)}: {_sinfo(p.struct_info_)}" for p in e.params)
            head = f"{pad}@R.function{'' if e.is_pure else '(pure=False)'}"
            name = name or (e.attrs.get("global_symbol") if e.attrs is not None else None)
            out = [head, f"{pad}def {name or 'func'}({params}) -> "
                         f"{_sinfo(e.ret_struct_info)}:"]
            return out + self.lines(e.body, indent + 4)
        if isinstance(e, rx.If):
            out = [f"{pad}if {self.expr(e.cond)}:"] + self.lines(e.true_branch, indent + 4)
            return out + [f"{pad}else:"] + self.lines(e.false_branch, indent + 4)
        if isinstance(e, rx.SeqExpr):
            out = []
            for block in e.blocks:
                out += self.block(block, indent)
            return out + [f"{pad}return {self.expr(e.body)}"]
        return [pad + self.expr(e)]

    def block(self, block, indent) -> list:
        if not isinstance(block, rx.DataflowBlock):
            return [line for b in block.bindings for line in self.binding(b, indent)]
        out = [" " * indent + "with R.dataflow():"]
        for b in block.bindings:
            out += self.binding(b, indent + 4)
        outputs = [self.name(b.var) for b in block.bindings
                   if not isinstance(b.var, rx.DataflowVar)]
        return out + [" " * (indent + 4) + f"R.output({', '.join(outputs)})"]


def _prim(value) -> str:
    return str(value.value) if isinstance(value, tir_expr.IntImm) else str(value)


def _sinfo(sinfo) -> str:
    return "?" if sinfo is None else struct_info_text(sinfo) \
        if isinstance(sinfo, StructInfo) else repr(sinfo)


def relax_text(node) -> str:
    """Readable text of a Relax expression, block or function."""
    printer = _Printer()
    if isinstance(node, rx.BindingBlock):
        return "\n".join(printer.block(node, 0))
    return printer.expr(node)


@register_func("relax.module_text")
def module_text(mod) -> str:
    """Readable text of a module holding Relax functions (and PrimFuncs)."""
    out = ["# from irlab.script import ir as I, relax as R, tir as T", "@I.ir_module",
           "class Module:"]
    for gv in mod.get_global_vars():
        func = mod[gv]
        if isinstance(func, rx.Function):
            out += _Printer().lines(func, 4, gv.name_hint)
        else:
            text = func.script() if hasattr(func, "script") else repr(func)
            out += ["    " + line for line in text.splitlines()]
        out.append("")
    return "\n".join(out)
