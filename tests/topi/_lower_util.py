"""Helpers shared by the TOPI tests: lower one Relay op (or a fused function) with LowerTE,
build it with the LLVM backend, run it and compare with the ops' numpy references."""

from __future__ import annotations

import numpy as np

import irlab
from irlab import relay
from irlab.ir.op import Op
from irlab.relay import expr as R
from irlab.relay.backend.te_compiler import lower_function
from irlab.target import Target

TARGET = Target("llvm")


def infer(func):
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(func))
    return mod["main"]


def lower(func):
    func = infer(func)
    return lower_function(func.with_attr("Primitive", 1), TARGET)


def run_lowered(lowered, arrays):
    mod = irlab.build(lowered.prim_func)
    args = [irlab.nd.array(a) for a in arrays]
    outs = [irlab.nd.empty(tuple(int(d) for d in t.shape), t.dtype) for t in lowered.outputs]
    mod[lowered.name](*args, *outs)
    return [o.numpy() for o in outs]


def random_inputs(shapes, seed=0, dtype="float32"):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def check_op(make_call, shapes, rtol=1e-4, atol=1e-5, positive=()):
    """Lower ``make_call(*vars)`` alone, run it on random inputs, compare with the reference."""
    params = [relay.var(f"p{i}", shape=s, dtype="float32") for i, s in enumerate(shapes)]
    func = infer(relay.Function(params, make_call(*params)))
    body = func.body
    call = body.tuple_value if isinstance(body, R.TupleGetItem) else body
    lowered = lower_function(func.with_attr("Primitive", 1), TARGET)
    arrays = random_inputs(shapes)
    for i in positive:
        arrays[i] = np.abs(arrays[i]) + 0.5
    got = run_lowered(lowered, arrays)
    expected = Op.get(call.op.name).reference(arrays, call.attrs, call.checked_type)
    if not isinstance(expected, tuple):
        expected = (expected,)
    if isinstance(body, R.TupleGetItem):
        expected = (expected[body.index],)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return lowered


def interpret(func, arrays):
    """A function body evaluated op by op with the references (Calls, Tuples, TupleGetItems)."""
    func = infer(func)
    env = dict(zip(func.params, arrays))

    def ev(e):
        if e in env:
            return env[e]
        if isinstance(e, R.Call) and isinstance(e.op, Op):
            args = [ev(a) for a in e.args]
            v = e.op.reference(args, e.attrs, e.checked_type)
        elif isinstance(e, R.Call):  # a fused primitive function
            inner = e.op
            v = interpret(inner, [ev(a) for a in e.args])
        elif isinstance(e, R.Tuple):
            v = tuple(ev(f) for f in e.fields)
        elif isinstance(e, R.TupleGetItem):
            v = ev(e.tuple_value)[e.index]
        elif isinstance(e, R.Constant):
            v = e.data.numpy()
        else:
            raise TypeError(type(e))
        env[e] = v
        return v

    return ev(func.body)
