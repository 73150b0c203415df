"""Commutative reductions: the ``Reduce`` PrimExpr, ``comm_reducer`` and ``sum``/``max``/``min``.

As in TVM (python/tvm/tir/op.py ``comm_reducer``), a reducer called with an axis (an IterVar or
a list of them) builds ``Reduce`` nodes; called with two plain values (``te.max(x, 0.0)``) it
simply combines them.
"""

from __future__ import annotations

from irlab.errors import TIRError
from irlab.ir.node import Node
from irlab.tir import op as _op
from irlab.tir.expr import FloatImm, IntImm, PrimExpr, Var, _DerivedDtype, convert
from irlab.tir.functor import substitute
from irlab.tir.stmt import IterVar


class CommReducer(Node):
    """A commutative reducer: ``result`` combines the accumulators ``lhs`` with the new values
    ``rhs``; ``identity_element`` starts each accumulator. All are tuples (one per value)."""

    _bind_fields = ("lhs", "rhs")
    _non_structural = ("span",)
    lhs: tuple
    rhs: tuple
    result: tuple
    identity_element: tuple
    span: object

    def __init__(self, lhs, rhs, result, identity_element, span=None):
        super().__init__(tuple(lhs), tuple(rhs), tuple(convert(r) for r in result),
                         tuple(convert(e) for e in identity_element), span)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __call__(self, a, b) -> tuple:
        """The combined values for accumulators ``a`` and new values ``b`` (sequences)."""
        mapping = dict(zip(self.lhs, a))
        mapping.update(zip(self.rhs, b))
        return tuple(substitute(r, mapping) for r in self.result)


class Reduce(_DerivedDtype):
    """Value ``value_index`` of reducing ``source`` with ``combiner`` over the ``axis`` IterVars
    where ``condition`` holds; ``init`` (may be empty) replaces the identity as start value."""

    combiner: CommReducer
    source: tuple
    axis: tuple
    condition: PrimExpr
    value_index: int
    init: tuple
    span: object

    def __init__(self, combiner, source, axis, condition, value_index, init=(), span=None):
        source = tuple(convert(s) for s in source)
        super().__init__(combiner, source, tuple(axis), convert(condition), int(value_index),
                         tuple(convert(i) for i in init or ()), span)
        self._set_dtype(source[self.value_index].dtype)

    def astext(self):
        from irlab.tir.text import expr_to_text

        axes = ", ".join(iv.var.name_hint for iv in self.axis)
        src = ", ".join(expr_to_text(s) for s in self.source)
        return f"reduce({src}, axis=[{axes}], value_index={self.value_index})"


def _is_array(x):
    return isinstance(x, (list, tuple))


def comm_reducer(fcombine, fidentity, name="reduce"):
    """A reducer ``f(expr, axis, where=None, init=None)`` from ``fcombine(lhs, rhs)`` and
    ``fidentity(dtype, ...)``; ``expr`` may be a tuple to reduce several values together."""
    code = fcombine.__code__
    if code.co_argcount != 2:
        raise TIRError(f"the combiner of {name} must take two arguments")

    def _reduce_directly(*args):
        num = len(args)
        if num == 3 and args[2] is None:  # where=None given positionally
            num = 2
        res = args[0]
        for i in range(num - 1):
            res = fcombine(res, args[i + 1])
        return res

    def _make_reduce(expr, axis, where=None, init=None):
        if _is_array(expr):
            exprs = [convert(e) for e in expr]
            dtypes = [e.dtype for e in exprs]
            lhs = [Var(f"{code.co_varnames[0]}_{i}", d) for i, d in enumerate(dtypes)]
            rhs = [Var(f"{code.co_varnames[1]}_{i}", d) for i, d in enumerate(dtypes)]
            result = fcombine(lhs, rhs)
            identity = fidentity(*dtypes)
            if init is not None:
                if not _is_array(init) or len(init) != len(exprs):
                    raise TIRError(f"{name}: init must give one value per reduced expression")
                init = [_check_init(i) for i in init]
        else:
            exprs = [convert(expr)]
            dtype = exprs[0].dtype
            lhs = [Var(code.co_varnames[0], dtype)]
            rhs = [Var(code.co_varnames[1], dtype)]
            result = [fcombine(lhs[0], rhs[0])]
            identity = [fidentity(dtype)]
            init = [_check_init(init)] if init is not None else []
        combiner = CommReducer(lhs, rhs, result, identity)
        axis = list(axis) if _is_array(axis) else [axis]
        for a in axis:
            if not isinstance(a, IterVar):
                raise TIRError(f"{name}: axis must be IterVars (te.reduce_axis), got {a!r}")
        where = convert(True) if where is None else convert(where)
        outputs = tuple(Reduce(combiner, exprs, axis, where, i, init or ())
                        for i in range(len(exprs)))
        return outputs[0] if len(outputs) == 1 else outputs

    def reducer(expr, axis, where=None, init=None, *args):
        if isinstance(axis, IterVar) or _is_array(axis):
            if args:
                raise TIRError(f"{name}: too many arguments for a reduction")
            return _make_reduce(expr, axis, where, init)
        # Not an axis: combine the given values elementwise (te.max(x, 0.0)).
        if where is None:
            return _reduce_directly(expr, axis)
        if init is None:
            return _reduce_directly(expr, axis, where)
        return _reduce_directly(expr, axis, where, init, *args)

    reducer.__name__ = name
    reducer.__doc__ = (f"Reduce ``expr`` over ``axis`` with {name} (``where``: condition, "
                       f"``init``: start value), or {name} of plain values.")
    return reducer


def _check_init(value):
    value = convert(value)
    from irlab.te.tensor import ProducerLoad

    if not isinstance(value, (ProducerLoad, IntImm, FloatImm)):
        raise TIRError(f"a reduction init must be a constant or a tensor element, got {value!r}")
    return value


# pylint: disable=redefined-builtin
sum = comm_reducer(lambda x, y: x + y, lambda t: _op.const(0, t), name="sum")  # noqa: A001
min = comm_reducer(lambda x, y: _op.min(x, y), _op.min_identity, name="min")  # noqa: A001
max = comm_reducer(lambda x, y: _op.max(x, y), _op.max_identity, name="max")  # noqa: A001
