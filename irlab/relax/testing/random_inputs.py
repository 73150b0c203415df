"""Random arguments for a Relax function: its symbolic dims given numbers, then each tensor
parameter drawn at the resulting shape (the pass stepper's numerics, the explorer's run tab)."""

from __future__ import annotations

import numpy as np

from irlab.errors import IrlabError
from irlab.relax.expr import symbolic_vars
from irlab.tir import expr as tir_expr

DEFAULT_DIM = 4  # the value a symbolic dimension takes unless told otherwise


def symbolic_dims(func) -> list:
    """The symbolic ``tir.Var``s of ``func``'s parameters, first appearance first (by name:
    two vars of one name are one dimension to the user)."""
    found, names = [], set()
    for param in func.params:
        for var in symbolic_vars(param.struct_info):
            if var.name_hint not in names:
                names.add(var.name_hint)
                found.append(var)
    return found


def dim_value(dim, values: dict) -> int:
    """A dimension (a TIR expression over symbolic vars) under ``values`` (name -> int)."""
    from irlab.arith import Analyzer
    from irlab.tir.functor import substitute

    if isinstance(dim, tir_expr.IntImm):
        return int(dim.value)

    def lookup(var):
        if var.name_hint in values:
            return tir_expr.IntImm(var.dtype, int(values[var.name_hint]))
        return None
    value = Analyzer().simplify(substitute(dim, lookup))
    if not isinstance(value, tir_expr.IntImm):
        raise IrlabError(f"dimension {dim} is not known from {sorted(values)}")
    return int(value.value)


def parameter_shape(param, values: dict, shapes: dict):
    """The shape of ``param`` under ``values``; ``shapes`` (name -> shape) gives the shape of
    parameters whose struct info has none (``R.Tensor(ndim=2)``; default ``DEFAULT_DIM``s)."""
    sinfo = param.struct_info
    dims = getattr(sinfo, "dims", None)
    if dims is not None:
        return tuple(dim_value(d, values) for d in dims)
    if param.name_hint in shapes:
        return tuple(int(d) for d in shapes[param.name_hint])
    ndim = getattr(sinfo, "ndim", -1)
    if ndim < 0:
        raise IrlabError(f"parameter {param.name_hint}: give its shape (no ndim is known)")
    return (DEFAULT_DIM,) * ndim


def random_array(shape, dtype, rng):
    if "float" in dtype:
        return rng.standard_normal(shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(0, 4, shape).astype(dtype)


def random_inputs(func, dims=None, shapes=None, seed=0) -> list:
    """Numpy arguments for Relax function ``func``: symbolic dims from ``dims`` (name -> int,
    default ``DEFAULT_DIM``), unknown shapes from ``shapes``; values drawn from ``seed``."""
    values = {v.name_hint: DEFAULT_DIM for v in symbolic_dims(func)}
    values.update(dims or {})
    rng = np.random.default_rng(seed)
    out = []
    for param in func.params:
        dtype = getattr(param.struct_info, "dtype", "") or "float32"
        out.append(random_array(parameter_shape(param, values, shapes or {}), dtype, rng))
    return out


__all__ = ["DEFAULT_DIM", "symbolic_dims", "dim_value", "parameter_shape", "random_inputs"]
