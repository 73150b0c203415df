"""Normal forms: ToANormalForm, ToGraphNormalForm and ToBasicBlockNormalForm.

*Graph normal form* is dataflow: a value used twice is the same node, and where it is
computed is left implicit. *A-normal form* makes every intermediate value a ``let`` binding
placed in the innermost scope that holds all its uses::

    fn (%x, %c) {                              fn (%x, %c) {
      %0 = add(%x, 1f);                          let %x1 = 1f;
      if (%c) {                                  let %x2 = add(%x, %x1);
        multiply(%0, 2f)                         let %x3 = if (%c) {
      } else {                         =>          let %x4 = 2f;
        %0                                         let %x5 = multiply(%x2, %x4);
      }                                            %x5
    }                                            } else {
                                                   %x2
                                                 };
                                                 %x3
                                               }

*Basic-block normal form* binds only the values whose uses span several scopes (here %0, used
in both branches: ``let %x1 = add(%x, 1f); if (%c) { multiply(%x1, 2f) } else { %x1 }``), so
each is computed once, before the branch. ToGraphNormalForm turns lets back into dataflow.

The scope of a node is the lowest common ancestor of the scopes its uses are in (an ``if``
branch, a function body and a ``let`` body each open a child scope), as TVM's
to_a_normal_form.cc computes it. Traversals are iterative: 10,000-deep chains are fine.
"""

from __future__ import annotations

from irlab.ir.expr import GlobalVar
from irlab.ir.op import Op
from irlab.relay.expr import Call, Constant, If, Let, Tuple, TupleGetItem, Var
from irlab.relay.expr_functor import ExprMutator
from irlab.relay.function import Function, is_primitive

_ATOMS = (Var, GlobalVar, Op)


class _Scope:
    """A scope and the bindings made in it, in order (TVM's ScopeNode + LetList).

    ``up[i]`` is the ancestor 2**i levels up, so a common ancestor is found in log(depth)
    steps: a 10,000-deep let chain whose bindings all use the same parameter stays linear.
    """

    __slots__ = ("parent", "level", "bindings", "up")

    def __init__(self, parent=None):
        self.parent = parent
        self.level = 0 if parent is None else parent.level + 1
        self.bindings = []
        up, ancestor = [], parent
        while ancestor is not None:
            up.append(ancestor)
            k = len(up) - 1  # the ancestor 2**(k+1) up is 2**k above the one 2**k up
            ancestor = ancestor.up[k] if k < len(ancestor.up) else None
        self.up = up

    def push(self, var, value):
        self.bindings.append((var, value))
        return var

    def wrap(self, body):
        """``let v1 = e1; ...; body`` over this scope's bindings."""
        for var, value in reversed(self.bindings):
            body = Let(var, value, body)
        return body


def _ancestor(scope, level):
    diff, i = scope.level - level, 0
    while diff:
        if diff & 1:
            scope = scope.up[i]
        diff >>= 1
        i += 1
    return scope


def _lca(a, b):
    """The innermost scope enclosing both (binary lifting)."""
    if a is b:
        return a
    if a.level > b.level:
        a = _ancestor(a, b.level)
    elif b.level > a.level:
        b = _ancestor(b, a.level)
    if a is b:
        return a
    for i in range(len(a.up) - 1, -1, -1):
        if i < len(a.up) and a.up[i] is not b.up[i]:
            a, b = a.up[i], b.up[i]
    return a.parent


def _dependency_edges(node):
    """``(child, slot)`` pairs in TVM's dependency-graph order. ``slot`` None: the child is in
    the node's scope; an integer: in the node's sub-scope of that number."""
    if isinstance(node, Call):
        return [(node.op, None)] + [(a, None) for a in node.args]
    if isinstance(node, Tuple):
        return [(f, None) for f in node.fields]
    if isinstance(node, TupleGetItem):
        return [(node.tuple_value, None)]
    if isinstance(node, If):
        return [(node.cond, None), (node.true_branch, 1), (node.false_branch, 2)]
    if isinstance(node, Function):
        if is_primitive(node):  # never rewritten inside
            return []
        return [(p, 0) for p in node.params] + [(node.body, 0)]
    if isinstance(node, Let):
        return [(node.var, 0), (node.value, 0), (node.body, 0)]
    return []


