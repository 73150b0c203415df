"""TVMScript forms TVM v0.13's own scripts use: augmented stores, root allocations between
handle matches, head variables, ``dtype=`` keywords and TVM's opaque builtins."""

import numpy as np

from irlab.script import tir as T
from irlab.tir import expr as E
from irlab.tir.interpreter import run as run_prim_func


@T.prim_func
def matmul_aug(a: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (4, 4), "float32")
    B = T.alloc_buffer((4, 4), "float32")
    C = T.match_buffer(c, (4, 4), "float32")
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.sqrt(A[vi, vj], dtype="float32")
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] += T.if_then_else(vk < 4, B[vi, vk], T.float32(0), dtype="float32")


def test_augmented_store_and_interleaved_root_alloc_run():
    a = np.random.default_rng(0).uniform(0, 4, (4, 4)).astype("float32")
    c = np.zeros((4, 4), "float32")
    run_prim_func(matmul_aug, a, c)
    np.testing.assert_allclose(c, np.repeat(np.sqrt(a).sum(1, keepdims=True), 4, 1), rtol=1e-5)
    assert [b.name for b in matmul_aug.body.block.alloc_buffers] == ["B"]


def test_opaque_builtins_and_tvm_keyword_forms():
    x = E.Var("x", "float32")
    assert T.acosh(x).op == "tir.acosh" and T.atan2(x, x).dtype == "float32"
    assert T.isnan(x).dtype == "bool" and T.likely(x > 0, dtype="bool").dtype == "bool"
    call = T.call_extern("impl", x, dtype="")
    assert call.dtype == "void" and call.args[0] == "impl"
    frag = T.tvm_fill_fragment(x, 16, 16, 16, 0, 0.0, dtype="handle")
    assert frag.op == "tir.tvm_fill_fragment" and frag.dtype == "handle"


@T.prim_func
def rank0(a: T.handle) -> None:
    S = T.Buffer((4,), "float32")  # a head declaration (no storage), before the handle match
    A = T.match_buffer(a, (), "float32")
    B = T.alloc_buffer((), "float32")
    with T.block("copy"):
        T.reads(A[()])
        T.writes(B[()])
        B[()] = A[()]
    A[()] = B[()] + T.float32(1)


def test_rank0_buffers_print_as_python_and_roundtrip():
    from irlab.ir import assert_structural_equal
    from irlab.script import from_source

    text = rank0.script()
    assert "A[()]" in text and "[]" not in text
    assert_structural_equal(rank0, from_source(text), map_free_vars=True)


def test_lower_case_builtins_cast_ramp_broadcast_assume_ret_boolean():
    """TVM's lower-case TVMScript spellings parse to the nodes their capitalised forms make,
    and the functions print back to equal ones."""
    from irlab.ir import structural_equal
    from irlab.script import from_source

    @T.prim_func
    def cast_and_vectors(A: T.Buffer((8,), "int8"), B: T.Buffer((8,), "int32")):
        T.evaluate(T.assume(A[0] == T.int8(5)))
        for i in range(8):
            B[i] = T.cast(A[i], "int32") + T.cast(B[i], "int32")
        B[T.ramp(0, 1, 4)] = T.broadcast(7, 4)

    @T.prim_func
    def takes_boolean(a: T.boolean):
        T.evaluate(T.ret(a))

    body = cast_and_vectors.body
    text = cast_and_vectors.script()
    assert "B[i] = T.Cast(\"int32\", A[i]) + B[i]" in text, text  # no cast of an int32
    assert "T.Ramp(0, 1, 4)" in text and "T.Broadcast(7, 4)" in text, text
    assert "tir.assume" in text or "T.assume" in text, text
    assert takes_boolean.params[0].dtype == "bool"
    for func in (cast_and_vectors, takes_boolean):
        assert structural_equal(from_source(func.script()), func)
    assert body is not None


