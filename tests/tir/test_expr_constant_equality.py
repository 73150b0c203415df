"""``==`` / ``!=`` of integer constants in a Python bool context compare values, as TVM's
``IntImm.__eq__`` folds to a constant (the MLC course's ``assert A.shape[1] == B.shape[0]``);
other expressions still compare by identity there and build IR elsewhere."""

from irlab import te, tir


def test_int_constants_compare_by_value_in_bool_context():
    A = te.placeholder((128, 64), name="A")
    B = te.placeholder((64, 128), name="B")
    assert A.shape[1] == B.shape[0]
    assert not (A.shape[0] == B.shape[0])
    assert A.shape[0] != B.shape[0] and not (A.shape[1] != B.shape[0])
    assert tir.IntImm("int64", 3) == 3 and tir.IntImm("int32", 3) == tir.IntImm("int64", 3)


def test_symbolic_equality_still_builds_ir_and_is_identity_in_bool_context():
    n = tir.Var("n", "int64")
    eq = n == tir.IntImm("int64", 3)
    assert not bool(eq) and bool(n == n)
    assert isinstance(eq.asobject(), tir.EQ)