class _Scopes:
    """The scope of every node of a function, and the nodes that had to be lifted out of the
    scope of their first use (they are shared across scopes)."""

    def __init__(self, root):
        parents: dict = {}
        order = []
        stack = [(root, iter(_dependency_edges(root)))]
        seen = {root}
        while stack:
            node, edges = stack[-1]
            for child, slot in edges:
                parents.setdefault(child, []).append((node, slot))
                if child not in seen:
                    seen.add(child)
                    stack.append((child, iter(_dependency_edges(child))))
                    break
            else:
                stack.pop()
                order.append(node)
        self.scope = {root: _Scope()}
        self.sub: dict = {}
        self.lifted = set()
        # Reverse post-order puts every parent before its children.
        for node in reversed(order):
            if node is root:
                continue
            uses = parents[node]
            first = self._edge_scope(*uses[0])
            scope = first
            for parent, slot in uses[1:]:
                scope = _lca(scope, self._edge_scope(parent, slot))
            if scope is not first:
                self.lifted.add(node)
            self.scope[node] = scope
        self.has_lets = any(isinstance(n, Let) for n in order)

    def _edge_scope(self, parent, slot):
        if slot is None:
            return self.scope[parent]
        key = (parent, slot)
        scope = self.sub.get(key)
        if scope is None:
            scope = self.sub[key] = _Scope(self.scope[parent])
        return scope

    def sub_scope(self, node, slot):
        return self._edge_scope(node, slot)


def _fill_edges(node):
    """``(child, let_var)`` in the order bindings are made (TVM's Fill visits call arguments
    before the callee). ``let_var``: the child is the value bound to that variable."""
    if isinstance(node, Call):
        return [(a, None) for a in node.args] + [(node.op, None)]
    if isinstance(node, Tuple):
        return [(f, None) for f in node.fields]
    if isinstance(node, TupleGetItem):
        return [(node.tuple_value, None)]
    if isinstance(node, If):
        return [(node.cond, None), (node.true_branch, None), (node.false_branch, None)]
    if isinstance(node, Function):
        return [] if is_primitive(node) else [(node.body, None)]
    if isinstance(node, Let):
        return [(node.value, node.var), (node.body, None)]
    return []


class _Fill:
    """Rebuilds a function with the bindings placed in their scopes.

    ``include`` None: every non-atomic value is bound (ANF). Otherwise only the nodes in
    ``include`` and explicit lets are (basic-block normal form).
    """

    def __init__(self, scopes: _Scopes, include=None):
        self.scopes = scopes
        self.include = include
        self.memo: dict = {}

    def run(self, root):
        memo = self.memo
        stack = [(root, None, iter(_fill_edges(root)))]
        while stack:
            node, let_var, edges = stack[-1]
            for child, child_var in edges:
                if child in memo:
                    if child_var is not None:  # a value bound again: alias it
                        self.scopes.scope[child].push(child_var, memo[child])
                    continue
                stack.append((child, child_var, iter(_fill_edges(child))))
                break
            else:
                stack.pop()
                memo[node] = self.rebuild(node, let_var, node is root)
        return memo[root]

    def atomic(self, expr, let_var):
        if let_var is None:
            return expr
        return self.scopes.scope[expr].push(let_var, expr)

    def compound(self, orig, now, let_var):
        if let_var is None and self.include is not None and orig not in self.include:
            return now
        var = let_var if let_var is not None else Var("x")
        scope = self.scopes.scope[orig]
        # "let v = (let a = ...; body)" is flattened to "let a = ...; let v = body".
        while isinstance(now, Let):
            scope.push(now.var, now.value)
            now = now.body
        return scope.push(var, now)

    def rebuild(self, node, let_var, is_root):
        memo, sub = self.memo, self.scopes.sub_scope
        if isinstance(node, _ATOMS):
            return self.atomic(node, let_var)
        if isinstance(node, Constant):
            return self.compound(node, node, let_var)
        if isinstance(node, Call):
            call = Call(memo[node.op], [memo[a] for a in node.args], node.attrs, node.type_args,
                        node.span)
            return self.compound(node, call, let_var)
        if isinstance(node, Tuple):
            return self.compound(node, Tuple([memo[f] for f in node.fields], node.span),
                                 let_var)
        if isinstance(node, TupleGetItem):
            item = TupleGetItem(memo[node.tuple_value], node.index, node.span)
            return self.compound(node, item, let_var)
        if isinstance(node, If):
            ite = If(memo[node.cond], sub(node, 1).wrap(memo[node.true_branch]),
                     sub(node, 2).wrap(memo[node.false_branch]), node.span)
            return self.compound(node, ite, let_var)
        if isinstance(node, Function):
            if is_primitive(node):
                func = node
            else:
                func = Function(node.params, sub(node, 0).wrap(memo[node.body]), node.ret_type,
                                node.type_params, node.attrs, node.span)
            # A global function is the module's binding already; local ones get a let.
            return func if is_root else self.compound(node, func, let_var)
        if isinstance(node, Let):
            return self.compound(node, sub(node, 0).wrap(memo[node.body]), let_var)
        raise TypeError(f"normal form conversion cannot handle a {type(node).__name__}")


