"""The ``FunctionInfo`` of a PrimFunc: what a code generator records in a library so that the
runtime (``irlab.runtime.abi``) can check every call into the compiled function."""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.dtype import parse_dtype
from irlab.runtime.abi import FunctionInfo, ParamInfo
from irlab.tir import expr as E


def bound_vars(func) -> list:
    """The Vars of the parameter buffers' shapes/strides/offsets that are not parameters,
    in order of first appearance: they follow the parameters in the argument slots."""
    params = set(func.params)
    found: list = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            continue
        for e in (*buffer.shape, *buffer.strides, buffer.elem_offset):
            if isinstance(e, E.Var):
                if e not in params and e not in found:
                    found.append(e)
            elif not isinstance(e, E.IntImm):
                raise IrlabError(f"buffer {buffer.name} of {_func_name(func)}: the compiled "
                                 f"entry binds only constant or variable dimensions, got {e}")
    return found


def _func_name(func) -> str:
    attrs = func.attrs or {}
    return str(attrs.get("global_symbol", "<PrimFunc>")) if hasattr(attrs, "get") else "<PrimFunc>"


def function_info(func, name: str, asserts: list[str] | None = None,
                  written=()) -> FunctionInfo:
    """The FunctionInfo of a PrimFunc (as given to ``build``, before flattening); ``written``:
    the data Vars it may write through (``tir.analysis.written_buffer_data``), whose buffers
    the runtime refuses read-only."""
    extra = bound_vars(func)
    # a dimension may also be a scalar parameter (``A: (n,)`` with ``n: int32``): it is named
    # by the parameter, and the runtime checks the scalar passed against the array
    param_names = {p: p.name_hint for p in func.params if p not in func.buffer_map}
    names = _unique_names(extra, set(param_names.values()))
    var_name = {**param_names, **dict(zip(extra, names))}

    def dim(e):
        return int(e.value) if isinstance(e, E.IntImm) else var_name[e]

    params = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is not None:
            params.append(ParamInfo(
                buffer.name, "buffer", buffer.dtype, [dim(s) for s in buffer.shape],
                [dim(s) for s in buffer.strides] if buffer.strides else None,
                dim(buffer.elem_offset), written=buffer.data in written))
        else:
            kind = "handle" if parse_dtype(param.dtype).code == "handle" else "scalar"
            params.append(ParamInfo(param.name_hint, kind, param.dtype))
    return FunctionInfo(name, params, names, list(asserts or []))


def _unique_names(variables, reserved=()) -> list[str]:
    taken = set(reserved)
    out = []
    for v in variables:
        base = name = v.name_hint
        n = 0
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        out.append(name)
    return out


__all__ = ["function_info", "bound_vars"]
