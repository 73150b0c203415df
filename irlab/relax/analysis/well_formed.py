"""The Relax well-formedness checker: ``well_formed(mod)`` (a bool, as TVM's) and
``verify_well_formed(mod)`` (raises a ``DiagnosticError`` naming the function, the binding and
each problem).

Checked: every variable is defined once and before use; a ``DataflowVar`` is only used in the
dataflow block defining it; symbolic dims are defined (by a parameter's struct info or a
``match_cast``) before use; a dataflow block and a pure function make no impure call; struct
info is present and call arguments are leaves (the IR is normalized); called ``GlobalVar``s
exist in the module.
"""

from __future__ import annotations

from irlab.errors import DiagnosticError
from irlab.ir.expr import GlobalVar
from irlab.ir.module import IRModule
from irlab.ir.op import Op
from irlab.relax import expr as rx
from irlab.relax.expr_functor import ExprVisitor
from irlab.relax.normalizer import is_leaf
from irlab.relax.op.registry import is_pure_op
from irlab.relax.struct_info import FuncStructInfo, TupleStructInfo
from irlab.tir.function import PrimFunc
from irlab.relax.text import relax_text

__all__ = ["well_formed", "verify_well_formed"]


class _Checker(ExprVisitor):
    def __init__(self, mod):
        self.mod = mod
        self.errors: list[str] = []
        self.func_name = "?"
        self.defined: set = set()  # Vars defined so far
        self.symbols: set = set()  # symbolic tir.Vars defined so far
        self.dataflow_vars: set | None = None  # DataflowVars of the open dataflow block
        self.binding = None
        self.func_pure = True

    def error(self, message):
        where = f"in function {self.func_name}"
        if self.binding is not None:
            where += f", at `{_line(self.binding)}`"
        self.errors.append(f"{where}: {message}")

    # -- functions --------------------------------------------------------------------------
    def check_function(self, name, func):
        self.func_name = name
        self.func_pure = func.is_pure and not _force_pure(func)
        self.defined, self.symbols = set(), set()
        self.visit_function_(func)

    def visit_function_(self, func):
        saved = (set(self.defined), set(self.symbols), self.func_pure)
        self.func_pure = func.is_pure and not _force_pure(func)
        if func.body.__class__ is not rx.SeqExpr:
            self.error("a function body must be a SeqExpr (normalize the function)")
        for param in func.params:
            self.define_symbols(param.struct_info_, defining=True)
            self.visit_var_def(param)
        params_symbols = set(self.symbols)
        self.visit_expr(func.body)
        undefined = [v.name_hint for v in rx.symbolic_vars(func.ret_struct_info)
                     if v not in params_symbols]
        if undefined:
            self.error(f"the return struct info uses symbolic variables not defined by the "
                       f"parameters: {', '.join(undefined)}")
        self.defined, self.symbols, self.func_pure = saved

    # -- definitions ------------------------------------------------------------------------
    def visit_var_def_(self, var):
        if var in self.defined:
            self.error(f"variable {var.name_hint!r} is defined twice")
        self.defined.add(var)
        if var.struct_info_ is None:
            self.error(f"variable {var.name_hint!r} has no struct info")

    def visit_dataflow_var_def_(self, var):
        if self.dataflow_vars is None:
            self.error(f"DataflowVar {var.name_hint!r} is defined outside a dataflow block")
        else:
            self.dataflow_vars.add(var)
        self.visit_var_def_(var)

    def define_symbols(self, sinfo, defining):
        for sym in rx.symbolic_vars(sinfo):
            if defining:
                self.symbols.add(sym)
            elif sym not in self.symbols:
                self.error(f"symbolic variable {sym.name_hint} is used but not defined (define "
                           f"it in a parameter's struct info or with R.match_cast)")

    # -- uses -------------------------------------------------------------------------------
    def visit_var_(self, var):
        if var not in self.defined:
            self.error(f"variable {var.name_hint!r} is used before (or without) its "
                       f"definition")

    def visit_dataflow_var_(self, var):
        if self.dataflow_vars is None or var not in self.dataflow_vars:
            self.error(f"DataflowVar {var.name_hint!r} is used outside the dataflow block "
                       f"defining it (emit it with R.output / bb.emit_output)")
            return
        self.visit_var_(var)

    def visit_global_var_(self, gv):
        if self.mod is not None and gv not in self.mod:
            self.error(f"@{gv.name_hint} is not a function of the module")

    def visit_shape_expr_(self, shape):
        self.define_symbols(shape.struct_info, defining=False)

    def visit_prim_value_(self, prim):
        self.define_symbols(prim.struct_info, defining=False)

    def visit_call_(self, call):
        for k, arg in enumerate(call.args):
            if not is_leaf(arg):
                self.error(f"argument {k} of {_callee(call)} is a {type(arg).__name__}, not a "
                           f"variable or constant (normalize the IR)")
        for sinfo in call.sinfo_args:
            self.define_symbols(sinfo, defining=False)
        if isinstance(call.op, Op) and call.op.name == "relax.call_tir":
            self.check_call_tir(call)
        if not self.is_pure_call(call):
            if self.dataflow_vars is not None:
                self.error(f"impure call {_callee(call)} inside a dataflow block")
            elif self.func_pure:
                self.error(f"impure call {_callee(call)} inside a pure function (declare it "
                           f"R.function(pure=False))")
        super().visit_call_(call)

    def check_call_tir(self, call):
        """The PrimFunc takes the call's tensors, then its outputs, then its tir_vars."""
        gv = call.args[0] if call.args else None
        if self.mod is None or not isinstance(gv, GlobalVar) or gv not in self.mod:
            return
        func = self.mod[gv]
        if not isinstance(func, PrimFunc):
            self.error(f"R.call_tir calls @{gv.name_hint}, a {type(func).__name__}, not a "
                       f"PrimFunc")
            return
        args = call.args[1]
        n_in = len(args.fields) if isinstance(args, rx.Tuple) else 1
        out = call.sinfo_args[0] if call.sinfo_args else None
        n_out = len(out.fields) if isinstance(out, TupleStructInfo) else 1
        n_vars = len(call.args[2].values) if len(call.args) > 2 and isinstance(
            call.args[2], rx.ShapeExpr) else 0
        if n_in + n_out + n_vars != len(func.params):
            self.error(f"R.call_tir of @{gv.name_hint} passes {n_in} inputs, {n_out} outputs "
                       f"and {n_vars} tir_vars, but the PrimFunc takes {len(func.params)} "
                       f"parameters")

    def is_pure_call(self, call) -> bool:
        op = call.op
        if isinstance(op, Op):
            return is_pure_op(op)
        if isinstance(op, rx.ExternFunc):
            return False
        if isinstance(op, GlobalVar):
            func = self.mod[op] if self.mod is not None and op in self.mod else None
            return not isinstance(func, rx.Function) or func.is_pure
        sinfo = op.struct_info_
        return not isinstance(sinfo, FuncStructInfo) or sinfo.purity

    # -- blocks and bindings ----------------------------------------------------------------
    def visit_dataflow_block_(self, block):
        self.dataflow_vars = set()
        try:
            for binding in block.bindings:
                self.visit_binding(binding)
        finally:
            self.dataflow_vars = None

    def visit_binding(self, binding):
        self.binding = binding
        try:
            if binding.var.struct_info_ is not None and not isinstance(binding, rx.MatchCast):
                super().visit_binding(binding)
                self.define_symbols(binding.var.struct_info_, defining=False)
            else:
                super().visit_binding(binding)
        finally:
            self.binding = None

    def visit_match_cast_(self, binding):
        self.visit_expr(binding.value)
        self.define_symbols(binding.struct_info, defining=True)
        self.visit_var_def(binding.var)

    def visit_expr(self, expr):
        if isinstance(expr, rx.Expr) and not isinstance(expr, rx.Var) \
                and expr.struct_info_ is None:
            self.error(f"{type(expr).__name__} has no struct info (normalize the IR)")
        return super().visit_expr(expr)