def to_a_normal_form(func: Function) -> Function:
    """``func`` in A-normal form (primitive functions are returned as they are)."""
    if is_primitive(func):
        return func
    return _Fill(_Scopes(func)).run(func)


def to_basic_block_normal_form(func: Function) -> Function:
    """``func`` with the values shared across scopes let-bound before the scopes split."""
    if is_primitive(func):
        return func
    scopes = _Scopes(func)
    if not scopes.has_lets and not any(not isinstance(n, _ATOMS) for n in scopes.lifted):
        return func  # nothing shared across scopes: already in basic-block normal form
    return _Fill(scopes, include=scopes.lifted).run(func)


def needs_basic_block_lifting(func: Function) -> list:
    """The non-atomic nodes of ``func`` shared across scopes without a binding before the scopes
    split (empty: ``func`` is in basic-block normal form)."""
    lifted = _Scopes(func).lifted
    return [n for n in lifted if not isinstance(n, _ATOMS)]


class _ToGraph(ExprMutator):
    """Replaces every let-bound variable by its value (a recursive binding stays a let)."""

    def __init__(self):
        super().__init__()
        self.bound: dict = {}

    def visit_var(self, var):
        return self.bound.get(var, var)

    def visit_let(self, let):
        from irlab.relay.analysis import free_vars

        body = let
        while isinstance(body, Let) and (body is let or body not in self.memo_map):
            var, value = body.var, body.value
            # Only a function can refer to the variable it is bound to.
            if isinstance(value, Function) and var in free_vars(value):
                self.bound[var] = Let(var, self.visit(value), var, body.span)
                # Inside the function the variable stays itself; outside it is the let.
                self.memo_map.pop(var, None)
            else:
                self.bound[var] = self.visit(value)
            body = body.body
        return self.visit(body)


def to_graph_normal_form(expr):
    """``expr`` with its let bindings turned back into dataflow."""
    return _ToGraph().visit(expr)


def _module_transform(convert):
    def transform(mod, ctx):
        result = mod.copy()
        for gv, func in mod.functions.items():
            if not isinstance(func, Function) or func.get_attr("Compiler") is not None:
                continue
            new = convert(func)
            if new is not func:
                result[gv] = new
        return result
    return transform


def ToANormalForm():
    """Bind every intermediate value to a ``let`` in the scope where it is needed
    (module pass, opt level 1)."""
    from irlab.transform import module_pass

    return module_pass(_module_transform(to_a_normal_form), opt_level=1, name="ToANormalForm",
                       required=[])


def ToGraphNormalForm():
    """Turn ``let`` bindings back into dataflow (function pass, opt level 1)."""
    from irlab.relay.transform import function_pass

    def transform(func, mod, ctx):
        return to_graph_normal_form(func)

    return function_pass(transform, opt_level=1, name="ToGraphNormalForm", required=[])


def ToBasicBlockNormalForm():
    """Bind the values shared by several scopes before the scopes split; the rest stays
    dataflow (module pass, opt level 1)."""
    from irlab.transform import module_pass

    return module_pass(_module_transform(to_basic_block_normal_form), opt_level=1,
                       name="ToBasicBlockNormalForm", required=[])


__all__ = ["ToANormalForm", "ToGraphNormalForm", "ToBasicBlockNormalForm", "to_a_normal_form",
           "to_graph_normal_form", "to_basic_block_normal_form", "needs_basic_block_lifting"]
