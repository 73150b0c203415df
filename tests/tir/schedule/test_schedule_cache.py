"""cache_read and cache_write."""

from irlab.script import tir as T
from irlab.tir import Schedule

from test_schedule_compute import softmax_like
from test_schedule_loops import (check_fails, check_replay, check_same, conv2d, matmul,
                                 mm_relu)


def test_cache_read_write_matmul():
    func = matmul()
    sch = Schedule(func)
    block = sch.get_block("C")
    a = sch.cache_read(block, 0, "shared")
    c = sch.cache_write(block, 0, "local")
    assert (a.name, c.name) == ("A_shared", "C_local")
    text = sch.mod.script()
    assert 'A_shared = T.alloc_buffer((16, 16), scope="shared")' in text
    assert "C_local[v_i, v_j] = C_local[v_i, v_j] + A_shared[v_i, v_k] * B[v_k, v_j]" in text
    assert "C[v0, v1] = C_local[v0, v1]" in text
    check_same(func, sch)
    check_replay(func, sch)
    assert str(sch.trace).splitlines()[-1] == (
        '  b2 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope="local")')


def test_cache_read_then_compute_at():
    func = matmul()
    sch = Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    b_shared = sch.cache_read(block, 1, "shared")
    sch.compute_at(b_shared, k)
    text = sch.mod.script()
    assert "for ax0 in range(1):" not in text and 'with T.block("B_shared"):' in text
    check_same(func, sch)
    check_replay(func, sch)


def test_cache_conv_and_softmax():
    func = conv2d()
    sch = Schedule(func)
    block = sch.get_block("conv")
    sch.cache_read(block, 0, "local")
    sch.cache_write(block, 0, "local")
    check_same(func, sch)
    check_replay(func, sch)
    func = softmax_like()
    sch = Schedule(func)
    ex = sch.get_block("ex")
    sch.cache_read(ex, 1, "shared", consumer_blocks=[sch.get_block("ex")])  # mx only for ex
    sch.cache_write(sch.get_block("sm"), 0, "local")
    check_same(func, sch)
    check_replay(func, sch)


def test_cache_errors():
    sch = Schedule(mm_relu())
    y, c = sch.get_block("Y"), sch.get_block("C")
    check_fails(sch, lambda: sch.cache_read(y, 5, "shared"), "out of range")
    check_fails(sch, lambda: sch.cache_write(c, 1, "local"), "out of range")
    check_fails(sch, lambda: sch.cache_read(y, 0, "shared", consumer_blocks=[c]),
                "do not all read A")


def test_cache_write_inside_a_shared_loop_nest():
    """A consumer computed under its producer's loop: the copy back goes into that loop,
    right before the consumer, and covers what one iteration writes (TVM's placement)."""
    func = mm_relu()
    sch = Schedule(func)
    y, c = sch.get_block("Y"), sch.get_block("C")
    sch.reverse_compute_at(c, sch.get_loops(y)[1])
    sch.cache_write(y, 0, "local")
    text = sch.mod.script()
    nest = text.split("for i, j in T.grid(16, 16):")[1]
    assert nest.index('T.block("Y")') < nest.index('T.block("Y_local")') \
        < nest.index('T.block("C")')
    assert "for ax0, ax1 in T.grid(1, 1):" in nest and "T.axis.spatial(16, i + ax0)" in nest
    check_same(func, sch)
    check_replay(func, sch)


@T.prim_func
def _two_producers(C: T.Buffer((8,), "float32")):
    A = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("A0"):
            vi = T.axis.spatial(8, i)
            A[vi] = 1.0
    for i in range(8):
        with T.block("A1"):
            vi = T.axis.spatial(8, i)
            A[vi] = 2.0
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi]


def test_cache_refuses_unknown_scopes_and_several_producers():
    sch = Schedule(matmul())
    block = sch.get_block("C")
    check_fails(sch, lambda: sch.cache_read(block, 0, "test_scope"), "unknown storage scope")
    check_fails(sch, lambda: sch.cache_write(block, 0, "test_scope"), "unknown storage scope")
    sch.cache_read(block, 0, "local.tag")  # a rank with a tag is a valid scope
    two = Schedule(_two_producers)
    check_fails(two, lambda: two.cache_read(two.get_block("C"), 0, "local"), "several producers")


