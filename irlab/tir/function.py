"""``PrimFunc``: a TIR function of scalar/handle parameters with buffers bound to them."""

from __future__ import annotations

from irlab.errors import TIRError
from irlab.ir.attrs import DictAttrs
from irlab.ir.node import Node
from irlab.runtime.registry import get_global_func
from irlab.tir.buffer import Buffer
from irlab.tir.expr import Var


class BufferMap(tuple):
    """The immutable ``param -> Buffer`` map of a PrimFunc, stored as (param, buffer) pairs.

    Lookup works like a dict (``buffer_map[param]``, ``items()``, ``get``, ``in``);
    iterating yields the pairs (keeping it a plain sequence for structural equality).
    """

    def __new__(cls, mapping=None):
        items = mapping.items() if isinstance(mapping, dict) else (mapping or ())
        return super().__new__(cls, tuple((k, v) for k, v in items))

    def __getitem__(self, key):
        if isinstance(key, (int, slice)):
            return tuple.__getitem__(self, key)
        for param, buffer in tuple.__iter__(self):
            if param is key:
                return buffer
        raise KeyError(f"{getattr(key, 'name_hint', key)} has no buffer in the buffer_map")

    def get(self, key, default=None):
        for param, buffer in tuple.__iter__(self):
            if param is key:
                return buffer
        return default

    def __contains__(self, key):
        return any(param is key for param, _ in tuple.__iter__(self))

    def keys(self):
        return [p for p, _ in tuple.__iter__(self)]

    def values(self):
        return [b for _, b in tuple.__iter__(self)]

    def items(self):
        return list(tuple.__iter__(self))

    def __reduce__(self):
        return (BufferMap, (tuple(self),))


class PrimFunc(Node):
    """A TIR function. ``params`` are Vars (``handle`` for buffers, scalars otherwise);
    ``buffer_map`` gives the Buffer behind each handle param. Params, the buffers' data vars
    and their symbolic shape/stride vars are bound by the function."""

    _non_structural = ("span",)
    params: tuple
    body: object
    ret_type: object
    buffer_map: BufferMap
    attrs: DictAttrs
    span: object

    _bind_fields = ("defined_vars",)

    def __init__(self, params, body, ret_type=None, buffer_map=None, attrs=None, span=None):
        params = tuple(params)
        for p in params:
            if not isinstance(p, Var):
                raise TIRError(f"PrimFunc params must be Vars, got {p!r}")
        buffer_map = buffer_map if isinstance(buffer_map, BufferMap) else BufferMap(buffer_map)
        for param, buffer in buffer_map.items():
            if not any(param is p for p in params):
                raise TIRError(f"buffer_map key {param.name_hint} is not a parameter")
            if not isinstance(buffer, Buffer):
                raise TIRError(f"buffer_map[{param.name_hint}] must be a Buffer")
        if attrs is not None and not isinstance(attrs, DictAttrs):
            attrs = DictAttrs(dict(attrs))
        super().__init__(params, body, ret_type, buffer_map, attrs, span)

    @property
    def defined_vars(self) -> tuple:
        out = list(self.params)
        for buffer in self.buffer_map.values():
            out.append(buffer.data)
            for e in buffer.shape + buffer.strides + (buffer.elem_offset,):
                if isinstance(e, Var) and not any(e is v for v in out):
                    out.append(e)
        return tuple(out)

    def with_attr(self, key_or_dict, value=None) -> "PrimFunc":
        """A copy with attribute(s) set (``with_attr("global_symbol", "main")``)."""
        items = key_or_dict if isinstance(key_or_dict, dict) else {key_or_dict: value}
        attrs = self.attrs or DictAttrs()
        for k, v in items.items():
            attrs = attrs.with_attr(k, v)
        return self.with_fields(attrs=attrs)

    def without_attr(self, key) -> "PrimFunc":
        if self.attrs is None or key not in self.attrs:
            return self
        items = {k: v for k, v in self.attrs.as_dict().items() if k != key}
        return self.with_fields(attrs=DictAttrs(items))

    def with_body(self, new_body, span=None) -> "PrimFunc":
        return self.with_fields(body=new_body)

    def specialize(self, param_map):
        raise TIRError("PrimFunc.specialize is not available yet")

    def script(self, *args, **kwargs) -> str:
        """TVMScript text of this function (``irlab.script.printer``, a higher layer: reached
        through the registry)."""
        return get_global_func("script.script")(self, *args, **kwargs)

    def __str__(self):
        return self.script()

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def astext(self) -> str:
        from irlab.tir.text import func_to_text

        return func_to_text(self)
