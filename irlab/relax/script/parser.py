"""TVMScript parser for Relax: the ``ast`` of an ``@R.function`` -> ``relax.Function``.

Statements are walked here and emitted through a ``relax.BlockBuilder`` (which normalizes
and deduces struct info); expressions are evaluated by a small ``ast`` evaluator against the
function's scopes, its module (``cls.f``) and the Python globals, so ``R``, ``T`` and ``I`` can
be any alias. String dims in annotations (``R.Tensor(("n", 4))``) are the function's symbolic
variables (``builtins.symbol_table``).
"""

from __future__ import annotations

import ast
import builtins as _py
import operator

from irlab import relax as _relax
from irlab import tir as _tir
from irlab.errors import IrlabError, ParseError
from irlab.ir.expr import GlobalVar
from irlab.ir.module import IRModule
from irlab.ir.op import Op
from irlab.ir.structural import structural_equal
from irlab.relax.normalizer import is_leaf
from irlab.relax.op.registry import is_pure_op
from irlab.relax.script import builtins as R
from irlab.script import dialect
from irlab.script.tir_builtins import DTYPES

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow}
_TIR_BINOPS = {ast.FloorDiv: _tir.floordiv, ast.Mod: _tir.floormod}
_RELAX_BINOPS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply",
                 ast.Div: "divide", ast.FloorDiv: "floor_divide", ast.Mod: "floor_mod",
                 ast.Pow: "power"}
_RELAX_CMPOPS = {ast.Lt: "less", ast.LtE: "less_equal", ast.Gt: "greater",
                 ast.GtE: "greater_equal", ast.Eq: "equal", ast.NotEq: "not_equal"}
_CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
           ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}


class DeferredRelaxFunction(dialect.DeferredFunction):
    """An ``@R.function`` waiting for its module (``@I.ir_module`` or ``from_source``)."""

    def __init__(self, node, source, pure, private):
        self.node, self.source = node, source
        self.name = node.name
        self.pure, self.private = pure, private

    def declare(self, ctx):
        gv = ctx.global_vars.get(self.name)
        if gv is not None:
            ctx.signatures[gv] = FunctionParser(self, ctx).signature()

    def define(self, ctx):
        return FunctionParser(self, ctx).parse()

    def __repr__(self):
        return f"<@R.function {self.name} (parsed when its @I.ir_module is)>"


