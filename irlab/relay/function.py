"""Relay ``Function``: parameters, a body, an optional return type and ``DictAttrs``."""

from __future__ import annotations

from irlab.errors import IrlabError
from irlab.ir.attrs import DictAttrs
from irlab.ir.expr import RelayExpr
from irlab.relay.expr import Call, Var, expect_expr


class Function(RelayExpr):
    """``fn (%p0: T0, ..., attrs) -> ret_type { body }``.

    ``attrs`` holds free-form function attributes such as ``Primitive=1`` (set by FuseOps) or
    ``global_symbol``.
    """

    _bind_fields = ("type_params", "params")
    params: tuple
    body: object
    ret_type: object
    type_params: tuple
    attrs: object

    def __init__(self, params, body, ret_type=None, type_params=None, attrs=None, span=None):
        params = tuple(params)
        for i, p in enumerate(params):
            if not isinstance(p, Var):
                raise IrlabError(f"function parameter {i} must be a relay.Var, "
                                 f"got {type(p).__name__}")
        if attrs is not None and not isinstance(attrs, DictAttrs):
            attrs = DictAttrs(attrs)
        super().__init__(span, params, expect_expr(body, "function body"), ret_type,
                         tuple(type_params or ()), attrs)

    def __call__(self, *args):
        return Call(self, args)

    def with_attr(self, key, value) -> "Function":
        attrs = (self.attrs or DictAttrs()).with_attr(key, value)
        return self.with_fields(attrs=attrs)

    def get_attr(self, key, default=None):
        return default if self.attrs is None else self.attrs.get(key, default)

    def astext(self, show_meta_data=True, annotate=None) -> str:
        from irlab.relay.printer import astext

        return astext(self, show_meta_data=show_meta_data)

    def __str__(self):
        from irlab.relay.printer import pretty_print

        return pretty_print(self)

    __repr__ = __str__
def is_primitive(func) -> bool:
    """A fused kernel (attr ``Primitive`` = 1, set by FuseOps and PartitionGraph): lowered to
    one PrimFunc or external module and called as one op; passes leave its body alone."""
    return isinstance(func, Function) and int(func.get_attr("Primitive", 0) or 0) == 1


def is_reshape_only(func) -> bool:
    """A fused function that only reshapes its input (attr ``relay.reshape_only``, set by
    FuseOps when every call in it is a ``TReshapeOp``): the graph codegen makes it a
    ``__nop`` whose output shares the input's storage, as TVM's ``IsReshapeOnly``."""
    return is_primitive(func) and int(func.get_attr("relay.reshape_only", 0) or 0) == 1
