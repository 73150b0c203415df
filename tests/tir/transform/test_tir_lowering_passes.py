"""Each lowering pass on small hand-written PrimFuncs: the expected structure after it."""

import numpy as np
import pytest

from irlab import tir
from irlab.errors import TIRError
from irlab.ir.module import IRModule
from irlab.ir.structural import assert_structural_equal
from irlab.script import tir as T
from irlab.tir import stmt as S
from irlab.tir import transform as tt
from irlab.transform import PassContext, Sequential, get_pass


def _apply(passes, func):
    mod = IRModule({"main": func})
    for p in passes if isinstance(passes, list) else [passes]:
        mod = p(mod)
    return mod["main"]


def _kinds(node):
    found = set()
    tir.post_order_visit(node, lambda n: found.add(type(n).__name__))
    return found


def _same_results(before, after, seed=0):
    rng = np.random.default_rng(seed)
    args = []
    for p in before.params:
        buf = before.buffer_map[p]
        args.append(rng.standard_normal(tuple(int(s.value) for s in buf.shape)).astype(buf.dtype))
    a = [x.copy() for x in args]
    b = [x.copy() for x in args]
    tir.run(before, *a)
    tir.run(after, *b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)


# -- LowerInitBlock -------------------------------------------------------------------------
@T.prim_func
def rowsum(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def rowsum_init_lowered(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(B[vi])
            if vk == 0:
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


def test_lower_init_block():
    after = _apply(tt.LowerInitBlock(), rowsum)
    assert_structural_equal(after, rowsum_init_lowered)
    _same_results(rowsum, after)


def test_lower_init_block_leaves_blocks_without_init():
    mod = IRModule({"main": rowsum_init_lowered})
    assert tt.LowerInitBlock()(mod) is mod


# -- ConvertBlocksToOpaque ------------------------------------------------------------------
@T.prim_func
def opaque_before(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi * 2])
            T.writes(B[vi])
            B[vi] = A[vi * 2]


@T.prim_func
def opaque_after(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            T.reads(A[i * 2])
            T.writes(B[i])
            B[i] = A[i * 2]


def test_convert_blocks_to_opaque():
    after = _apply(tt.ConvertBlocksToOpaque(), opaque_before)
    assert_structural_equal(after, opaque_after)
    _same_results(opaque_before, after)


def test_convert_blocks_to_opaque_needs_lowered_init():
    with pytest.raises(TIRError, match="LowerInitBlock"):
        _apply(tt.ConvertBlocksToOpaque(), rowsum)


# -- LowerOpaqueBlock -------------------------------------------------------------------------
@T.prim_func
def with_alloc(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    C = T.alloc_buffer((4, 4))
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.where(i < 3)
            B[vi, vj] = C[vi, vj] * T.float32(2)


def test_lower_opaque_block_allocates_and_guards():
    opaque = _apply(tt.ConvertBlocksToOpaque(), with_alloc)
    after = _apply(tt.LowerOpaqueBlock(), opaque)
    body = after.body
    assert isinstance(body, S.Allocate) and isinstance(body.body, S.DeclBuffer)
    assert [int(e.value) for e in body.extents] == [4, 4]
    assert body.body.buffer.data is body.buffer_var
    assert not _kinds(after.body) & {"Block", "BlockRealize"}
    assert "IfThenElse" in _kinds(after.body)
    _same_results(with_alloc, after)


def test_lower_opaque_block_needs_opaque_blocks():
    with pytest.raises(TIRError, match="ConvertBlocksToOpaque"):
        _apply(tt.LowerOpaqueBlock(), with_alloc)


# -- CompactBufferAllocation ---------------------------------------------------------------
@T.prim_func
def local_before(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i in range(4):
        with T.block("outer"):
            T.reads(A[i, 0:8])
            T.writes(B[i, 0:8])
            C = T.alloc_buffer((4, 8))
            for j in range(8):
                with T.block("C"):
                    T.reads(A[i, j])
                    T.writes(C[i, j])
                    C[i, j] = A[i, j] + T.float32(1)
            for jo, ji in T.grid(2, 4):
                with T.block("B"):
                    T.reads(C[i, jo * 4 + ji])
                    T.writes(B[i, jo * 4 + ji])
                    B[i, jo * 4 + ji] = C[i, jo * 4 + ji] * T.float32(2)


@T.prim_func
def local_after(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i in range(4):
        with T.block("outer"):
            T.reads(A[i, 0:8])
            T.writes(B[i, 0:8])
            C = T.alloc_buffer((1, 8))
            for j in range(8):
                with T.block("C"):
                    T.reads(A[i, j])
                    T.writes(C[0, j])
                    C[0, j] = A[i, j] + T.float32(1)
            for jo, ji in T.grid(2, 4):
                with T.block("B"):
                    T.reads(C[0, jo * 4 + ji])
                    T.writes(B[i, jo * 4 + ji])
                    B[i, jo * 4 + ji] = C[0, jo * 4 + ji] * T.float32(2)


def test_compact_buffer_allocation():
    after = _apply(tt.CompactBufferAllocation(), local_before)
    assert_structural_equal(after, local_after)
    _same_results(local_before, after)
    lowered = _apply([tt.CompactBufferAllocation(), tt.LowerOpaqueBlock(), tt.FlattenBuffer(),
                      tt.Simplify()], local_before)
    assert "T.allocate([8]" in lowered.script()
    _same_results(local_before, lowered)


@T.prim_func
def window(A: T.Buffer((10,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("outer"):
            C = T.alloc_buffer((10,))
            for k in range(3):
                with T.block("C"):
                    C[i + k] = A[i + k]
            with T.block("B"):
                B[i] = C[i] + C[i + 1] + C[i + 2]


def test_compact_buffer_allocation_shifts_by_region_start():
    after = _apply(tt.CompactBufferAllocation(), window)
    assert after.body.block.body.body.block.alloc_buffers[0].shape[0].value == 3
    assert "C[k] = A[i + k]" in after.script()
    _same_results(window, after)


def test_compact_buffer_allocation_keeps_full_use_and_block_iters():
    mod = IRModule({"main": with_alloc})  # block iter vars: not opaque, nothing to shrink
    assert tt.CompactBufferAllocation()(mod) is mod


# -- FlattenBuffer ----------------------------------------------------------------------------
def _flat_pipeline():
    return [tt.ConvertBlocksToOpaque(), tt.LowerOpaqueBlock(), tt.FlattenBuffer()]


def test_flatten_buffer_row_major():
    after = _apply(_flat_pipeline(), with_alloc)
    text = after.script()
    assert "T.allocate([16]" in text
    assert "[i * 4 + j]" in text
    loads = []
    tir.post_order_visit(after.body, lambda n: loads.append(n)
                         if isinstance(n, (tir.BufferLoad, tir.BufferStore)) else 0)
    assert loads and all(len(n.buffer.shape) == 1 for n in loads)
    # arguments keep their 2-D description; body buffers alias their data
    assert after.buffer_map[after.params[0]].shape[0].value == 4
    _same_results(with_alloc, after)


@T.prim_func
def split_copy(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i, jo, ji in T.grid(4, 2, 4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            vj = T.axis.spatial(8, jo * 4 + ji)
            B[vi, vj] = A[vi, vj]


def test_flatten_buffer_simplifies_indices():
    after = _apply(_flat_pipeline(), split_copy)
    assert "i * 8 + jo * 4 + ji" in after.script()
    _same_results(split_copy, after)


def test_flatten_buffer_rejects_blocks():
    with pytest.raises(TIRError, match="LowerOpaqueBlock"):
        _apply(tt.FlattenBuffer(), with_alloc)


# -- Simplify ---------------------------------------------------------------------------------
@T.prim_func
def simplify_before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        if i < 8:
            B[i * 2 + 1 - 1] = A[i // 4 + i % 4]
        else:
            B[i] = T.float32(0)
    for i in range(4):
        if i >= 4:
            B[i] = T.float32(1)


@T.prim_func
def simplify_after(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        B[i * 2] = A[i]
    for i in range(4):
        T.evaluate(0)


def test_simplify():
    after = _apply(tt.Simplify(), simplify_before)
    assert_structural_equal(after, simplify_after)
    _same_results(simplify_before, after)


# -- RemoveNoOp -------------------------------------------------------------------------------
@T.prim_func
def no_op_before(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        T.evaluate(0)
    for i in range(0):
        A[i] = T.float32(1)
    B[0] = B[0]
    if A[0] > T.float32(0):
        T.evaluate(0)
    A[1] = T.float32(1)


@T.prim_func
def no_op_after(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    A[1] = T.float32(1)


def test_remove_no_op():
    after = _apply(tt.RemoveNoOp(), no_op_before)
    assert_structural_equal(after, no_op_after)
    _same_results(no_op_before, after)


# -- UnrollLoop -------------------------------------------------------------------------------
@T.prim_func
def unroll_before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(4):
        for j in T.unroll(2):
            B[i * 2 + j] = A[i * 2 + j]


@T.prim_func
def unroll_after(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(4):
        B[i * 2] = A[i * 2]
        B[i * 2 + 1] = A[i * 2 + 1]


def test_unroll_loop_explicit():
    after = _apply([tt.UnrollLoop(), tt.Simplify()], unroll_before)
    assert_structural_equal(after, unroll_after)
    _same_results(unroll_before, after)


@T.prim_func
def unroll_select_chain(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.unroll(3):
        B[i] = T.Select(i == 0, A[0] * T.float32(4),
                        T.Select(i == 1 or i == 2, A[i] + A[5], A[7]))


def test_unrolled_copies_keep_only_the_branch_their_select_picks():
    """A Select on the unrolled variable (as a Winograd transform's coefficients) is resolved
    while copying, so each copy holds one branch and no Select is left to simplify."""
    after = _apply(tt.UnrollLoop(), unroll_select_chain)
    assert "Select" not in _kinds(after.body)
    stores = [n for n in _nodes(after.body) if isinstance(n, S.BufferStore)]
    assert len(stores) == 3
    _same_results(unroll_select_chain, after)


@T.prim_func
def vector_identities(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for j in T.vectorized(4):
        B[j] = A[j] * T.float32(1) + T.float32(-0.0)
    for j in T.vectorized(4):
        B[j + 4] = T.Select(1 == 1, A[j + 4] + T.float32(0), A[j])


def test_simplify_vector_identities_and_constant_selects():
    """Exact identities only: x * 1 and x + -0.0 are x, x + 0.0 is not (-0.0 + 0.0 = +0.0);
    a vector select whose condition is constant keeps its branch."""
    after = _apply([tt.VectorizeLoop(), tt.Simplify()], vector_identities)
    first, second = [n for n in _nodes(after.body) if isinstance(n, S.BufferStore)]
    assert isinstance(first.value, tir.BufferLoad)
    assert isinstance(second.value, tir.Add) and "Select" not in _kinds(second.value)
    _same_results(vector_identities, after)


@T.prim_func
def serial_small(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(2):
        for j in range(4):
            B[i * 4 + j] = A[i * 4 + j]


def test_unroll_loop_auto_max_step():
    # 4 stores fit in 4 steps: the inner loop unrolls; the outer (8 steps) stays
    with PassContext(config={"tir.UnrollLoop": {"auto_max_step": 4}}):
        after = _apply(tt.UnrollLoop(), serial_small)
    loops = [n for n in _nodes(after.body) if isinstance(n, S.For)]
    assert len(loops) == 1 and loops[0].extent.value == 2
    _same_results(serial_small, after)
    with PassContext(config={"tir.UnrollLoop": {"auto_max_step": 8}}):
        after = _apply(tt.UnrollLoop(), serial_small)
    assert "For" not in _kinds(after.body)
    _same_results(serial_small, after)
    # without explicit unrolling the loops are only marked
    with PassContext(config={"tir.UnrollLoop": {"auto_max_step": 4, "explicit_unroll": False}}):
        after = _apply(tt.UnrollLoop(), serial_small)
    kinds = sorted(int(n.kind) for n in _nodes(after.body) if isinstance(n, S.For))
    assert kinds == [int(S.ForKind.SERIAL), int(S.ForKind.UNROLLED)]
    # the default config leaves serial loops alone
    assert _apply(tt.UnrollLoop(), serial_small) is serial_small


def _nodes(node):
    found = []
    tir.post_order_visit(node, found.append)
    return found


# -- VectorizeLoop ----------------------------------------------------------------------------
@T.prim_func
def vec_before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        for j in T.vectorized(4):
            B[i * 4 + j] = A[i * 4 + j] * T.float32(2) + T.exp(A[j])


def test_vectorize_loop():
    after = _apply(tt.VectorizeLoop(), vec_before)
    loops = [n for n in _nodes(after.body) if isinstance(n, S.For)]
    assert len(loops) == 1
    store = loops[0].body
    assert isinstance(store, S.BufferStore)
    assert isinstance(store.indices[0], tir.Ramp) and store.indices[0].lanes == 4
    assert store.value.dtype == "float32x4"
    assert "Broadcast" in _kinds(store.value)
    _same_results(vec_before, after)


@T.prim_func
def vec_reduce(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "float32")):
    for j in T.vectorized(16):
        B[0] = B[0] + A[j]


def test_vectorize_loop_scalar_fallback():
    after = _apply(tt.VectorizeLoop(), vec_reduce)
    loop = after.body
    assert isinstance(loop, S.For) and loop.kind == S.ForKind.SERIAL
    assert "Ramp" not in _kinds(after.body)
    _same_results(vec_reduce, after)


def test_vectorize_loop_disabled():
    after = _apply(tt.VectorizeLoop(False), vec_before)
    assert "Ramp" not in _kinds(after.body)
    assert all(n.kind == S.ForKind.SERIAL for n in _nodes(after.body) if isinstance(n, S.For))


# -- pass objects -----------------------------------------------------------------------------
def test_pass_names_and_lookup():
    names = ["tir.LowerInitBlock", "tir.ConvertBlocksToOpaque", "tir.CompactBufferAllocation",
             "tir.LowerOpaqueBlock",
             "tir.FlattenBuffer", "tir.Simplify", "tir.RemoveNoOp", "tir.UnrollLoop",
             "tir.VectorizeLoop", "tir.LowerIntrin"]
    for name in names:
        p = get_pass(name)
        assert p.info.name == name and p.info.opt_level == 0


def test_prim_func_pass_decorator():
    seen = []

    @tt.prim_func_pass(opt_level=1, name="test.Count")
    def count(func, mod, ctx):
        seen.append(func)
        return func

    mod = IRModule({"main": rowsum, "other": opaque_before})
    assert Sequential([count])(mod) is mod
    assert len(seen) == 2
    with PassContext(opt_level=0):
        Sequential([count])(mod)
    assert len(seen) == 2  # opt level 1 is gated off at 0


# -- LowerIntrin ------------------------------------------------------------------------------
@T.prim_func
def floor_ops(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32"),
              C: T.Buffer((8,), "int32"), D: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = T.floordiv(i - 5, 3) + T.floormod(i - 5, 3) * 10
        C[i] = T.floordiv(A[i], A[(i + 1) % 8]) * 100 + T.floormod(A[i], A[(i + 1) % 8])
        D[i] = T.floordiv(T.Cast("float32", i) - T.float32(3.5), T.float32(2))


def test_lower_intrin_floor_division_keeps_results():
    after = _apply(tt.LowerIntrin(), floor_ops)
    kinds = _kinds(after.body)
    assert not kinds & {"FloorDiv", "FloorMod"}
    assert {"Div", "Mod", "Select"} <= kinds
    rng = np.random.default_rng(1)
    for _ in range(5):
        a = rng.integers(-9, 10, 8).astype("int32")
        a[a == 0] = 3
        outs = []
        for f in (floor_ops, after):
            arrays = [a.copy(), np.zeros(8, "int32"), np.zeros(8, "int32"),
                      np.zeros(8, "float32")]
            tir.run(f, *arrays)
            outs.append(arrays)
        for x, y in zip(*outs):
            np.testing.assert_array_equal(x, y)


@T.prim_func
def floor_nonneg(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = A[T.floordiv(i, 4) * 4 + T.floormod(i, 4)]


def test_lower_intrin_nonnegative_dividend_is_plain_truncation():
    after = _apply(tt.LowerIntrin(), floor_nonneg)
    kinds = _kinds(after.body)
    assert "Select" not in kinds and {"Div", "Mod"} <= kinds
    _same_results(floor_nonneg, after)


def test_unrolled_copies_bind_fresh_inner_loop_and_let_variables():
    import numpy as np

    import irlab
    from irlab import tir
    from irlab.tir import expr as E
    from irlab.tir import stmt as S
    from irlab.tir.transform.unroll_loop import unroll

    a = tir.Var("a", "handle")
    A = tir.decl_buffer((4,), "float32", "A")
    i, j, x = tir.Var("i", "int32"), tir.Var("j", "int32"), tir.Var("x", "int32")
    inner = S.For(j, 0, 2, S.ForKind.SERIAL,
                  S.BufferStore(A, E.Let(x, i * 2 + j, E.Cast("float32", x)), [i * 2 + j]))
    loop = S.For(i, 0, 2, S.ForKind.UNROLLED, inner)
    first, second = unroll(loop).seq
    assert first.loop_var is not second.loop_var
    assert first.body.value.var is not second.body.value.var
    assert second.body.value.body.value is second.body.value.var  # the use follows the binding
    func = tir.PrimFunc([a], unroll(loop), buffer_map={a: A})
    out = np.zeros(4, "float32")
    tir.run(func, out)
    np.testing.assert_array_equal(out, [0, 1, 2, 3])
    # its TVMScript reads back (each variable is bound once) and computes the same
    again = irlab.script.from_source(func.script())
    again = again["main"] if hasattr(again, "functions") else again
    out2 = np.zeros(4, "float32")
    tir.run(again, out2)
    np.testing.assert_array_equal(out2, out)