def _force_pure(func) -> bool:
    return func.attrs is not None and bool(func.attrs.get("relax.force_pure", False))


def _callee(call) -> str:
    op = call.op
    if isinstance(op, Op):
        return op.name
    if isinstance(op, rx.ExternFunc):
        return f"of packed function {op.global_symbol!r}"
    if isinstance(op, GlobalVar):
        return f"of @{op.name_hint}"
    return f"of {relax_text(op)}"


def _line(binding) -> str:
    text = relax_text(rx.BindingBlock([binding]))
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= 160 else first[:157] + "..."


def _problems(obj) -> list:
    if isinstance(obj, IRModule):
        checker = _Checker(obj)
        for gv in obj.get_global_vars():
            func = obj[gv]
            if isinstance(func, rx.Function):
                checker.check_function(gv.name_hint, func)
        return checker.errors
    if isinstance(obj, rx.Function):
        checker = _Checker(None)
        checker.check_function("<function>", obj)
        return checker.errors
    raise DiagnosticError(f"well_formed checks an IRModule or a relax.Function, got "
                          f"{type(obj).__name__}", obj)


def verify_well_formed(obj) -> None:
    """Raise a ``DiagnosticError`` listing every problem of ``obj`` (IRModule or Function)."""
    errors = _problems(obj)
    if errors:
        raise DiagnosticError("Relax IR is not well formed:\n  " + "\n  ".join(errors), obj)


def well_formed(obj, check_struct_info=True) -> bool:
    """True when ``obj`` (IRModule or Function) is well formed (``verify_well_formed`` says
    why not)."""
    return not _problems(obj)
