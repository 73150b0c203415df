"""What each named CPU gets, whatever the host: the Target's description of the CPU, and the
x86 schedules' ISA-dependent choices (register tiles, dense packing, conv weight blocks, vector
widths of pooling and elementwise stages) for AVX2 and AVX-512 targets side by side.

Code is lowered or compiled for the named CPU and inspected (TIR, chosen implementation,
assembly), never run: the host may lack the CPU. The numerics of every choice are checked
on the host by the other TOPI tests. How to write such a test: tests/README.md.
"""

import re

import pytest

import irlab
from irlab import relay
from irlab.target import Target
from irlab.topi.x86.conv2d import im2col_panel, nchw_packed_tile, nchw_tile, nhwc_tile
from irlab.topi.x86.dense import dense_tile
from irlab.topi.x86.register_tile import accumulator_budget

from tests.topi._lower_util import infer, lower_function

AVX2 = "llvm -mcpu=haswell"
AVX512 = "llvm -mcpu=skylake-avx512"


# -- the Target describes the CPU --------------------------------------------------------------
@pytest.mark.parametrize("target,bits,registers", [
    ("llvm -mcpu=haswell", 256, 16), ("llvm -mcpu=znver3", 256, 16),
    ("llvm -mcpu=skylake-avx512", 512, 32), ("llvm -mcpu=znver5", 512, 32),
    ("llvm -mcpu=x86-64", 128, 16), ("llvm -mcpu=sandybridge", 256, 16),
    ("llvm -mcpu=haswell -mattr=+avx512f", 512, 32),
    ("llvm -mcpu=skylake-avx512 -mattr=-avx512f", 256, 16),
])
def test_target_describes_the_named_cpu(target, bits, registers):
    t = Target(target)
    assert t.vector_bits == bits and t.num_vector_registers == registers
    assert t.vector_width("float32") == bits // 32
    assert t.vector_width("float64") == bits // 64
    assert t.vector_width("int8") == bits // 8
    assert t.vector_width("bool") == bits // 8
    caches = t.cache_sizes
    assert set(caches) == {"L1d", "L2", "L3"}
    assert 16 * 1024 <= caches["L1d"] < caches["L2"] < caches["L3"]


def test_named_cpu_features():
    assert Target(AVX2).has_feature("fma") and not Target(AVX2).has_feature("avx512f")
    assert Target(AVX512).has_feature("+avx512bw")
    unknown = Target("llvm -mcpu=some-future-cpu -mattr=+avx2,+fma")
    assert unknown.vector_bits == 256  # features beyond SSE2 come from -mattr only


def test_host_target_reads_the_host():
    """``llvm`` alone is the host: its features from LLVM, its caches from sysfs."""
    from irlab.target.cpu_info import host_cpu_info

    t = Target("llvm")
    assert t.cpu_info is host_cpu_info()
    assert t.features == frozenset(f.lstrip("+") for f in t.mattr)
    assert all(size > 0 for size in t.cache_sizes.values())


