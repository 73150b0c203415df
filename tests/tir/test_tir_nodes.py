"""TIR nodes: operator dtype rules (TVM's BinaryOpMatchTypes), folding, bool refusal."""

import pytest

from irlab import tir
from irlab.errors import TIRError


def test_python_constants_follow_tvm_conversion():
    i32, i64 = tir.Var("i"), tir.Var("n", "int64")
    f32, f16 = tir.Var("x", "float32"), tir.Var("h", "float16")
    assert (i32 + 1).dtype == "int32"
    assert (i64 + 1).dtype == "int64"          # int32 literal promoted to the wider int
    assert (f32 * 2).dtype == "float32"        # int literal cast to the float side
    assert (f16 + 1).dtype == "float16"
    assert (f16 + 1.0).dtype == "float32"      # float32 literal: floats promote to the wider
    assert (tir.Var("b", "int8") + 1).dtype == "int32"
    assert (tir.Var("u", "uint32") + tir.Var("s", "int32")).dtype == "uint32"
    assert (i32 + f32).dtype == "float32"
    assert (i32 < 3).dtype == "bool"
    assert isinstance(1 - i32, tir.Sub) and (1 - i32).a.value == 1


def test_division_operators():
    i, x = tir.Var("i"), tir.Var("x", "float32")
    assert isinstance(i // 4, tir.FloorDiv)
    assert isinstance(i % 4, tir.FloorMod)
    assert isinstance(x / 2, tir.Div) and (x / 2).dtype == "float32"
    with pytest.raises(TIRError, match="ambiguous"):
        i / 2
    assert isinstance(tir.truncdiv(i, 4), tir.Div)
    assert isinstance(tir.truncmod(i, 4), tir.Mod)


def test_constant_folding_as_tvm():
    i = tir.Var("i")
    assert (tir.const(3) + tir.const(4)).value == 7
    assert (tir.const(7) // tir.const(-2)).value == -4
    assert tir.truncdiv(tir.const(7), tir.const(-2)).value == -3
    assert (tir.const(2 ** 31 - 1) + 1).value == -(2 ** 31)  # folding wraps like C
    assert i + 0 is i and i * 1 is i and 1 * i is i and i - 0 is i
    assert isinstance(i + 1, tir.Add)
    assert (i * 0).value == 0
    assert tir.all(tir.const(True), i < 3).same_as  # true && x => x
    assert isinstance(tir.all(tir.const(True), i < 3), tir.LT)
    with pytest.raises(TIRError, match="zero"):
        i // 0


def test_bitwise_literal_takes_other_side_dtype():
    n = tir.Var("n", "int64")
    assert (n << 2).dtype == "int64" and (n & 3).op == "tir.bitwise_and"
    assert (~n).op == "tir.bitwise_not"
    with pytest.raises(TIRError):
        tir.Var("x", "float32") & 1


def test_bool_is_refused():
    i = tir.Var("i")
    with pytest.raises(TIRError, match="tir.all / tir.any"):
        bool(i < 3)
    with pytest.raises(TIRError):
        if i > 0:
            pass


def test_equal_op_identity_semantics():
    i, j = tir.Var("i"), tir.Var("i")
    assert bool(i == i) and not bool(i == j) and bool(i != j)
    assert {i: 1, j: 2}[j] == 2 and i in [i] and j not in [i]
    eq = tir.convert(i == j)
    assert isinstance(eq, tir.EQ) and eq.a is i and eq.b is j
    assert isinstance(tir.Select(i == 1, i, j).condition, tir.EQ)
    assert isinstance((i != 2).asobject(), tir.NE)
    assert hash(i) == object.__hash__(i) != hash(j)  # identity hash (object's, in C)


def test_nodes_and_constructors():
    i = tir.Var("i")
    assert tir.Add(i, 1).b.dtype == "int32"
    with pytest.raises(TIRError, match="different dtypes"):
        tir.Add(i, tir.Var("x", "float32"))
    with pytest.raises(TIRError, match="does not fit"):
        tir.IntImm("int8", 300)
    assert tir.FloatImm("float32", 0.1).value == pytest.approx(0.1, rel=1e-7)
    assert tir.Ramp(i, 1, 4).dtype == "int32x4"
    assert tir.Broadcast(tir.const(1.0), 8).dtype == "float32x8"
    assert (tir.Ramp(i, 1, 4) + 1).dtype == "int32x4"
    assert tir.Cast("float32", i).dtype == "float32"
    assert tir.cast(tir.const(3), "float32").value == 3.0
    assert tir.exp(tir.Var("x", "float32")).op == "tir.exp"
    assert tir.max_value("int8").value == 127 and tir.min_value("uint8").value == 0
    assert tir.Call("float32", "exp", [tir.const(1.0)]).op == "tir.exp"
    with pytest.raises(TIRError, match="unknown TIR intrinsic"):
        tir.Call("float32", "nope", [])
    assert "i + 1" in repr(i + 1)


def test_seq_stmt_flattens():
    i = tir.Var("i")
    A = tir.decl_buffer((4,), "int32", "A")
    s1, s2, s3 = (tir.BufferStore(A, k, (k,)) for k in range(3))
    seq = tir.SeqStmt([s1, tir.SeqStmt([s2, tir.SeqStmt([s3])])])
    assert seq.seq == (s1, s2, s3)
    assert A[i].dtype == "int32" and isinstance(A[i], tir.BufferLoad)
    with pytest.raises(TIRError, match="dimensions"):
        A[i, i]


def test_buffer_and_prim_func():
    A = tir.decl_buffer((4, 4), "float32", "A")
    assert A.data.dtype == "handle" and A.ndim == 2 and A.strides == ()
    p = tir.Var("a", "handle")
    f = tir.PrimFunc([p], tir.Evaluate(0), buffer_map={p: A})
    assert f.buffer_map[p] is A and list(f.buffer_map.keys()) == [p]
    g = f.with_attr("global_symbol", "main")
    assert g.attrs["global_symbol"] == "main" and f.attrs is None
    assert f.script().startswith("# from tvm.script import tir as T")
    assert "T.func_attr" in g.script()
    r = tir.Range(2, 10)
    assert r.min.value == 2 and r.extent.value == 8
    assert tir.Range.from_min_extent(2, 10).extent.value == 10
