"""What the AlterOpLayout tests share: calls of an op (and primitive functions) in an
expression, the pass run with a target in scope, the reference interpreter, and building,
running and reading the lowered kernels of a model."""

from __future__ import annotations

import irlab
from irlab import relay
from irlab.build_module import lower_for_codegen
from irlab.contrib import graph_executor
from irlab.ir.op import Op
from irlab.relay.expr import Call
from irlab.relay.function import Function
from irlab.target import Target
from irlab.tir import PrimFunc


def calls(expr, name):
    """The calls of op ``name`` in ``expr``, in post-order."""
    found = []

    def visit(e):
        if isinstance(e, Call) and isinstance(e.op, Op) and e.op.name == name:
            found.append(e)

    relay.analysis.post_order_visit(expr, visit)
    return found


def alter(mod, target="llvm", config=None):
    """AlterOpLayout at opt_level 3 with ``target`` in scope (None: no target) and the
    PassContext ``config``."""
    with irlab.transform.PassContext(opt_level=3, config=config or {}):
        if target is None:
            return relay.transform.AlterOpLayout()(mod)
        with Target(target):
            return relay.transform.AlterOpLayout()(mod)


def interpret(mod, inputs, params=None):
    return relay.create_executor("debug", mod=mod, params=params).evaluate()(**inputs).numpy()


def primitive_functions(main):
    """The fused (``Primitive``) functions in ``main``."""
    found = []

    def visit(e):
        if isinstance(e, Function) and e.attrs is not None and "Primitive" in e.attrs:
            found.append(e)

    relay.analysis.post_order_visit(main, visit)
    return found


def build(mod, params, opt_level, target="llvm", config=None):
    with irlab.transform.PassContext(opt_level=opt_level, config=config or {}):
        return relay.build(mod, target, params=params)


def run(lib, inputs):
    m = graph_executor.GraphModule(lib["default"](irlab.cpu()))
    m.run(**inputs)
    return m.get_output(0).numpy()


def lowered_kernels(lib, word):
    """The lowered (flat) TIR of the built module's PrimFuncs whose name has ``word``."""
    prims = {g: f for g, f in lib.ir_mod.functions.items() if isinstance(f, PrimFunc)}
    with irlab.transform.PassContext(opt_level=3):
        low = lower_for_codegen(irlab.IRModule(prims))
    return {g.name_hint: f.script() for g, f in low.functions.items() if word in g.name_hint}