@T.prim_func
def _producer_in_tiles(B: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")):
    A = T.alloc_buffer((32,))
    for io in range(4):
        for ii in range(8):
            with T.block("A"):
                vi = T.axis.spatial(32, io * 8 + ii)
                A[vi] = B[vi] * 2.0
        for ii in range(8):
            with T.block("C0"):
                vi = T.axis.spatial(32, io * 8 + ii)
                C[vi] = A[vi] + 1.0
    for i in range(32):
        with T.block("C1"):
            vi = T.axis.spatial(32, i)
            C[vi] = C[vi] + A[vi]


def test_cache_read_follows_the_first_consumer_into_the_tile():
    """The read cache lands in the innermost loop holding the producer and the first
    consumer, copying the tile that loop's iteration writes; only the named consumer reads
    it, and the data handle of a cached buffer follows it too."""
    sch = Schedule(_producer_in_tiles)
    sch.cache_read(sch.get_block("C0"), 0, "local", consumer_blocks=["C0"])
    text = sch.mod.script()
    tile = text.split("for io in range(4):")[1].split('T.block("C1")')[0]
    assert 'T.block("A_local")' in tile and "for ax0 in range(8):" in tile
    assert "T.axis.spatial(32, io * 8 + ax0)" in tile
    assert "C[vi] = C[vi] + A[vi]" in text  # C1 still reads A
    check_same(_producer_in_tiles, sch)
    check_replay(_producer_in_tiles, sch)


def test_cache_read_of_every_reader_fills_the_cache_tile_by_tile():
    """With no consumer named, every reader reads the cache: the copy still goes before the
    first reader, in the tile; the later reader sees the cache once every tile is copied."""
    sch = Schedule(_producer_in_tiles)
    sch.cache_read(sch.get_block("C1"), 1, "global")
    text = sch.mod.script()
    assert text.index('T.block("A")') < text.index('T.block("A_global")') \
        < text.index('T.block("C0")')
    assert "A_global[vi] + T.float32(1)" in text and "C[vi] + A_global[vi]" in text
    check_same(_producer_in_tiles, sch)


def test_reindex_cache_read_and_write_lay_the_cache_out_by_iter_vars():
    """reindex_cache_read/write: the cache is indexed by a map of the block's iter vars
    (here transposed), its copy runs over the block's own loops, and only that block
    reads (or writes) it."""
    func = mm_relu()
    sch = Schedule(func)
    y, c = sch.get_block("Y"), sch.get_block("C")
    read = sch.reindex_cache_read(c, 0, "shared", lambda i, j: (j, i))
    write = sch.reindex_cache_write(y, 0, "local", lambda i, j, k: (j, i))
    assert (read.name, write.name) == ("Y_shared", "Y_local")
    text = sch.mod.script()
    assert "Y_local[v_j, v_i] = Y_local[v_j, v_i] + A[v_i, v_k] * B[v_k, v_j]" in text
    assert "Y_shared[v_j, v_i] = Y[v_i, v_j]" in text and "Y[v_i, v_j] = Y_local[v_j, v_i]" in text
    assert "T.max(Y_shared[v_j, v_i], T.float32(0))" in text
    check_same(func, sch)
    check_replay(func, sch)


def test_reindex_cache_refuses_maps_that_drop_or_add_iter_vars():
    sch = Schedule(mm_relu())
    c = sch.get_block("C")
    check_fails(sch, lambda: sch.reindex_cache_read(c, 0, "shared", lambda i, j: (i,)),
                "appears only in the old indices")
    check_fails(sch, lambda: sch.reindex_cache_write(sch.get_block("Y"), 0, "local",
                                                     lambda i, j, k: (i, j, k)),
                "appears only in the new indices")
