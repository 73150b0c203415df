"""BindParams: parameters of a function given values become constants (the MLC course binds
trained weights this way)::

    def main(x, w): ... R.matmul(x, w) ...   --BindParams("main", {"w": W})-->
    def main(x):    ... R.matmul(x, metadata["relax.Constant"][0]) ...

Parameters are named by their name hint or given as the Var itself; values are numpy arrays
or NDArrays whose dtype and shape must fit the parameter's struct info (symbolic dims of the
bound parameter are then known and substituted in the function).
"""

from __future__ import annotations

import numpy as np

from irlab.errors import IrlabError
from irlab.relax import expr as rx
from irlab.relax.block_builder import BlockBuilder
from irlab.relax.expr_functor import ExprMutator
from irlab.relax.normalizer import bind_symbols
from irlab.relax.struct_info import TensorStructInfo
from irlab.relax.symbolic import bind_symbolic_vars
from irlab.runtime.ndarray import NDArray
from irlab.transform import module_pass

__all__ = ["BindParams", "bind_params"]


def _constant(param, value) -> rx.Constant:
    const = value if isinstance(value, rx.Constant) else rx.Constant(
        value if isinstance(value, NDArray) else np.asarray(value))
    sinfo = param.struct_info
    got = const.struct_info
    if isinstance(sinfo, TensorStructInfo):
        if not sinfo.is_unknown_dtype and sinfo.dtype != got.dtype:
            raise IrlabError(f"BindParams: {param.name_hint} is {sinfo}, the value has dtype "
                             f"{got.dtype}")
        if sinfo.ndim not in (-1, got.ndim):
            raise IrlabError(f"BindParams: {param.name_hint} is {sinfo}, the value has shape "
                             f"{tuple(const.data.shape)}")
    return const


def bind_params(func, params):
    """``func`` with the parameters named in ``params`` replaced by constants."""
    by_name = {}
    for key, value in params.items():
        name = key.name_hint if isinstance(key, rx.Var) else str(key)
        matches = [p for p in func.params if p is key or p.name_hint == name]
        if not matches:
            raise IrlabError(f"BindParams: the function has no parameter {name!r} "
                             f"(parameters: {', '.join(p.name_hint for p in func.params)})")
        if len(matches) > 1:
            raise IrlabError(f"BindParams: several parameters are named {name!r}; bind by Var")
        by_name[matches[0]] = _constant(matches[0], value)
    symbols: dict = {}
    for param, const in by_name.items():
        bind_symbols(param.struct_info, const.struct_info, symbols)
    mutator = ExprMutator()
    mutator.var_remap_.update(by_name)
    body = mutator.visit_expr(func.body)
    kept = [p for p in func.params if p not in by_name]
    new = rx.Function(kept, body, func.ret_struct_info, func.is_pure, func.attrs, func.span)
    new = BlockBuilder().normalize(new)
    return bind_symbolic_vars(new, symbols) if symbols else new


def BindParams(func_name, params):  # noqa: N802 (TVM's name)
    """The pass binding ``params`` ({name or Var: array}) into function ``func_name``."""

    def transform(mod, ctx):
        new = mod.copy()
        new[func_name] = bind_params(mod[func_name], params)
        return new

    return module_pass(transform, opt_level=0, name="BindParams")
