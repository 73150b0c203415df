"""print -> parse -> print is stable and parse(print(f)) is structurally equal to f."""

import pytest

from irlab import tir
from irlab.errors import ParseError
from irlab.ir import structural_equal
from irlab.script import from_source
from irlab.script import tir as T
from irlab.tir import expr as E
from irlab.tir import stmt as S


def _buf(name, shape, dtype="float32"):
    return tir.decl_buffer(shape, dtype, name)


def _func(params_bufs, body, scalars=()):
    params, bmap = [], {}
    for b in params_bufs:
        p = E.Var(b.name, "handle")
        params.append(p)
        bmap[p] = b
    return tir.PrimFunc(params + list(scalars), body, buffer_map=bmap,
                        attrs={"global_symbol": "main", "tir.noalias": True})


def _loop(var, extent, body, kind=S.ForKind.SERIAL, lo=0, **kw):
    return S.For(var, lo, extent, kind, body, **kw)


def _kinds():
    A, B = _buf("A", (16,)), _buf("B", (16,))
    i, j, k, m = (E.Var(n) for n in "ijkm")
    st = S.BufferStore(B, A[i] + E.FloatImm("float32", 1.5), [i])
    return _func([A, B], S.SeqStmt([
        _loop(i, 16, st),
        _loop(E.Var("i"), 16, S.Evaluate(0), S.ForKind.PARALLEL),
        _loop(j, 16, S.BufferStore(B, A[j], [j]), S.ForKind.VECTORIZED),
        _loop(k, 16, S.BufferStore(B, A[k], [k]), S.ForKind.UNROLLED),
        _loop(m, 12, S.BufferStore(B, A[m], [m]), lo=4),
        _loop(E.Var("m"), 4, S.Evaluate(1), annotations={"pragma_unroll": 1}),
    ]))


def _exprs():
    A, B = _buf("A", (16,)), _buf("B", (16,), "int32")
    n = E.Var("n")
    i, x = E.Var("i"), E.Var("x")
    def f():  # a fresh load each time: shared sub-expressions are not what a parser makes
        return A[i]

    vals = [
        S.BufferStore(A, T.exp(f()) + T.sqrt(f()) - T.max(f(), 0.0) * T.min(f(), 1.0), [i]),
        S.BufferStore(A, E.Cast("float32", B[i]) / 3.0, [i]),
        S.BufferStore(B, E.FloorDiv(B[i], 3) + E.FloorMod(B[i], 4) + E.Div(B[i], 2)
                      + E.Mod(B[i], 5) - (B[i] - 1) * (B[i] + 2), [i]),
        S.BufferStore(A, E.Select(E.And(i < n, E.Not(i == 3)), f(), -f()), [i]),
        S.BufferStore(A, tir.if_then_else(E.Or(i >= 2, i != n), f(), 0.0), [i]),
        S.BufferStore(B, E.Let(x, i + 1, x * x), [i]),
        S.BufferStore(A, tir.call_extern("float32", "my_fn", f(), 2), [i]),
        S.Evaluate(tir.call_packed("tvm.fn", i)),
        S.BufferStore(B, E.IntImm("int32", -3) + E.Cast("int32", E.IntImm("int64", 7)), [i]),
    ]
    return _func([A, B], _loop(i, 16, S.SeqStmt(vals)), scalars=[n])


def _scoped():
    A = _buf("A", (16,))
    i, n = E.Var("i"), E.Var("n")
    data = E.Var("tmp", "handle")
    tmp = tir.decl_buffer((16,), "float32", "tmp_buf", data=data)
    i2 = E.Var("i")
    inner = S.SeqStmt([_loop(i, 16, S.BufferStore(tmp, A[i], [i])),
                       _loop(i2, 16, S.BufferStore(A, tmp[i2] + 1.0, [i2]))])
    n2 = E.Var("n")
    let = S.LetStmt(n2, 4, S.IfThenElse(n2 > 2, S.BufferStore(A, 0.0, [n2]),
                                        S.BufferStore(A, 1.0, [n2])))
    w = S.While(E.IntImm("bool", 0), S.Evaluate(0))
    assert_ = S.AssertStmt(n < 8, "too big", S.BufferStore(A, 2.0, [n]))
    return _func([A], S.SeqStmt([S.Allocate(data, "float32", [16], True, inner),
                                 S.LetStmt(n, 3, assert_), let, w]))


def _vector():
    A, B = _buf("A", (16,)), _buf("B", (16,))
    i = E.Var("i")
    st = S.BufferStore(B, A[E.Ramp(i * 4, 1, 4)] + E.Broadcast(E.FloatImm("float32", 2.0), 4),
                       [E.Ramp(i * 4, 1, 4)])
    return _func([A, B], _loop(i, 4, st))


