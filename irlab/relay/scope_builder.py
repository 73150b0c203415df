"""``relay.ScopeBuilder``: builds nested ``let`` / ``if`` expressions in statement style.

    sb = relay.ScopeBuilder()
    x = sb.let("x", relay.const(1))        # let %x = 1;
    with sb.if_scope(cond):
        sb.ret(x)
    with sb.else_scope():
        sb.ret(relay.const(0))
    sb.get()   # let %x = 1; if (cond) { %x } else { 0 }  (the if/else is the scope's result)
"""

from __future__ import annotations

from contextlib import contextmanager

from irlab.errors import IrlabError
from irlab.relay.expr import If, Let, Var, var as make_var


class ScopeBuilder:
    """A stack of scopes; each holds its ``let`` bindings and its result (``ret``)."""

    def __init__(self):
        self._bindings = [[]]
        self._ret_values = [None]
        self._pending_if = [None]  # per scope: (cond, then-branch) awaiting its else_scope

    def let(self, var, value):
        """Bind ``value`` to ``var`` (a Var, a name, or ``(name, type)``) in the current scope;
        returns the variable."""
        if isinstance(var, (tuple, list)):
            if len(var) != 2:
                raise IrlabError(f"ScopeBuilder.let expects (name, type), got {var!r}")
            var = make_var(var[0], type_annotation=var[1])
        elif isinstance(var, str):
            var = make_var(var)
        self._bindings[-1].append((var, value))
        return var

    def ret(self, value):
        """Set the result of the current scope (once)."""
        if self._ret_values[-1] is not None:
            raise IrlabError("ScopeBuilder.ret was already called in this scope")
        self._ret_values[-1] = value

    def _enter(self):
        self._bindings.append([])
        self._ret_values.append(None)
        self._pending_if.append(None)

    def _exit(self):
        if self._pending_if.pop() is not None:
            raise IrlabError("ScopeBuilder: if_scope without else_scope")
        return _make_lets(self._bindings.pop(), self._ret_values.pop())

    @contextmanager
    def if_scope(self, cond):
        """The then-branch of ``if (cond)``; an ``else_scope`` must follow."""
        self._enter()
        yield
        then_branch = self._exit()
        if self._ret_values[-1] is not None:
            raise IrlabError("ScopeBuilder.ret was already called in this scope")
        self._pending_if[-1] = (cond, then_branch)

    @contextmanager
    def else_scope(self):
        """The else-branch of the ``if_scope`` just closed."""
        pending = self._pending_if[-1]
        if pending is None:
            raise IrlabError("ScopeBuilder.else_scope must follow an if_scope")
        self._pending_if[-1] = None
        self._enter()
        yield
        else_branch = self._exit()
        self.ret(If(pending[0], pending[1], else_branch))

    def type_of(self, expr):
        """The type of a variable bound in some scope (its annotation)."""
        if isinstance(expr, Var):
            return expr.type_annotation
        raise IrlabError("ScopeBuilder.type_of takes a Var")

    def get(self):
        """The whole expression: the outer scope's lets around its result."""
        if self._pending_if[-1] is not None:
            raise IrlabError("ScopeBuilder: if_scope without else_scope")
        return _make_lets(self._bindings[-1], self._ret_values[-1])


def _make_lets(bindings, result):
    if result is None:
        raise IrlabError("ScopeBuilder: ret was not called in this scope")
    for var, value in reversed(bindings):
        result = Let(var, value, result)
    return result
