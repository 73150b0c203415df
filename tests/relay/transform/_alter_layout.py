"""What the AlterOpLayout tests share: calls of an op in an expression, the pass run with a
target in scope, and the reference interpreter."""

from __future__ import annotations

import irlab
from irlab import relay
from irlab.ir.op import Op
from irlab.relay.expr import Call
from irlab.target import Target


def calls(expr, name):
    """The calls of op ``name`` in ``expr``, in post-order."""
    found = []

    def visit(e):
        if isinstance(e, Call) and isinstance(e.op, Op) and e.op.name == name:
            found.append(e)

    relay.analysis.post_order_visit(expr, visit)
    return found


def alter(mod, target="llvm"):
    """AlterOpLayout at opt_level 3 with ``target`` in scope (None: no target)."""
    with irlab.transform.PassContext(opt_level=3):
        if target is None:
            return relay.transform.AlterOpLayout()(mod)
        with Target(target):
            return relay.transform.AlterOpLayout()(mod)


def interpret(mod, inputs, params=None):
    return relay.create_executor("debug", mod=mod, params=params).evaluate()(**inputs).numpy()