def _blocks():
    A, C = _buf("A", (16, 16)), _buf("C", (16,))
    i, j = E.Var("i"), E.Var("j")
    vi, vj = E.Var("vi"), E.Var("vj")
    tmp = _buf("tmp", (16,))
    sub = _buf("sub", (4,))
    iv_i = S.IterVar(tir.Range(0, 16), vi, S.IterVar.DataPar)
    iv_j = S.IterVar(tir.Range(0, 16), vj, S.IterVar.CommReduce)
    init = S.BufferStore(C, 0.0, [vi])
    body = S.SeqStmt([S.BufferStore(tmp, A[vi, vj], [vj]),
                      S.BufferStore(C, C[vi] + tmp[vj] + sub[0], [vi])])
    match = tir.MatchBufferRegion(sub, tir.BufferRegion(A, [tir.Range.from_min_extent(vi, 1),
                                                            tir.Range.from_min_extent(0, 4)]))
    block = S.Block([iv_i, iv_j], [tir.BufferRegion(A, [tir.Range.from_min_extent(vi, 1),
                                                       tir.Range.from_min_extent(0, 16)])],
                    [tir.BufferRegion(C, [tir.Range.from_min_extent(vi, 1)])], "C", body,
                    init=init, alloc_buffers=[tmp], match_buffers=[match],
                    annotations={"meta": 1})
    realize = S.BlockRealize([i, j * 1 + 0 if False else j], i < 15, block)
    vk = E.Var("vk")
    iv_k = S.IterVar(tir.Range(0, 4), vk, S.IterVar.DataPar)
    blk2 = S.Block([iv_k], [], [tir.BufferRegion(C, [tir.Range.from_min_extent(vk * 4, 4)])],
                   "D", S.BufferStore(C, 1.0, [vk * 4]))
    r2 = S.BlockRealize([E.FloorDiv(i, 4)], True, blk2)
    i2 = E.Var("i")
    r2 = S.BlockRealize([E.FloorDiv(i2, 4)], True, blk2)
    root = S.Block([], [], [], "root", S.SeqStmt([
        _loop(i, 16, _loop(j, 16, realize)), _loop(i2, 16, r2)]))
    return _func([A, C], S.BlockRealize([], True, root))


@pytest.mark.parametrize("make", [_kinds, _exprs, _scoped, _vector, _blocks])
def test_round_trip(make):
    f = make()
    text = f.script()
    g = from_source(text)
    assert g.script() == text
    assert structural_equal(g, f), text


def test_block_prints_spatial_and_where():
    text = _blocks().script()
    assert "T.where(i < 15)" in text
    assert 'vk = T.axis.spatial(4, i // 4)' in text
    assert "T.reads(A[vi, 0:16])" in text
    assert "sub = T.match_buffer(A[vi, 0:4], (4,))" in text
    assert "for i in T.parallel(16):" in _kinds().script()
    assert "T.Ramp(i * 4, 1, 4)" in _vector().script()


def test_inferred_regions():
    f = from_source('''
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            for k in range(4):
                B[vi] = B[vi] + A[vi, k * 2]
''')
    text = f.script()
    assert "T.reads(B[vi], A[vi, 0:7])" in text
    assert "T.writes(B[vi])" in text



def test_int64_block_regions_round_trip():
    """A region ``X[vi]`` over an int64 index has an int64 extent, inferred or parsed."""
    f = from_source('''
@T.prim_func
def f(x: T.handle, y: T.handle):
    n = T.int64()
    X = T.match_buffer(x, (n,), "float32")
    Y = T.match_buffer(y, (n,), "float32")
    for i in range(n):
        with T.block("Y"):
            vi = T.axis.spatial(n, i)
            Y[vi] = T.exp(X[vi])
''')
    assert structural_equal(from_source(f.script()), f)


@pytest.mark.parametrize("src, line, what", [
    ("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    for i in range(4):\n"
     "        A[i] = Q[i]\n", 4, "undefined name 'Q'"),
    ("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    for i in foo(4):\n"
     "        A[i] = 1.0\n", 3, "a loop must iterate"),
    ("@T.prim_func\ndef f(A):\n    pass\n", 2, "needs a type annotation"),
    ("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[0, 1] += 1.0\n", 3,
     "dimensions"),  # ``+=`` is a store (TVM's form); its index is still checked
    ("@T.prim_func\ndef f(A: T.Buffer((4, 4), 'float32')):\n    A[0] = 1.0\n", 3,
     "dimensions"),
])
def test_errors_have_lines(src, line, what):
    with pytest.raises(ParseError) as info:
        from_source(src)
    assert info.value.line == line
    assert what in str(info.value)
    assert f"<script>:{line}:" in str(info.value)


def test_decorator_error_reports_file_line():
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def bad(A: T.Buffer((4,), "float32")):
            A[0] = nope  # noqa: F821
    assert "test_script_roundtrip.py" in str(info.value)
    assert "undefined name 'nope'" in str(info.value)


def test_script_keywords_reach_the_printer():
    """PrimFunc.script() reaches the printer through the registry; keywords pass through."""
    from irlab.script import from_source

    src = ('@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n'
           '    for i in range(4):\n        A[i] = T.float32(1)\n')
    func = from_source(src)
    assert func.script(show_meta=True) == func.script()
