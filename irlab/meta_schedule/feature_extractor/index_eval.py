"""Numeric evaluation of a flattened buffer index, for strides and footprints.

The index of an access in flat TIR is an integer expression of loop variables; its stride
along a loop is the average change per iteration, ``(f(var = extent - 1) - f(var = 0)) /
(extent - 1)`` with the other variables at 0 (exact for affine indices, an average slope
through floordiv/floormod).
"""

from __future__ import annotations

import operator

from irlab.tir import expr as E

_BINARY = {
    E.Add: operator.add, E.Sub: operator.sub, E.Mul: operator.mul,
    E.Min: min, E.Max: max,
    E.FloorDiv: lambda a, b: a // b if b else 0, E.FloorMod: lambda a, b: a % b if b else 0,
    E.Div: lambda a, b: int(a / b) if b else 0,
    E.Mod: lambda a, b: a - b * int(a / b) if b else 0,
}


def evaluate(e, env) -> float:
    """The value of ``e`` with variables from ``env`` (Var -> number; missing: 0). Loads and
    calls count as 0 (their values do not decide where an access goes in this estimate)."""
    kind = type(e)
    if kind in _BINARY:
        return _BINARY[kind](evaluate(e.a, env), evaluate(e.b, env))
    if isinstance(e, (E.IntImm, E.FloatImm)):
        return e.value
    if isinstance(e, E.Var):
        return env.get(e, 0)
    if isinstance(e, E.Cast):
        return evaluate(e.value, env)
    if isinstance(e, E.Ramp):
        return evaluate(e.base, env)
    if isinstance(e, E.Broadcast):
        return evaluate(e.value, env)
    if isinstance(e, E.Select):
        return evaluate(e.true_value, env)
    if isinstance(e, E.Let):
        return evaluate(e.body, {**env, e.var: evaluate(e.value, env)})
    return 0


def stride(index, var, extent) -> float:
    """Average change of ``index`` per step of ``var`` over ``[0, extent)``."""
    if isinstance(index, E.Ramp) and extent <= 1:
        return 0.0
    steps = max(int(extent) - 1, 1)
    return (evaluate(index, {var: steps}) - evaluate(index, {})) / steps
