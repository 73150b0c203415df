"""Node model, dtypes, types, attrs and the op registry."""

import pickle

import numpy as np
import pytest

from irlab.errors import IrlabError, OpNotRegisteredError
from irlab.ir import (Attrs, DictAttrs, FuncType, IncompleteType, Op, OpPattern, PrimType,
                      TensorType, TupleType, parse_dtype, to_numpy_dtype)
from irlab.ir.node import Node


class Point(Node):
    _value_semantics = True
    x: int
    y: int = 0


def test_fields_declared_once_give_slots_constructor_and_copies():
    p = Point(1)
    assert Point._fields == ("x", "y")
    assert (p.x, p.y) == (1, 0)
    assert not hasattr(p, "__dict__")
    with pytest.raises(AttributeError):
        p.x = 3
    q = p.with_fields(y=5)
    assert (q.x, q.y) == (1, 5) and p.y == 0
    assert p.with_fields(x=1) is p  # nothing changed -> same object
    assert Point(1, 0) == p and hash(Point(1, 0)) == hash(p)
    assert pickle.loads(pickle.dumps(q)) == q
    with pytest.raises(TypeError):
        Point(1, z=2)


def test_dtypes():
    assert str(parse_dtype("float32")) == "float32"
    assert parse_dtype("float32x4").lanes == 4
    assert parse_dtype("bool").bits == 1
    assert to_numpy_dtype("int64") == np.int64
    assert str(parse_dtype(np.float16)) == "float16"
    for bad in ("float", "float31", "tensor", "int7"):
        with pytest.raises(IrlabError):
            parse_dtype(bad)


def test_types_compare_by_value_and_print_as_tvm():
    t = TensorType((1, 3), "float32")
    assert t == TensorType([1, 3], np.float32)
    assert hash(t) == hash(TensorType((1, 3)))
    assert str(t) == "Tensor[(1, 3), float32]"
    assert str(TensorType((3,), "int64")) == "Tensor[(3), int64]"
    assert str(TensorType((), "float32")) == "float32"
    assert str(TupleType([t, TensorType((2,))])) == "(Tensor[(1, 3), float32], Tensor[(2), float32])"
    assert str(TupleType([t])) == "(Tensor[(1, 3), float32],)"
    assert str(FuncType([t], t)) == "fn (Tensor[(1, 3), float32]) -> Tensor[(1, 3), float32]"
    assert str(PrimType("int32")) == "int32"
    assert IncompleteType() != IncompleteType()
    with pytest.raises(IrlabError):
        TensorType((1, -2))
    with pytest.raises(IrlabError):
        TensorType(("a",))


class PadLike(Attrs):
    _type_key = "test.PadLikeAttrs"
    pad_width: tuple = None
    value: float = 0.0
    mode: str = "constant"


def test_attrs_normalize_and_report_non_defaults():
    a = PadLike(pad_width=[[0, 1], [2, 3]], value=np.float32(1.5))
    assert a.pad_width == ((0, 1), (2, 3)) and isinstance(a.value, float)
    assert a == PadLike(pad_width=((0, 1), (2, 3)), value=1.5)
    assert a.non_default_items() == [("pad_width", ((0, 1), (2, 3))), ("value", 1.5)]
    assert a["mode"] == "constant" and a.keys() == ["pad_width", "value", "mode"]
    with pytest.raises(IrlabError, match="no attribute 'padding'"):
        PadLike(padding=1)
    d = DictAttrs({"Primitive": 1, "Composite": "x"})
    assert d == DictAttrs({"Composite": "x", "Primitive": 1})
    assert d["Primitive"] == 1 and "Composite" in d and d.get("nope") is None


def test_op_registry():
    op = Op.get("add")
    assert op is Op.get("add")
    assert op.num_inputs == 2 and [a.name for a in op.arguments] == ["lhs", "rhs"]
    assert op.pattern == OpPattern.BROADCAST
    assert Op.get("exp").pattern == OpPattern.ELEMWISE
    assert op.support_level == 1
    assert pickle.loads(pickle.dumps(op)) is op
    with pytest.raises(OpNotRegisteredError, match="did you mean"):
        Op.get("ad")
    op.set_attr("TestEntry", 1, plevel=10)
    op.set_attr("TestEntry", 2, plevel=5)  # lower priority does not override
    assert op.get_attr("TestEntry") == 1
    op.reset_attr("TestEntry")
    assert op.get_attr("TestEntry") is None
