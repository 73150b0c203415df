"""DeadCodeElimination: drop let bindings whose value is never used (and, with
``inline_once``, substitute bindings used exactly once).

Only *pure* bindings are touched: evaluating them can be skipped or moved without anyone
noticing. Purity follows TVM's analysis: operators are pure unless ``TOpIsStateful``
(dropout); calls of PrimFuncs, external functions and higher-order parameters are assumed
impure. ``ignore_impurity=True`` treats everything as pure::

    let %a = exp(%x);                          let %b = log(%x);
    let %b = log(%x);           =>             %b
    %b

Usage is counted from the live code only, so a chain of dead bindings goes in one run. A
variable used inside a local function counts as used twice (the function may be called many
times), so ``inline_once`` never moves work into a loop-like position.
"""

from __future__ import annotations

from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.ir.type import FuncType
from irlab.relay.expr import Call, Constant, If, Let, Tuple, TupleGetItem, Var
from irlab.relay.expr_functor import ExprMutator, post_order
from irlab.relay.function import Function, is_primitive

_PURE = (True, True)  # (evaluating it is pure, calling the resulting value is pure)


def _first_order(expr) -> bool:
    ty = expr.checked_type if expr.has_checked_type() else None
    return not isinstance(ty, FuncType)


class _Purity:
    """TVM's PurityVisitor: ``(pure_eval, pure_call)`` of every node, iteratively."""

    def __init__(self, mod):
        self.mod = mod
        self.table: dict = {}
        self.var_purity: dict = {}
        self.global_purity: dict = {}

    def let_var_purity(self) -> dict:
        """let-bound var -> whether evaluating its value is pure."""
        return {v: p[0] for v, p in self.var_purity.items() if p is not None}

    def visit_module(self):
        for gv, func in self.mod.functions.items():
            if isinstance(func, Function) and not (
                    is_primitive(func) or func.get_attr("Extern")):
                self.global_function(gv, func)

    def global_function(self, gv, func):
        known = self.global_purity.get(gv.name_hint)
        if known is not None:
            return known
        self.global_purity[gv.name_hint] = _PURE  # a recursive call sees "pure"
        result = self.visit(func)
        self.global_purity[gv.name_hint] = result
        return result

    def visit(self, expr):
        nodes = post_order(expr, stop=self.table.keys())
        bound_by: dict = {}  # let value -> the variables it is bound to
        for node in nodes:
            if isinstance(node, Function):
                for p in node.params:  # higher-order parameters are call-impure (rule B)
                    self.var_purity.setdefault(p, (True, _first_order(p)))
            elif isinstance(node, Let):
                bound_by.setdefault(node.value, []).append(node.var)
                if node.value in self.table:
                    self.var_purity[node.var] = self.table[node.value]
        for node in nodes:
            if node in self.table:
                continue
            self.table[node] = self._purity(node)
            # A value is finished before its let's body starts (post-order), so uses of the
            # variable in the body see the value's purity, as in TVM's visitor.
            for var in bound_by.get(node, ()):
                self.var_purity[var] = self.table[node]
        return self.table[expr]

    def _purity(self, node):
        get = self.table.get
        if isinstance(node, Constant):
            return _PURE
        if isinstance(node, Op):
            return (True, not node.get_attr("TOpIsStateful", False))
        if isinstance(node, GlobalVar):
            func = self.mod[node.name_hint] if node.name_hint in self.mod else None
            if isinstance(func, Function) and not func.get_attr("Extern"):
                return self.global_function(node, func)
            return (True, False)  # PrimFuncs and externals are call-impure (rule F)
        if isinstance(node, Var):
            known = self.var_purity.get(node)
            return (True, True if known is None else known[1])
        if isinstance(node, Function):
            body = get(node.body, _PURE)
            return (True, body[0] and body[1])
        if isinstance(node, Let):
            value, body = get(node.value, _PURE), get(node.body, _PURE)
            return (value[0] and body[0], body[1])
        if isinstance(node, Call):
            callee = get(node.op, _PURE)
            args = all(get(a, _PURE)[0] for a in node.args)
            return (args and callee[0] and callee[1], _first_order(node) or callee[1])
        if isinstance(node, If):
            cond, t, f = (get(node.cond, _PURE), get(node.true_branch, _PURE),
                          get(node.false_branch, _PURE))
            return (cond[0] and t[0] and f[0], t[1] and f[1])
        if isinstance(node, Tuple):
            return (all(get(f, _PURE)[0] for f in node.fields), True)
        if isinstance(node, TupleGetItem):
            return (get(node.tuple_value, _PURE)[0], _first_order(node))
        return (False, False)


