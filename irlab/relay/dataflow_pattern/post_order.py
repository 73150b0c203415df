"""``PostOrderRewriter``: a mutator that calls ``rewrite(pre, post)`` on every node once its
children are rewritten (TVM's ``ExprRewriter`` + ``PostOrderRewrite``).

``pre`` is the original node, ``post`` the node rebuilt from the rewritten children (``pre``
itself when none changed); whatever ``rewrite`` returns replaces ``pre`` everywhere::

    class SwapAdd(PostOrderRewriter):
        def rewrite(self, pre, post):
            if isinstance(post, Call) and post.op is Op.get("add"):
                return Call(post.op, [post.args[1], post.args[0]])
            return post

    new_body = SwapAdd().visit(func.body)

Function bodies are entered. Let chains are rewritten in a loop, so long ANF programs do not
exhaust the Python stack; every ``Let`` of the chain still gets its ``rewrite`` call.
"""

from __future__ import annotations

from irlab.relay.expr import Let
from irlab.relay.expr_functor import ExprMutator


class PostOrderRewriter(ExprMutator):
    """Override ``rewrite(pre, post)``; ``visit(expr)`` returns the rewritten expression."""

    def rewrite(self, pre, post):
        return post

    def _dispatch(self, expr):
        post = super()._dispatch(expr)
        return self.rewrite(expr, post)

    def visit_let(self, let):
        chain = []
        body = let
        while isinstance(body, Let) and (body is let or body not in self.memo_map):
            chain.append((body, self.visit(body.var), self.visit(body.value)))
            body = body.body
        result = self.visit(body)
        for node, new_var, new_value in reversed(chain):
            if new_var is node.var and new_value is node.value and result is node.body:
                post = node
            else:
                post = Let(new_var, new_value, result, node.span)
            if node is not let:  # the outermost let is rewritten by _dispatch
                post = self.rewrite(node, post)
                self.memo_map[node] = post
            result = post
        return result


def post_order_rewrite(expr, rewriter: PostOrderRewriter):
    """``rewriter.visit(expr)`` (TVM's ``PostOrderRewrite(expr, &rewriter)``)."""
    return rewriter.visit(expr)


__all__ = ["PostOrderRewriter", "post_order_rewrite"]