def test_pointer_type_annotations_are_handles():
    import pytest

    from irlab.errors import ParseError
    from irlab.ir import structural_equal
    from irlab.script import from_source

    @T.prim_func
    def copy_through_ptr(x: T.handle("float32"), y: T.handle("float32", "global")):
        X = T.decl_buffer((4,), "float32", data=x)
        Y = T.decl_buffer((4,), "float32", data=y)
        p: T.handle("float32") = T.address_of(X[0], dtype="handle")
        for i in range(4):
            Y[i] = X[i] * T.float32(2)

    assert [v.dtype for v in copy_through_ptr.params] == ["handle", "handle"]
    assert structural_equal(from_source(copy_through_ptr.script()), copy_through_ptr)
    with pytest.raises(ParseError, match="dtype must be a string"):
        @T.prim_func
        def bad(x: T.handle(3)):
            T.evaluate(0)


def test_env_thread_and_launch_thread_roundtrip_as_thread_extent_attrs():
    from irlab.ir import structural_equal
    from irlab.script import from_source
    from irlab.tir import stmt as S

    @T.prim_func
    def launched(a: T.handle, b: T.Buffer((64, 4), "float32")):
        tx = T.env_thread("threadIdx.x")
        A = T.match_buffer(a, (64, 4), "float32")
        bx = T.launch_thread("blockIdx.x", 64)
        for j in range(2):
            with T.launch_thread(tx, 2):
                b[bx, j * 2 + tx] = A[bx, j * 2 + tx]
        T.launch_thread(tx, 4)
        T.evaluate(b[bx, tx])

    outer = launched.body
    assert isinstance(outer, S.AttrStmt) and outer.attr_key == "thread_extent"
    assert outer.node.thread_tag == "blockIdx.x" and outer.value.value == 64
    inner = outer.body.seq[0].body
    assert inner.node.var is outer.body.seq[1].node.var  # one env_thread, launched twice
    assert inner.node.dom.extent.value == 2 and outer.body.seq[1].node.dom.extent.value == 4
    text = launched.script()
    assert 'T.env_thread("threadIdx.x")' in text and "T.launch_thread(" in text, text
    assert structural_equal(from_source(text), launched)


