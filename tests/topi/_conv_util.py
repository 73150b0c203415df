"""Shared helpers for the conv / pooling TOPI tests: lower a Relay op call (or a FuseOps'd
model) with LowerTE, build it and compare with the op's numpy reference."""

from __future__ import annotations

import numpy as np

import irlab
from irlab import relay
from irlab.ir.op import Op
from irlab.relay.backend.te_compiler import lower_function
from irlab.target import Target

TARGET = "llvm"


def infer(func):
    mod = irlab.IRModule.from_expr(func)
    mod = relay.transform.InferType()(mod)
    return mod["main"]


def run_lowered(lowered, arrays, out_shape, out_dtype):
    mod = irlab.build(lowered.prim_func, target=TARGET)
    args = [irlab.nd.array(a) for a in arrays]
    out = irlab.nd.empty(out_shape, out_dtype)
    mod[lowered.name](*args, out)
    return out.numpy()


def random(shape, dtype, rng, low=-1.0, high=1.0):
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-20, 20, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def lower_op(make_call, shapes, target, dtype="float32"):
    """``make_call(*vars)`` over fresh vars of ``shapes``, lowered (not built) for ``target``:
    (the inferred function, its LoweredFunction). For inspecting what a target -- the host's
    or another CPU's -- gets."""
    params = [relay.var(f"p{i}", shape=s, dtype=dtype) for i, s in enumerate(shapes)]
    func = infer(relay.Function(params, make_call(*params)))
    return func, lower_function(func, Target(target))


def check_op(make_call, shapes, dtype="float32", rtol=1e-4, atol=1e-5, seed=0):
    """``make_call(*vars)`` builds one op call over fresh vars of ``shapes``; the lowered,
    built function (host target) must match ``Op.reference``. Returns the LoweredFunction."""
    rng = np.random.default_rng(seed)
    func, lowered = lower_op(make_call, shapes, TARGET, dtype)
    arrays = [random(s, dtype, rng) for s in shapes]
    out_type = func.body.checked_type
    got = run_lowered(lowered, arrays, tuple(int(d) for d in out_type.shape), out_type.dtype)
    call = func.body
    want = Op.get(call.op.name).reference(arrays, call.attrs, out_type)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    return lowered


def eval_reference(func, arrays):
    """A primitive function evaluated with the ops' numpy references."""
    from irlab.relay import expr as R

    env = dict(zip(func.params, arrays))

    def visit(e):
        if e in env:
            return env[e]
        if isinstance(e, R.Call):
            args = [visit(a) for a in e.args]
            value = Op.get(e.op.name).reference(args, e.attrs, e.checked_type)
        else:
            raise TypeError(type(e).__name__)
        env[e] = value
        return value

    return visit(func.body)


def primitive_functions(mod):
    """The ``Primitive=1`` functions called by ``mod["main"]``, in call order."""
    from irlab.relay import expr as R
    from irlab.relay.function import Function

    found = []

    def visit(e):
        if isinstance(e, R.Call):
            for a in e.args:
                visit(a)
            if isinstance(e.op, Function):
                found.append(e.op)
        elif isinstance(e, R.Tuple):
            for f in e.fields:
                visit(f)
        elif isinstance(e, R.TupleGetItem):
            visit(e.tuple_value)

    visit(mod["main"].body)
    return found


def fuse(func):
    mod = irlab.IRModule.from_expr(func)
    mod = relay.transform.InferType()(mod)
    mod = relay.transform.FuseOps(2)(mod)
    return relay.transform.InferType()(mod)


def check_fused(func, seed=0, rtol=1e-4, atol=1e-5):
    """FuseOps ``func``; lower, build and check every primitive function. Returns the
    LoweredFunctions."""
    rng = np.random.default_rng(seed)
    out = []
    for prim in primitive_functions(fuse(func)):
        arrays = [random(tuple(int(d) for d in p.checked_type.shape), p.checked_type.dtype, rng)
                  for p in prim.params]
        lowered = lower_function(prim, Target(TARGET))
        ty = prim.body.checked_type
        got = run_lowered(lowered, arrays, tuple(int(d) for d in ty.shape), ty.dtype)
        np.testing.assert_allclose(got, eval_reference(prim, arrays), rtol=rtol, atol=atol)
        out.append(lowered)
    return out


def tiled(lowered) -> bool:
    """Whether the anchor schedule made a register tile (a ``local`` accumulator)."""
    return "local" in lowered.prim_func.script() if hasattr(lowered.prim_func, "script") \
        else "local" in str(lowered.prim_func)
