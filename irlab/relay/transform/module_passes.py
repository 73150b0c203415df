"""Module-level passes over global functions: RemoveUnusedFunctions and Inline ("InlineGlobals").

RemoveUnusedFunctions keeps only the globals reachable from the entry functions::

    def @main(%x) { @f(%x) }                   def @main(%x) { @f(%x) }
    def @f(%y) { %y }                  =>      def @f(%y) { %y }
    def @unused(%z) { %z }

Inline substitutes the body of every global function marked ``Inline=1`` at its call sites
(and a bare reference by the function itself), then drops the inlined functions::

    def @main(%x) { @g(%x) }           =>      def @main(%x) { add(%x, %x) }
    def @g(%y, Inline=1) { add(%y, %y) }
"""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.expr import GlobalVar
from irlab.relay.expr import Call, Let, Var
from irlab.relay.expr_functor import ExprMutator, post_order
from irlab.relay.function import Function
from irlab.transform import module_pass, register_pass_factory


def _global_refs(func) -> list:
    """The names of the globals ``func`` refers to, in first-reference order."""
    names = {}
    for node in post_order(func):
        if isinstance(node, GlobalVar):
            names.setdefault(node.name_hint, None)
    return list(names)


# ---------------------------------------------------------------------------------------------
# RemoveUnusedFunctions
def remove_unused_functions(mod, entry_functions=None):
    """``mod`` without the globals that no entry function reaches."""
    entries = ["main"] if entry_functions is None else list(entry_functions)
    reached = set()
    work = []
    for name in entries:
        name = name.name_hint if isinstance(name, GlobalVar) else str(name)
        if name not in mod:
            raise IrlabError(f"RemoveUnusedFunctions: entry function @{name} is not in the "
                             f"module")
        work.append(name)
    while work:
        name = work.pop()
        if name in reached:
            continue
        reached.add(name)
        func = mod[name]
        if isinstance(func, Function):  # PrimFuncs call nothing we track
            work.extend(n for n in _global_refs(func) if n in mod and n not in reached)
    result = mod.copy()
    for gv in mod.get_global_vars():
        if gv.name_hint not in reached:
            result.remove(gv)
    return result


def RemoveUnusedFunctions(entry_functions=None):
    """Remove global functions unreachable from ``entry_functions`` (default ``["main"]``)
    (module pass, opt level 1)."""

    def transform(mod, ctx):
        return remove_unused_functions(mod, entry_functions)

    return module_pass(transform, opt_level=1, name="RemoveUnusedFunctions", required=[])


# ---------------------------------------------------------------------------------------------
# Inline
class _Substitute(ExprMutator):
    """Variables replaced by expressions (``mapping``: var -> expr)."""

    def __init__(self, mapping: dict):
        super().__init__()
        self.mapping = mapping

    def visit_var(self, var):
        return self.mapping.get(var, var)


def _instantiate(func: Function, args) -> object:
    """The body of ``func`` with its parameters replaced by ``args``. Variables bound inside
    (lets, local functions) get fresh copies, so a body inlined twice never binds the same
    variable twice (TVM's Inline shares them)."""
    mapping = dict(zip(func.params, args))
    for node in post_order(func.body):
        binders = node.params if isinstance(node, Function) else (
            (node.var,) if isinstance(node, Let) else ())
        for var in binders:
            mapping.setdefault(var, Var(var.name_hint, var.type_annotation, var.span))
    return _Substitute(mapping).visit(func.body)


def _call_graph(mod) -> dict:
    return {gv.name_hint: _global_refs(f) for gv, f in mod.functions.items()
            if isinstance(f, Function)}


def _recursive_names(graph: dict) -> set:
    """Globals on a call cycle (a function that can reach itself)."""
    recursive = set()
    for start in graph:
        seen, work = set(), list(graph[start])
        while work:
            name = work.pop()
            if name == start:
                recursive.add(start)
                break
            if name in seen or name not in graph:
                continue
            seen.add(name)
            work.extend(graph[name])
    return recursive


def _topological(graph: dict) -> list:
    """Callees before callers (cycles broken arbitrarily)."""
    order, state = [], {}
    for root in graph:
        if root in state:
            continue
        stack = [(root, iter(graph[root]))]
        state[root] = "open"
        while stack:
            name, callees = stack[-1]
            for callee in callees:
                if callee in graph and callee not in state:
                    state[callee] = "open"
                    stack.append((callee, iter(graph[callee])))
                    break
            else:
                stack.pop()
                state[name] = "done"
                order.append(name)
    return order


class _Inliner(ExprMutator):
    def __init__(self, mod, inlinable: set):
        super().__init__()
        self.mod = mod
        self.inlinable = inlinable

    def visit_call(self, call):
        op = call.op
        if isinstance(op, GlobalVar) and op.name_hint in self.inlinable:
            args = [self.visit(a) for a in call.args]
            func = self.mod[op.name_hint]
            if len(args) != len(func.params):
                raise IrlabError(f"@{op.name_hint} takes {len(func.params)} arguments, the "
                                 f"call gives {len(args)}")
            if func.get_attr("Compiler") is not None or func.get_attr("Extern") is not None:
                # External code: keep it a (local) function, called in place.
                return Call(_local_copy(func), args, call.attrs, call.type_args, call.span)
            return _instantiate(func, args)
        return super().visit_call(call)

    def visit_global_var(self, gv):
        if gv.name_hint in self.inlinable:
            return _local_copy(self.mod[gv.name_hint])  # a reference becomes a closure
        return gv


def _local_copy(func: Function) -> Function:
    params = [Var(p.name_hint, p.type_annotation, p.span) for p in func.params]
    body = _instantiate(func, params)
    return Function(params, body, func.ret_type, func.type_params, func.attrs, func.span)


def _inlinable(mod, graph: dict) -> set:
    """Marked, non-recursive Relay functions whose callees are all inlinable too (TVM inlines
    a function only once it calls nothing else)."""
    recursive = _recursive_names(graph)
    names = {name for name in graph if mod[name].get_attr("Inline") and name not in recursive}
    changed = True
    while changed:
        blocked = {name for name in names if any(c not in names for c in graph[name])}
        changed = bool(blocked)
        names -= blocked
    return names


def inline_globals(mod):
    """``mod`` with the global functions marked ``Inline=1`` inlined where they are used."""
    graph = _call_graph(mod)
    inlinable = _inlinable(mod, graph)
    if not inlinable:
        return mod
    # Functions nobody refers to stay (entry points), even when marked.
    referenced = {callee for callees in graph.values() for callee in callees}
    current = mod.copy()
    for name in _topological(graph):  # callees first: their bodies are final when inlined
        if not any(callee in inlinable for callee in graph[name]):
            continue
        func = current[name]
        new = _Inliner(current, inlinable).visit(func)
        if new is not func:
            current[current.get_global_var(name)] = new
    for name in inlinable & referenced:
        current.remove(name)
    return current


def Inline():
    """Inline the global functions marked ``Inline=1`` (module pass "InlineGlobals", opt
    level 1)."""

    def transform(mod, ctx):
        return inline_globals(mod)

    return module_pass(transform, opt_level=1, name="InlineGlobals", required=[])


register_pass_factory("InlineGlobals", Inline)

__all__ = ["RemoveUnusedFunctions", "Inline", "remove_unused_functions", "inline_globals"]
