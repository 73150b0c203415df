"""Argument descriptions of a tuned function (TVM's ``ms.arg_info``): dtype and shape per tensor.

A runner makes random inputs from them; a tuning record stores them as TVM's JSON
(``["TENSOR", "float32", [128, 128]]``).
"""

from __future__ import annotations

from irlab.errors import IrlabError


class ArgInfo:
    """Base of argument descriptions; ``from_json`` rebuilds the right subclass."""

    def as_json(self):
        raise NotImplementedError

    @staticmethod
    def from_json(json_obj) -> "ArgInfo":
        if isinstance(json_obj, list) and json_obj and json_obj[0] == "TENSOR":
            return TensorInfo(json_obj[1], json_obj[2])
        raise IrlabError(f"ArgInfo.from_json: unknown argument description {json_obj!r}")

    @staticmethod
    def from_prim_func(func) -> list:
        """One ``TensorInfo`` per buffer parameter of ``func`` (shapes must be constant)."""
        infos = []
        buffers = dict(func.buffer_map)
        for param in func.params:
            buf = buffers.get(param)
            if buf is None:
                raise IrlabError(f"ArgInfo.from_prim_func: parameter {param} of "
                                 f"{func.attrs.get('global_symbol', 'the function')} is not "
                                 f"a buffer; only tensor arguments can be tuned")
            infos.append(TensorInfo(str(buf.dtype), [_const(d, buf) for d in buf.shape]))
        return infos

    @staticmethod
    def from_entry_func(mod, remove_preproc=True) -> list:
        """The arguments of ``mod``'s only (or ``main``) PrimFunc."""
        return ArgInfo.from_prim_func(entry_func(mod))


def _const(dim, buf):
    value = getattr(dim, "value", dim)
    if not isinstance(value, int):
        raise IrlabError(f"ArgInfo: buffer {buf.name} has a symbolic dimension {dim}; "
                         f"MetaSchedule tunes static shapes only")
    return value


def entry_func(mod):
    """The PrimFunc a tuning workload is about: ``main``, or the module's only function."""
    funcs = dict(mod.functions.items())
    if len(funcs) == 1:
        return next(iter(funcs.values()))
    for gv, func in funcs.items():
        if gv.name_hint == "main":
            return func
    raise IrlabError(f"MetaSchedule: the module has {len(funcs)} functions and none is named "
                     f"'main'; tune one PrimFunc at a time")


class TensorInfo(ArgInfo):
    """A tensor argument: ``dtype`` and ``shape`` (a tuple of ints)."""

    def __init__(self, dtype, shape):
        self.dtype = str(dtype)
        self.shape = tuple(int(s) for s in shape)

    def as_json(self):
        return ["TENSOR", self.dtype, list(self.shape)]

    def __eq__(self, other):
        return isinstance(other, TensorInfo) and (self.dtype, self.shape) == (other.dtype,
                                                                              other.shape)

    def __hash__(self):
        return hash((self.dtype, self.shape))

    def __repr__(self):
        return f"TensorInfo({self.dtype!r}, {list(self.shape)})"