class FunctionParser:
    """Parses one ``@R.function``."""

    def __init__(self, deferred: DeferredRelaxFunction, ctx: dialect.ModuleContext):
        self.node, self.source = deferred.node, deferred.source
        self.pure, self.private = deferred.pure, deferred.private
        self.ctx = ctx
        self.module_names = ctx.names()
        self.scopes: list[dict] = [{}]
        self.symbols: dict = {}  # name -> tir.Var: the function's symbolic dims
        self.bb = None  # the builder of the body (parse); a signature needs none
        self.attrs: dict = {}
        self.block_locals: dict = {}  # name -> line of a dataflow block keeping it inside

    # -- errors and scopes ------------------------------------------------------------------
    def fail(self, node, message):
        self.source.fail(node, message)

    def lookup(self, name, node):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        for table in (self.symbols, self.module_names, self.source.env):
            if name in table:
                return table[name]
        if hasattr(_py, name):
            return getattr(_py, name)
        if name == "metadata":
            self.fail(node, "the script refers to constants it does not show (printed without "
                            "show_meta=True): print it with script(show_meta=True), or pass "
                            "from_source(text, extra_vars={'metadata': {kind: [...]}})")
        line = self.block_locals.get(name)
        if line is not None:
            self.fail(node, f"{name} is a dataflow variable of the block at line {line}: "
                            f"list it in that block's R.output(...) to use it after the block")
        self.fail(node, f"undefined name {name!r}")

    def bind(self, name, value):
        self.scopes[-1][name] = value

    # -- the function -----------------------------------------------------------------------
    def declare_signature_symbols(self):
        """Define the symbolic dims a parameter names alone (``R.Tensor(("n", "m + 1"))``
        defines ``n``) before any is evaluated, so one may compute over a later one."""
        for arg in self.node.args.args:
            for node in ast.walk(arg.annotation) if arg.annotation is not None else ():
                if isinstance(node, (ast.Tuple, ast.List)):  # a shape
                    names = node.elts
                elif isinstance(node, ast.keyword) and node.arg == "value":  # R.Prim(value=)
                    names = [node.value]
                else:
                    continue
                for elt in names:
                    if isinstance(elt, ast.Constant) and isinstance(elt.value, str) and \
                            elt.value.isidentifier() and elt.value not in self.symbols:
                        self.symbols[elt.value] = _tir.Var(elt.value, "int64")

    def signature(self):
        """The FuncStructInfo of the function (for calls from other functions)."""
        self.declare_signature_symbols()
        with R.symbol_table(self.symbols):
            params = [self.param_sinfo(arg) for arg in self.node.args.args]
            ret = self.ret_sinfo()
        return _relax.FuncStructInfo(params, ret or _relax.ObjectStructInfo(), self.pure)

    def param_sinfo(self, arg):
        if arg.annotation is None:
            self.fail(arg, f"parameter {arg.arg} needs a struct info annotation such as "
                           f"R.Tensor((n, 4), \"float32\")")
        return self.struct_info(arg.annotation)

    def ret_sinfo(self):
        returns = self.node.returns
        return None if returns is None else self.struct_info(returns)

    def struct_info(self, node):
        value = self.eval(node)
        try:
            return R.as_struct_info(value)
        except IrlabError as err:
            self.fail(node, str(err))

    def parse(self):
        node = self.node
        if node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
            self.fail(node, "an @R.function takes plain positional parameters")
        self.declare_signature_symbols()
        self.bb = _relax.BlockBuilder(_signature_module(self.ctx))
        with R.symbol_table(self.symbols):
            ret = self.ret_sinfo()
            params = []
            for arg in node.args.args:
                var = _relax.Var(arg.arg, self.param_sinfo(arg))
                self.bind(arg.arg, var)
                params.append(var)
            self.bb.begin_scope()
            try:
                body = self.body(node.body)
            finally:
                blocks = self.bb.end_scope()
        attrs = dict(self.attrs)
        if self.private and "global_symbol" in attrs:
            self.fail(node, f"function {node.name} is private: it cannot have a global_symbol "
                            f"(drop one of them)")
        if not self.private:
            attrs.setdefault("global_symbol", node.name)
        if ret is not None and ret.is_base_of(body.struct_info):
            ret = None  # as TVM's Function: a body more precise than the annotation gives it
        func = _relax.Function(params, _relax.SeqExpr(blocks, body), ret, self.pure,
                               attrs or None)
        return self.bb.normalize(func)

    # -- statements -------------------------------------------------------------------------
    def body(self, stmts):
        """Emit the statements of the function body; the returned value."""
        stmts = list(stmts)
        if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value,
                                                                   ast.Constant):
            stmts = stmts[1:]  # docstring
        for k, st in enumerate(stmts):
            if isinstance(st, ast.Return):
                if k != len(stmts) - 1:
                    self.fail(stmts[k + 1], "statements after `return`")
                if st.value is None:
                    self.fail(st, "an @R.function returns a value")
                value = self.bb.normalize(self.as_expr(self.eval(st.value), st.value))
                return value if is_leaf(value) else self.bb.emit(value)
            self.stmt(st, dataflow_outputs=None)
        self.fail(self.node, f"function {self.node.name} has no `return`")

    def stmt(self, st, dataflow_outputs):
        try:
            self._stmt(st, dataflow_outputs)
        except ParseError:
            raise
        except (IrlabError, TypeError, ValueError, IndexError, KeyError) as err:
            self.fail(st, f"{type(err).__name__}: {err}")

    def _stmt(self, st, outputs):
        if isinstance(st, ast.With):
            return self.with_stmt(st, outputs)
        if isinstance(st, ast.Assign):
            if len(st.targets) == 1 and isinstance(st.targets[0], ast.Tuple):
                return self.unpack(st, outputs)
            if len(st.targets) != 1 or not isinstance(st.targets[0], ast.Name):
                self.fail(st, "a binding assigns one name (`lv = value`)")
            return self.assign(st.targets[0].id, None, st.value, st, outputs)
        if isinstance(st, ast.AnnAssign):
            if st.value is None or not isinstance(st.target, ast.Name):
                self.fail(st, "expected `name: R.Tensor(...) = value`")
            return self.assign(st.target.id, st.annotation, st.value, st, outputs)
        if isinstance(st, ast.Expr):
            return self.expr_stmt(st, outputs)
        if isinstance(st, ast.FunctionDef):
            return self.local_function(st, outputs)
        if isinstance(st, ast.If):
            if outputs is not None:
                self.fail(st, "no `if` inside a dataflow block (it is control flow)")
            return self.if_stmt(st)
        if isinstance(st, ast.Pass):
            return None
        if isinstance(st, ast.Return):
            self.fail(st, "`return` inside a block: return after the dataflow block")
        self.fail(st, f"unsupported statement {type(st).__name__} in an @R.function")

    def expr_stmt(self, st, outputs):
        v = st.value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return None  # a comment
        callee = self.callee(v)
        if callee is R.func_attr:
            attrs = self.eval(v.args[0]) if len(v.args) == 1 else None
            if not isinstance(attrs, dict):
                self.fail(v, 'R.func_attr takes one dict, e.g. R.func_attr({"key": 1})')
            self.attrs.update(attrs)
            return None
        if callee is R.output:
            if outputs is None:
                self.fail(v, "R.output(...) belongs inside `with R.dataflow():`")
            return None  # read by the dataflow block before its bindings
        if callee is R.dataflow:
            self.fail(v, "R.dataflow() opens a block: `with R.dataflow():`")
        self.assign("_", None, v, st, outputs)
        sinfo = self.scopes[-1]["_"].struct_info
        if not (isinstance(sinfo, _relax.TupleStructInfo) and not sinfo.fields):
            self.fail(v, f"a value of type {sinfo} is used as a statement: bind it to a "
                         f"variable (`_ = ...`), as only R.Tuple() values stand alone")
        return None

    def with_stmt(self, st, outputs):
        call = st.items[0].context_expr if len(st.items) == 1 else None
        if call is None or self.callee(call) is not R.dataflow or st.items[0].optional_vars:
            self.fail(st, "the only `with` of an @R.function is `with R.dataflow():`")
        if outputs is not None:
            self.fail(st, "dataflow blocks do not nest")
        names = self.output_names(st)
        self.scopes.append({})
        self.bb._begin_dataflow_block()
        for inner in st.body:
            self.stmt(inner, names)
        self.bb._end_block()
        local = self.scopes.pop()
        line = st.lineno + self.source.line_offset
        self.block_locals.update({name: line for name in local if name not in names})
        for name in names:
            if name not in local:
                self.fail(st, f"R.output({name}): {name} is not bound in this dataflow block")
            self.bind(name, local[name])

    def local_function(self, st, outputs):
        """``@R.function def g(...)`` inside a function: ``g`` is bound to a Relax function
        that may use the enclosing function's variables."""
        decorators = [self.eval(d) for d in st.decorator_list]
        decorator = decorators[0] if len(decorators) == 1 else None
        if decorator is R.function:
            decorator = R.FunctionDecorator()
        if not isinstance(decorator, R.FunctionDecorator):
            self.fail(st, "a function inside an @R.function is itself an @R.function")
        inner = FunctionParser(DeferredRelaxFunction(st, self.source, decorator.pure, True),
                               self.ctx)
        inner.scopes = [{k: v for scope in self.scopes for k, v in scope.items()}, {}]
        inner.symbols.update(self.symbols)
        self.bind_value(st.name, None, inner.parse(), st, st, outputs)

    def if_stmt(self, st):
        """``if c: ...; v = a  else: ...; v = b`` binds ``v`` to ``relax.If`` of both branches
        (each a SeqExpr ending with the value assigned to ``v``)."""
        if not st.orelse:
            self.fail(st, "an `if` of an @R.function needs an `else` (both branches assign "
                          "the same variable last)")
        cond = self.bb.normalize(self.as_expr(self.eval(st.test), st.test))
        name, annotation, then = self.branch(st.body, st)
        other_name, _, other = self.branch(st.orelse, st.orelse[0])
        if other_name != name:
            self.fail(st.orelse[-1], f"both branches must assign the same variable last "
                                     f"({name} in the first, {other_name} here)")
        value = self.bb.normalize(_relax.If(cond, then, other))
        sinfo = value.struct_info
        if annotation is not None:
            sinfo = self.check_annotation(annotation, sinfo, st)
        var = _relax.Var(name, sinfo)
        self.bb.emit_normalized(_relax.VarBinding(var, value))
        self.bind(name, var)

    def branch(self, stmts, node):
        """(name assigned last, its annotation node, the branch as a SeqExpr)."""
        last = stmts[-1]
        target = last.targets[0] if isinstance(last, ast.Assign) and \
            len(last.targets) == 1 else getattr(last, "target", None)
        if not isinstance(last, (ast.Assign, ast.AnnAssign)) or not isinstance(
                target, ast.Name) or last.value is None:
            self.fail(last, "a branch of an `if` ends by assigning its value to a variable")
        self.scopes.append({})
        self.bb.begin_scope()
        try:
            for inner in stmts[:-1]:
                self.stmt(inner, None)
            value = self.eval(last.value)
            if isinstance(value, R.MatchCastPair):  # ``v = R.match_cast(...)`` ends it
                self.bind_value(target.id, None, value, last.value, last, None)
                value = self.scopes[-1][target.id]
            body = self.bb.normalize(self.as_expr(value, last.value))
            if not is_leaf(body):  # as the normalizer would, in this branch's block
                body = self.bb.emit(body)
        finally:
            blocks = self.bb.end_scope()
            self.scopes.pop()
        return target.id, getattr(last, "annotation", None), _relax.SeqExpr(blocks, body)

    def output_names(self, st) -> list:
        """The names given to the block's ``R.output(...)`` (its last statement)."""
        last = st.body[-1] if st.body else None
        value = last.value if isinstance(last, ast.Expr) else None
        if not (isinstance(value, ast.Call) and self.callee(value) is R.output):
            self.fail(st, "a dataflow block ends with R.output(v, ...) naming the values "
                          "used after it")
        names = []
        for arg in value.args:
            if not isinstance(arg, ast.Name):
                self.fail(arg, "R.output takes variable names")
            names.append(arg.id)
        return names

    def assign(self, name, annotation, value_node, st, outputs):
        """Emit ``name[: annotation] = value``."""
        callee = self.callee(value_node)
        if isinstance(value_node, ast.Call) and _is_dtype(callee) and not value_node.args:
            return self.declare_symbol(name, callee, value_node)
        return self.bind_value(name, annotation, self.eval(value_node), value_node, st, outputs)

    def bind_value(self, name, annotation, value, value_node, st, outputs):
        """Emit the binding of an evaluated ``value`` to ``name``."""
        if isinstance(value, dialect.ModuleNamespace):
            self.bind(name, value)  # ``cls = Module``
            return None
        in_dataflow = outputs is not None
        var_cls = _relax.DataflowVar if in_dataflow and name not in outputs else _relax.Var
        if isinstance(value, R.MatchCastPair):
            sinfo = value.struct_info
            if annotation is not None:
                self.check_annotation(annotation, sinfo, st)
            var = var_cls(name, sinfo)
            expr = self.bb.normalize(value.value)
            self.bb.emit_normalized(_relax.MatchCast(var, expr, sinfo))
        else:
            expr = self.bb.normalize(self.as_expr(value, value_node))
            self.check_purity(expr, in_dataflow, st)
            sinfo = expr.struct_info
            if annotation is not None:
                sinfo = self.check_annotation(annotation, sinfo, st)
            var = var_cls(name, sinfo)
            self.bb.emit_normalized(_relax.VarBinding(var, expr))
        self.bind(name, var)
        return None

    def unpack(self, st, outputs):
        """``a, b = x, y`` binds each name; ``a, b = t`` binds the fields of the tuple ``t``
        (``n, m = T.int64(), T.int64()`` declares symbolic variables)."""
        targets = st.targets[0].elts
        if not all(isinstance(t, ast.Name) for t in targets):
            self.fail(st, "only names can be unpacked into (`a, b = value`)")
        if isinstance(st.value, ast.Tuple) and len(st.value.elts) == len(targets):
            for target, value_node in zip(targets, st.value.elts):
                self.assign(target.id, None, value_node, st, outputs)
            return None
        value = self.bb.normalize(self.as_expr(self.eval(st.value), st.value))
        sinfo = value.struct_info
        if not (isinstance(sinfo, _relax.TupleStructInfo) and len(sinfo.fields) == len(targets)):
            self.fail(st.value, f"cannot unpack {sinfo} into {len(targets)} names")
        if not isinstance(value, _relax.Var):
            value = self.bb.emit(value)
        for k, target in enumerate(targets):
            self.bind_value(target.id, None, _relax.TupleGetItem(value, k), st.value, st,
                            outputs)
        return None

    def check_purity(self, expr, in_dataflow, st):
        """An impure call (``R.call_packed``...) needs ``@R.function(pure=False)`` and must
        stay out of dataflow blocks."""
        if not (isinstance(expr, _relax.Call) and self.is_impure(expr)):
            return
        if in_dataflow:
            self.fail(st, "an impure call cannot be in a dataflow block: move it after "
                          "the block")
        if self.pure and not self.attrs.get("relax.force_pure"):
            self.fail(st, f"function {self.node.name} makes an impure call: declare it "
                          f"@R.function(pure=False)")

    def is_impure(self, call) -> bool:
        op = call.op
        if isinstance(op, Op):
            return not is_pure_op(op)
        sinfo = self.ctx.signatures.get(op) if isinstance(op, GlobalVar) else op.struct_info_
        return isinstance(sinfo, _relax.FuncStructInfo) and not sinfo.purity

    def check_annotation(self, annotation, deduced, st):
        """The annotated struct info, when the value can be one (else a clear error)."""
        sinfo = self.struct_info(annotation)
        if structural_equal(sinfo, deduced):
            return deduced  # the same as without the annotation (sharing included)
        if not sinfo.is_base_of(deduced) and not deduced.is_base_of(sinfo):
            self.fail(st, f"the value is a {deduced}, which cannot be a {sinfo} as annotated "
                          f"(use R.match_cast to check it at run time)")
        return sinfo

    def declare_symbol(self, name, dtype_call, node):
        """``n = T.int64()``: the symbolic variable ``n`` (the one a signature named, if any)."""
        var = self.symbols.get(name)
        if var is None:
            var = self.symbols[name] = _tir.Var(name, dtype_call.dtype)
        elif var.dtype != dtype_call.dtype:
            self.fail(node, f"symbolic variable {name} is {var.dtype}, declared here as "
                            f"{dtype_call.dtype}")
        self.bind(name, var)

    # -- expressions ------------------------------------------------------------------------
    def as_expr(self, value, node):
        try:
            return R.as_expr(value)
        except IrlabError as err:
            self.fail(node, str(err))

    def callee(self, node):
        if not isinstance(node, ast.Call):
            return None
        try:
            return self.eval(node.func)
        except ParseError:
            return None

    def eval(self, node):
        try:
            return self._eval(node)
        except ParseError:
            raise
        except (IrlabError, TypeError, ValueError, IndexError, KeyError,
                AttributeError) as err:
            self.fail(node, f"{type(err).__name__}: {err}")

    def _eval(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.lookup(node.id, node)
        if isinstance(node, ast.Attribute):
            base = self.eval(node.value)
            try:
                return getattr(base, node.attr)
            except AttributeError as err:
                detail = str(err) if isinstance(base, dialect.ModuleNamespace) else \
                    f"{node.attr!r} is not defined in {ast.unparse(node.value)}"
                self.fail(node, detail)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.eval(e) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            a, b = self.eval(node.left), self.eval(node.right)
            if isinstance(a, _relax.Expr) or isinstance(b, _relax.Expr):
                return self.relax_op(_RELAX_BINOPS, node.op, a, b, node)
            if isinstance(a, _tir.PrimExpr) or isinstance(b, _tir.PrimExpr):
                tir_op = _TIR_BINOPS.get(type(node.op))  # // and % of dims: floor semantics
                if tir_op is not None:
                    return tir_op(a, b)
            return _BINOPS[type(node.op)](a, b)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.eval(node.operand)
            if isinstance(node.op, ast.UAdd):
                return value
            return _relax.op.negative(value) if isinstance(value, _relax.Expr) else -value
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a, b = self.eval(node.left), self.eval(node.comparators[0])
            if isinstance(a, _relax.Expr) or isinstance(b, _relax.Expr):
                return self.relax_op(_RELAX_CMPOPS, node.ops[0], a, b, node)
            value = _CMPOPS[type(node.ops[0])](a, b)
            return value.asobject() if isinstance(value, _tir.EqualOp) else value
        if isinstance(node, ast.Call):
            return self.call(node)
        self.fail(node, f"unsupported expression {type(node).__name__} in an @R.function")

    def subscript(self, node):
        """``t[i]`` of a Relax tuple (a tuple literal of Relax values too) is a TupleGetItem;
        anything else (a list: ``metadata[...][k]``) indexes as Python does."""
        base, index = self.eval(node.value), self.eval(node.slice)
        if isinstance(base, tuple) and any(isinstance(v, _relax.Expr) for v in base):
            base = self.as_expr(base, node.value)
        if isinstance(base, _relax.Tuple) and isinstance(index, int):
            return _relax.TupleGetItem(base, index)
        return base[index]

    def relax_op(self, table, op, a, b, node):
        """``x // y``, ``x < y``... of Relax values: the Relax op (``R.floor_divide``...)."""
        name = table.get(type(op))
        if name is None:
            self.fail(node, f"operator {type(op).__name__} is not defined on Relax values")
        return getattr(_relax.op, name)(self.as_expr(a, node), self.as_expr(b, node))

    def call(self, node):
        fn = self.eval(node.func)
        if isinstance(fn, R.Marker):
            self.fail(node, f"{fn!r} cannot be used inside an expression")
        args = [self.eval(a) for a in node.args]
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
        if isinstance(fn, GlobalVar):
            return self.call_global(fn, args, kwargs, node)
        if isinstance(fn, _relax.Var):  # a function-valued variable
            return _relax.Call(fn, [self.as_expr(a, node) for a in args])
        return fn(*args, **kwargs)

    def call_global(self, gv, args, kwargs, node):
        """``cls.f(x)``: call another Relax function of the module."""
        if kwargs:
            self.fail(node, f"a call of {gv.name_hint} takes positional arguments only")
        if gv not in self.ctx.signatures and gv not in self.ctx.functions:
            self.fail(node, f"{gv.name_hint} is not a function of this module")
        # a PrimFunc is called so in lowered code (after CallTIRRewrite): destination-passing
        # style, returning R.Tuple()
        return _relax.Call(gv, [self.as_expr(a, node) for a in args])


def _signature_module(ctx) -> IRModule:
    """The module's PrimFuncs and stand-ins with the declared signatures of its Relax
    functions, so the BlockBuilder deduces what ``cls.f(x)`` returns before ``f`` is parsed
    (``f`` may be the function being parsed: a recursive call)."""
    cached = ctx.scratch.get("relax.signature_module")
    if cached is not None:
        return cached
    mod = ctx.scratch["relax.signature_module"] = IRModule(dict(ctx.functions))
    for gv, sinfo in ctx.signatures.items():
        params = [_relax.Var(f"p{k}", p) for k, p in enumerate(sinfo.params)]
        mod[gv] = _relax.Function(params, _relax.Var("ret", sinfo.ret), sinfo.ret, sinfo.purity)
    return mod


def _is_dtype(value) -> bool:
    """Whether ``value`` is one of T's dtypes (``T.int64``), as in ``n = T.int64()``."""
    return any(value is d for d in DTYPES.values())