def test_comm_reducer_attr_and_reinterpret_roundtrip():
    from irlab.ir import structural_equal
    from irlab.script import from_source

    @T.prim_func
    def allreduce(a: T.Buffer((128,), "float32"), idx: T.Buffer((128,), "int32")):
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 128)
        with T.attr(T.comm_reducer(lambda x0, x1, y0, y1: (T.Select(x1 >= y1, x0, y0),
                                                           T.max(x1, y1)),
                                   [T.int32(-1), T.min_value("float32")]),
                    "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.reinterpret("handle", T.uint64(0)))

    reducer = allreduce.body.body.node
    assert [v.dtype for v in reducer.lhs] == ["int32", "float32"]
    assert [v.name_hint for v in reducer.rhs] == ["y0", "y1"]
    assert allreduce.body.body.value.op == "tir.reinterpret"
    assert allreduce.body.body.value.dtype == "handle"
    text = allreduce.script()
    assert "T.comm_reducer(lambda x0, x1, y0, y1:" in text, text
    assert structural_equal(from_source(text), allreduce)


def test_var_used_only_by_a_decl_buffer_is_declared_when_printed():
    from irlab.ir import structural_equal
    from irlab.script import from_source

    @T.prim_func
    def shaped():
        size = T.int32()
        buf = T.decl_buffer(shape=[size], dtype="float32")
        T.evaluate(buf[0])

    @T.prim_func
    def offset():
        off = T.int32()
        buf = T.decl_buffer(shape=[1], dtype="float32", elem_offset=off)
        T.evaluate(buf[0])

    for func, decl in ((shaped, "size = T.int32()"), (offset, "off = T.int32()")):
        text = func.script()
        assert decl in text, text
        assert structural_equal(from_source(text), func, map_free_vars=True)  # size is free


def test_let_binding_a_declared_variable_roundtrips():
    from irlab.ir import structural_equal
    from irlab.script import from_source
    from irlab.tir import stmt as S

    @T.prim_func
    def rebind(a: T.Buffer((2,), "int32")):
        y = T.int32()
        with T.LetStmt(y + 1) as x:  # y is read here, then bound below
            with T.LetStmt(5, var=y):
                a[0] = x + y
        a[1] = T.Let(y * 2, where={y: 3})

    outer = rebind.body.seq[0]
    assert isinstance(outer.body, S.LetStmt) and outer.body.var is outer.value.a
    text = rebind.script()
    assert "y = T.int32()" in text and "var=y" in text, text
    assert structural_equal(from_source(text), rebind, map_free_vars=True)


def test_string_strides_and_tuple_shape_vars_roundtrip():
    from irlab.ir import structural_equal
    from irlab.script import from_source

    @T.prim_func
    def strided(a: T.handle, b: T.handle):
        m, n = T.int32(), T.int32()
        A = T.match_buffer(a, (m, n), strides=("A_s0", "A_s1"))
        B = T.match_buffer(b, (m,))
        for i in range(m):
            A2 = T.Buffer((A.strides[0] * m,), data=A.data, strides=("A2_s0",))
            B[i] = A2[i * A.strides[0]]

    A = strided.buffer_map[strided.params[0]]
    assert [s.name_hint for s in A.strides] == ["A_s0", "A_s1"]
    text = strided.script()
    assert "data=A.data" in text and "A2_s0 = T.int32()" in text, text
    assert structural_equal(from_source(text), strided, map_free_vars=True)


def test_buffer_declared_without_data_prints_as_its_own_declaration():
    from irlab.ir import structural_equal
    from irlab.script import from_source

    @T.prim_func
    def scratch(a: T.Buffer((4,), "float32")):
        tmp = T.Buffer((4,), "float32", scope="local")
        view = T.Buffer((2, 2), "float32", data=tmp.data, scope="local")
        for i in range(4):
            tmp[i] = a[i] * T.float32(2)
        a[0] = view[1, 1]

    text = scratch.script()
    assert 'tmp = T.Buffer((4,), scope="local")' in text, text
    assert "data=tmp.data" in text, text
    assert structural_equal(from_source(text), scratch, map_free_vars=True)


def test_module_attrs_roundtrip():
    from irlab.script import from_source
    from irlab.script import ir as I

    @I.ir_module
    class Module:
        I.module_attrs({"attr": 10, "name": "x"})

        @T.prim_func
        def f(A: T.Buffer((4,), "int32")):
            A[0] = 1

    assert dict(Module.attrs.as_dict()) == {"attr": 10, "name": "x"}
    text = Module.script()
    assert "I.module_attrs({'attr': 10, 'name': 'x'})" in text, text
    again = from_source(text)
    assert dict(again.attrs.as_dict()) == {"attr": 10, "name": "x"}

    @I.ir_module
    class Plain:
        @T.prim_func
        def g(A: T.Buffer((4,), "int32")):
            A[0] = 2

    assert Plain.attrs is None or not dict(Plain.attrs.as_dict())  # nothing left pending


def test_thread_binding_annotations_roundtrip_and_read_by_key():
    from irlab.ir import structural_equal
    from irlab.script import from_source

    @T.prim_func
    def bound(A: T.Buffer((16, 16), "float32")):
        for i in T.thread_binding(16, thread="threadIdx.x"):
            for j in T.thread_binding(16, thread="threadIdx.y", annotations={"k": "v"}):
                A[i, j] = T.float32(1)

    again = from_source(bound.script())
    assert structural_equal(again, bound)
    inner = again.body.body
    assert inner.annotations["k"] == "v" and "k" in inner.annotations
    assert inner.annotations.get("missing") is None and inner.annotations[0] == ("k", "v")
