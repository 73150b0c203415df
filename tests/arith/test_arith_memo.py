"""The memoized simplifier: results are shared between analyzers by structure up to a renaming
of variables, and never served for other facts, other variables or other buffers."""

from irlab import tir
from irlab.arith import Analyzer
from irlab.ir.structural import structural_equal
from irlab.tir.functor import post_order_visit


def _analyzer(**extents):
    an = Analyzer(memoize=True)
    vs = []
    for name, ext in extents.items():
        v = tir.Var(name)
        an.bind(v, tir.Range(ext))
        vs.append(v)
    return an, vs


def _vars_of(e):
    found = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, tir.Var) else None)
    return found


def test_a_result_found_for_other_variables_is_renamed():
    an1, (i, j) = _analyzer(i=8, j=4)
    first = an1.simplify((i * 4 + j) // 4 + (i * 4 + j) % 4)
    assert structural_equal(first, i + j)
    an2, (p, q) = _analyzer(p=8, q=4)  # another analyzer, other variables, same facts
    second = an2.simplify((p * 4 + q) // 4 + (p * 4 + q) % 4)
    assert structural_equal(second, p + q)
    assert {id(v) for v in _vars_of(second)} == {id(p), id(q)}
    assert an2.rules_fired == an1.rules_fired  # replayed from the first simplification


def test_other_bounds_give_another_result():
    an1, (i, j) = _analyzer(i=8, j=4)
    assert structural_equal(an1.simplify((i * 4 + j) // 4), i)
    an2, (p, q) = _analyzer(p=8, q=5)  # q may reach 4: the division keeps a remainder
    out = an2.simplify((p * 4 + q) // 4)
    assert not structural_equal(out, p)
    assert structural_equal(out, p + q // 4)


def test_variable_classes_and_order_are_part_of_the_key():
    an = Analyzer(memoize=True)
    x, y = tir.Var("x"), tir.Var("y")
    n = tir.SizeVar("n")
    an.bind(y, tir.Range(4))
    assert structural_equal(an.simplify(tir.min(x, 0)), tir.min(x, 0))
    assert structural_equal(an.simplify(tir.min(n, 0)), tir.const(0))  # n >= 0
    # the same shape with the bound variable on the other side
    assert structural_equal(an.simplify(y // 4 + x), x)
    assert structural_equal(an.simplify(x // 4 + y), x // 4 + y)


def test_loads_of_other_buffers_are_not_confused():
    an, (i,) = _analyzer(i=4)
    a = tir.decl_buffer((4,), "int32", "A")
    b = tir.decl_buffer((4,), "int32", "B")
    out_a = an.simplify(a[i] + 0)
    out_b = an.simplify(b[i] + 0)
    assert out_a.buffer is a and out_b.buffer is b


def test_a_rebound_variable_is_simplified_again():
    an, (i,) = _analyzer(i=4)
    assert structural_equal(an.simplify(i // 4), tir.const(0))
    an.bind(i, tir.Range(8))
    assert structural_equal(an.simplify(i // 4), i // 4)
    an.bind(i, i * 0 + 2)  # a value: not memoized, substituted
    assert structural_equal(an.simplify(i // 4), tir.const(0))


def test_a_renamed_result_reuses_the_parts_of_its_own_input():
    a = tir.decl_buffer((4,), "float32", "A")
    an1, (i, j) = _analyzer(i=4, j=4)
    e1 = a[i] * a[j]
    out1 = an1.simplify(e1)
    assert out1.a is e1.a and out1.b is e1.b  # a fresh result reuses the input's loads
    an2, (p, q) = _analyzer(p=4, q=4)
    e2 = a[p] * a[q]
    out2 = an2.simplify(e2)  # a hit, renamed: the loads are this input's, not copies
    assert out2 is not out1 and out2.a is e2.a and out2.b is e2.b


def test_without_memoize_each_result_is_built_on_its_own_input():
    a = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i")
    an = Analyzer()
    an.bind(i, tir.Range(4))
    e1, e2 = a[i] * a[i + 0], a[i] * a[i + 0]  # equal, not the same object
    out1, out2 = an.simplify(e1), an.simplify(e2)
    assert structural_equal(out1, out2)
    assert out1.a is e1.a and out2.a is e2.a  # the second is found in the cache, not shared
    memo = Analyzer(memoize=True)
    memo.bind(i, tir.Range(4))
    assert memo.simplify(e1) is memo.simplify(e2)  # memoizing: the remembered result


def test_a_full_cache_is_emptied_and_results_stay_right(monkeypatch):
    from irlab.arith import analyzer as A

    monkeypatch.setattr(A, "_SHARED_CAPACITY", 2)
    monkeypatch.setattr(A, "_SHARED_SIMPLIFY", {})
    monkeypatch.setattr(A, "_SHARED_PROVE", {})
    an, (i,) = _analyzer(i=8)
    for c in range(1, 6):
        assert structural_equal(an.simplify((i * c + 0) // c), i)
        assert len(A._SHARED_SIMPLIFY) <= 2