class _Usage:
    """Counts the uses of every let-bound variable, starting from the live code only."""

    def __init__(self, purity: dict, default_purity: bool):
        self.purity = purity
        self.default_purity = default_purity
        self.values: dict = {}   # let var -> bound value
        self.uses: dict = {}     # let var -> use count (2 means "2 or more")
        self.levels: dict = {}   # let var -> function nesting level of its binding

    def is_pure(self, var) -> bool:
        return self.purity.get(var, self.default_purity)

    def run(self, func):
        visits: dict = {}
        stack = [(func, 0)]
        while stack:
            expr, level = stack.pop()
            # A node reached a third time cannot change any decision (2 uses already block).
            count = visits.get(expr, 0) + 1
            visits[expr] = count
            if count > 2:
                continue
            if isinstance(expr, Var):
                self._use(expr, level, stack)
            elif isinstance(expr, Let):
                body = expr
                while isinstance(body, Let):
                    var = body.var
                    self.values[var] = body.value
                    self.uses[var] = 0
                    self.levels[var] = level
                    if not self.is_pure(var):  # must run anyway: its insides are live
                        stack.append((body.value, level))
                    body = body.body
                stack.append((body, level))
            elif isinstance(expr, Function):
                stack.append((expr.body, level + 1))
            elif isinstance(expr, Call):
                stack.extend((a, level) for a in reversed(expr.args))
                stack.append((expr.op, level))
            elif isinstance(expr, Tuple):
                stack.extend((f, level) for f in reversed(expr.fields))
            elif isinstance(expr, TupleGetItem):
                stack.append((expr.tuple_value, level))
            elif isinstance(expr, If):
                stack.extend([(expr.false_branch, level), (expr.true_branch, level),
                              (expr.cond, level)])

    def _use(self, var, level, stack):
        if var not in self.values:
            return  # a parameter
        self.uses[var] += 1
        if self.uses[var] == 1 and self.is_pure(var):
            # First use: the pure value is needed after all, so its insides are live.
            stack.append((self.values[var], level))
        if self.levels[var] < level:
            self.uses[var] += 1  # used in a local function, which may run many times


class _Eliminator(ExprMutator):
    def __init__(self, usage: _Usage, inline_once: bool):
        super().__init__()
        self.usage = usage
        self.inline_once = inline_once

    def action(self, var) -> str:
        usage = self.usage
        if var not in usage.values or not usage.is_pure(var):
            return "keep"
        uses = usage.uses.get(var, 0)
        if uses == 0:
            return "elide"
        if uses == 1 and self.inline_once:
            return "inline"
        return "keep"

    def visit_var(self, var):
        if self.action(var) == "inline":
            return self.visit(self.usage.values[var])
        return var

    def visit_let(self, let):
        chain = []
        body = let
        while isinstance(body, Let) and (body is let or body not in self.memo_map):
            action = self.action(body.var)
            # Values are visited top-down, so an inlined variable further down the chain
            # finds its value already rewritten (no deep recursion on long let chains).
            value = self.visit(body.value) if action != "elide" else None
            chain.append((body, action, value))
            body = body.body
        result = self.visit(body)
        for node, action, value in reversed(chain):
            if action == "keep":
                if value is not node.value or result is not node.body:
                    result = Let(node.var, value, result, node.span)
                else:
                    result = node
            if node is not let:
                self.memo_map[node] = result
        return result


def dead_code_elimination(mod, inline_once=False, ignore_impurity=False):
    """The module with dead (and, if asked, single-use) pure let bindings removed."""
    from irlab.relay.transform import InferType

    functions = [f for f in mod.functions.values() if isinstance(f, Function)]
    if any(not f.body.has_checked_type() for f in functions):
        mod = InferType()(mod)
    purity = {}
    if not ignore_impurity:
        analysis = _Purity(mod)
        analysis.visit_module()
        purity = analysis.let_var_purity()
    result = mod.copy()
    for gv, func in mod.functions.items():
        if not isinstance(func, Function):
            continue  # PrimFuncs come across unchanged
        usage = _Usage(purity, default_purity=ignore_impurity)
        usage.run(func)
        new_func = _Eliminator(usage, inline_once).visit(func)
        if new_func is not func:
            result[gv] = new_func
    return result


def DeadCodeElimination(inline_once=False, ignore_impurity=False):
    """Remove unused pure let bindings; ``inline_once`` also inlines single-use ones
    (module pass, opt level 1)."""
    from irlab.transform import module_pass

    def transform(mod, ctx):
        return dead_code_elimination(mod, bool(inline_once), bool(ignore_impurity))

    return module_pass(transform, opt_level=1, name="DeadCodeElimination",
                       required=["InferType"])


__all__ = ["DeadCodeElimination", "dead_code_elimination"]