# -- register tiles stay within the register file -----------------------------------------------
@pytest.mark.parametrize("target", [AVX2, AVX512])
def test_register_tiles_fit_the_register_file(target):
    t = Target(target)
    lanes, budget = t.vector_width("float32"), accumulator_budget(t)
    assert budget == t.num_vector_registers // 2
    for rows, cols in [(56, 64), (28, 128), (14, 256), (7, 512), (112, 64), (10, 24)]:
        ow_bn, oc_bn = nhwc_tile(rows, cols, t)
        assert ow_bn * -(-oc_bn // lanes) <= budget
        oc_bn, ow_bn = nchw_tile(cols, rows, t)
        assert oc_bn * -(-ow_bn // lanes) <= budget and ow_bn <= lanes
    for m, n in [(1024, 1024), (32, 256), (96, 48), (8, 16), (32, 6)]:
        bm, bn = dense_tile(m, n, t)
        assert (bn % lanes == 0 or bn == n < lanes) and bm * -(-bn // lanes) <= budget


def test_dense_tiles_per_isa():
    assert dense_tile(1024, 1024, Target(AVX512)) == (4, 64)
    assert dense_tile(1024, 1024, Target(AVX2)) == (4, 16)
    assert dense_tile(32, 24, Target(AVX2)) == (8, 8)       # 24 = 3 AVX2 vectors of 8
    assert dense_tile(32, 24, Target(AVX512)) is None       # not a multiple of 16: unpacked
    assert dense_tile(2, 256, Target(AVX2)) is None         # a matrix-vector product
    assert dense_tile(32, 10, Target(AVX512)) == (8, 10)    # narrower than a vector: one
    assert dense_tile(32, 10, Target(AVX2)) is None         # partial vector, but 10 > 8 lanes


def test_conv_weight_blocks_and_im2col_panels_per_isa():
    resnet_layer = (1, 64, 56, 56)
    assert nchw_packed_tile(resnet_layer, Target(AVX512))[1] % 16 == 0
    assert nchw_packed_tile(resnet_layer, Target(AVX2))[1] % 8 == 0
    assert nchw_packed_tile((1, 8, 56, 56), Target(AVX512)) is None   # half a vector
    assert nchw_packed_tile((1, 8, 56, 56), Target(AVX2)) is not None  # one vector
    assert im2col_panel(Target(AVX512)) == 64 and im2col_panel(Target(AVX2)) == 16


# -- what the schedules produce for each named CPU ----------------------------------------------
def _lower(make_call, shapes, target):
    params = [relay.var(f"p{i}", shape=s) for i, s in enumerate(shapes)]
    func = infer(relay.Function(params, make_call(*params)))
    return lower_function(func.with_attr("Primitive", 1), Target(target))


def _vector_loops(lowered):
    """Extents of the vectorized loops of the lowered (scheduled) function."""
    text = lowered.prim_func.script()
    return [int(n) for n in re.findall(r"T\.vectorized\((\d+)\)", text)]


@pytest.mark.parametrize("target,packed,bn", [(AVX2, True, 16), (AVX512, True, 64)])
def test_dense_schedule_per_isa(target, packed, bn):
    lowered = _lower(lambda x, w: relay.nn.dense(x, w), [(32, 784), (256, 784)], target)
    assert lowered.anchor[0].name == ("dense_pack.x86" if packed else "dense.x86")
    assert bn in _vector_loops(lowered)


@pytest.mark.parametrize("target,layout", [(AVX2, "NC16n"), (AVX512, "NC64n")])
def test_dense_alter_layout_per_isa(target, layout):
    x = relay.var("x", shape=(32, 784))
    w = relay.var("w", shape=(256, 784))
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(
        relay.Function([x, w], relay.nn.dense(x, w))))
    with irlab.transform.PassContext(opt_level=3), Target(target):
        mod = relay.transform.AlterOpLayout()(mod)
    assert f'weight_layout="{layout}"' in mod.astext()


@pytest.mark.parametrize("target,lanes", [(AVX2, 8), (AVX512, 16)])
def test_elementwise_and_pooling_vector_widths(target, lanes):
    add = _lower(lambda a, b: relay.add(a, b), [(4, 64), (4, 64)], target)
    assert _vector_loops(add) == [lanes]
    pool = _lower(lambda x: relay.nn.max_pool2d(x, (3, 3), (1, 1), padding=1),
                  [(1, 8, 32, 32)], target)
    assert _vector_loops(pool)  # the output row, contiguous with stride 1
    asm = irlab.build(pool.prim_func, target=target).get_source("s")
    assert ("zmm" in asm) == (lanes == 16)
    assert lanes == 16 or "ymm" in asm


@pytest.mark.parametrize("target,vectors", [(AVX2, []), (AVX512, [14, 14])])
def test_stride2_max_pool_per_isa(target, vectors):
    """ResNet's 3x3/2 max pool (NCHW): AVX-512 vectorizes the output row (and its init) in
    pieces (its stride-2 reads: one masked load and a shuffle, no gather); AVX2 leaves the
    windows to LLVM's scalar loops, where masked loads cost what they save."""
    pool = _lower(lambda x: relay.nn.max_pool2d(x, (3, 3), (2, 2), padding=1),
                  [(1, 4, 112, 112)], target)
    assert _vector_loops(pool) == vectors
    assert "pad_temp" not in pool.prim_func.script()  # the padding read through the windows
    if vectors:
        asm = irlab.build(pool.prim_func, target=target).get_source("s")
        assert "gather" not in asm and ("vpermt2ps" in asm or "vpermps" in asm)


@pytest.mark.parametrize("target,register", [(AVX2, "ymm"), (AVX512, "zmm")])
def test_conv_kernel_assembly_per_isa(target, register):
    """The packed conv micro-kernel of each CPU: FMAs on its widest registers."""
    lowered = _lower(lambda x, w: relay.nn.conv2d(x, w, padding=1),
                     [(1, 16, 14, 14), (32, 16, 3, 3)], target)
    assert lowered.anchor[0].name == "conv2d_nchw.x86"
    asm = irlab.build(lowered.prim_func, target=target).get_source("s")
    assert re.search(rf"vfmadd\w+ps\s+[^\n]*%{register}", asm)


def test_cpu_info_repr_is_short():
    from irlab.target import Target
    text = repr(Target("llvm -mcpu=skylake-avx512").cpu_info)
    assert text.startswith("CPUInfo(skylake-avx512: avx512f,") and "L2 1 MiB" in text
    assert len(text) < 120
