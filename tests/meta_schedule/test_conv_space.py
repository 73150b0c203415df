"""The CPU design space of a conv2d as Relay hands it over at opt_level 3 with the NCHWc conv
off (NCHW data, the weight packed ``OIHW{n}o`` by AlterOpLayout): the output channels are the
vector axis (split by the lanes, innermost, the accumulators laid out channels-last), the
padding stays a stage of its own, the bias + ReLU epilogue is computed at the tile; every
point computes what TOPI's schedule of the same kernel computes -- for the NCHWc conv (the
default) too."""

import numpy as np
import pytest

import irlab
from irlab import meta_schedule as ms
from irlab import relay
from irlab.meta_schedule.schedule_rule.auto_inline import guards_a_load
from irlab.meta_schedule.schedule_rule.multi_level_tiling import is_write_cache
from irlab.meta_schedule.schedule_rule.vector_axis import choose_vector_loop, move_last_map
from irlab.meta_schedule import block_analysis as BA
from irlab.relay.op.strategy.conv import NCHWC_CONFIG
from irlab.target import Target
from irlab.tir.schedule import Schedule, Trace

from test_design_space import TARGET, gemm, replay

PACKED = {NCHWC_CONFIG: False}  # the NCHW conv with an OIHW{n}o weight, not the NCHWc one
CHANNELS = 32  # a multiple of the lanes of AVX2 (8) and AVX-512 (16)
WIDTH = 7  # a multiple of neither (ResNet's last stage); the tie when the columns fill whole
# vectors too is tested on its own (test_output_channels_win_the_tie_with_whole_vector_columns)


def conv_bias_relu():
    """A conv2d + bias + ReLU model and its params (the weight a constant: it gets packed)."""
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 8, WIDTH, WIDTH))
    w = relay.var("w", shape=(CHANNELS, 8, 3, 3))
    b = relay.var("b", shape=(CHANNELS,))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w, padding=(1, 1)), b))
    params = {"w": rng.uniform(-1, 1, (CHANNELS, 8, 3, 3)).astype("float32"),
              "b": rng.uniform(-1, 1, (CHANNELS,)).astype("float32")}
    return irlab.IRModule.from_expr(relay.Function([x, w, b], y)), params


def conv_task(config=None):
    """The conv task of conv_bias_relu (``config``: the PassContext's; PACKED by default)."""
    mod, params = conv_bias_relu()
    tasks = ms.relay_integration.extract_tasks(mod, TARGET, params,
                                               pass_config=PACKED if config is None else config)
    (task,) = [t for t in tasks if "conv2d" in t.task_name]
    return task


def outputs(mod):
    """The output of ``mod`` built for TARGET (vectorized as scheduled) on seeded inputs."""
    from irlab.meta_schedule.arg_info import ArgInfo
    from irlab.meta_schedule.runner.measure import random_arguments

    arrays = [irlab.nd.array(a) for a in random_arguments(ArgInfo.from_entry_func(mod))]
    irlab.build(mod, target=TARGET)["main"](*arrays)
    return arrays[-1].numpy()


def lanes():
    return Target(TARGET).vector_width("float32")


def test_output_channels_win_the_tie_with_whole_vector_columns():
    """56 output columns fill whole AVX2 vectors (8 lanes) and walk the input contiguously,
    as the channels walk the packed weight: the channels, read at a plain index, are still
    the vector loop (the columns read the input at a window offset ``ow + rx``)."""
    from irlab.tir import expr as E
    from irlab.meta_schedule.schedule_rule.vector_axis import plain_index

    haswell = "llvm -mcpu=haswell -num-cores=2"
    x = relay.var("x", shape=(1, 8, 56, 56))
    w = relay.const(np.ones((CHANNELS, 8, 3, 3), "float32"))
    mod = irlab.IRModule.from_expr(relay.Function([x], relay.nn.conv2d(x, w, padding=(1, 1))))
    (task,) = ms.relay_integration.extract_tasks(mod, haswell, pass_config=PACKED)
    sch = Schedule(task.mod)
    conv = sch.get_block("conv2d")
    loops = BA.loops_of(sch, conv)
    assert [BA.const_extent(lp) for lp in loops[:4]] == [1, CHANNELS, 56, 56]
    assert choose_vector_loop(BA.realize_of(sch, conv), loops, 8) == 1  # oc, not ow
    v = E.Var("v", "int32")
    assert plain_index(v, v) and plain_index(E.FloorMod(v, E.IntImm("int32", 8)), v)
    assert not plain_index(E.Add(v, E.Var("r", "int32")), v)


def test_packed_conv_vectorizes_output_channels():
    task = conv_task()
    func = task.mod["main"]
    assert len(func.buffer_map[func.params[1]].shape) == 5  # OIHW{n}o: AlterOpLayout ran
    sch = Schedule(task.mod)
    conv = sch.get_block("conv2d")
    realize = BA.realize_of(sch, conv)
    assert choose_vector_loop(realize, BA.loops_of(sch, conv), lanes()) == 1  # n, oc, ...
    ctx = ms.TuneContext(task.mod, target=TARGET, space_generator="post-order-apply",
                         rand_state=0)
    spaces = ctx.generate_design_space()
    assert spaces
    for space in spaces:
        insts = space.trace.insts
        kinds = [inst.kind for inst in insts]
        assert "transform_layout" in kinds
        splits = [inst for inst in insts if inst.kind == "split"]
        assert any(dict(inst.attrs)["factors"] == [None, lanes()] for inst in splits)
        # the padding is not inlined into the reduction: it is a stage of its own
        assert any(b.name_hint == "pad_temp" for b in _blocks(space.mod))


def _blocks(mod):
    from irlab.tir import stmt as S
    from irlab.tir.schedule import primitives_getters as G

    return [n.block for n, _ in G.walk(mod["main"].body) if isinstance(n, S.BlockRealize)]


@pytest.mark.parametrize("config", [PACKED, {}], ids=["packed", "nchwc"])
def test_conv_samples_compute_what_topi_computes(config):
    """Random points of every space (tiles and the padding's place sampled; no unrolling,
    which only costs LLVM time here) built and run: TOPI's values."""
    from irlab.meta_schedule.postproc import apply_postprocs

    task = conv_task(config)
    assert ("NCHWc" in task.task_name) == (not config)
    expected = outputs(task.default_schedule.mod)
    ctx = ms.TuneContext(task.mod, target=TARGET, space_generator="post-order-apply",
                         rand_state=0)

    def no_unroll(inst, args, kwargs, decision):
        return 0 if inst.kind == "sample_categorical" else decision

    checked = 0
    for seed, space in enumerate(ctx.generate_design_space()):
        sch = Schedule(ctx.mod, seed=seed, enable_check=False)
        Trace(space.trace.insts).apply_to_schedule(sch, remove_postproc=True,
                                                   decision_provider=no_unroll)
        if not apply_postprocs(sch, ctx.space_generator.postprocs):
            continue
        np.testing.assert_allclose(outputs(sch.mod), expected, rtol=1e-4, atol=1e-4)
        checked += 1
    assert checked


def test_topi_register_tile_is_a_point_of_the_space():
    """TOPI's tile (oc in whole vectors x a row of columns, reduction outside the tile)
    replayed through the space's own trace: the same values as TOPI's schedule."""
    task = conv_task()
    expected = outputs(task.default_schedule.mod)
    ctx = ms.TuneContext(task.mod, target=TARGET, space_generator="post-order-apply",
                         rand_state=0)
    vectors = CHANNELS // lanes()
    tiles = iter([[1, 1, 1, 1], [1, 1, 1, vectors], [WIDTH, 1, 1, 1], [1, 1, 1, WIDTH],
                  [8, 1], [3, 1], [3, 1]])

    def provide(inst, args, kwargs, decision):
        return next(tiles) if inst.kind == "sample_perfect_tile" else decision

    space = ctx.generate_design_space()[0]
    sch = Schedule(ctx.mod, seed=0, enable_check=False)
    Trace(space.trace.insts).apply_to_schedule(sch, remove_postproc=True,
                                               decision_provider=provide)
    from irlab.meta_schedule.postproc import apply_postprocs

    assert apply_postprocs(sch, ctx.space_generator.postprocs)
    np.testing.assert_allclose(outputs(sch.mod), expected, rtol=1e-4, atol=1e-4)


def test_gemm_keeps_its_vector_loop():
    """The last spatial loop already walks B's and C's rows: nothing changes for a GEMM."""
    func = gemm(16, 32, 16)
    sch = Schedule(irlab.IRModule({"main": func}))
    block = sch.get_block("C")
    assert choose_vector_loop(BA.realize_of(sch, block), BA.loops_of(sch, block), 8) is None
    ctx = ms.TuneContext(func, target=TARGET, space_generator="post-order-apply",
                         rand_state=0)
    for space in ctx.generate_design_space():
        assert "transform_layout" not in [inst.kind for inst in space.trace.insts]
        assert replay(ctx, Trace(space.trace.insts), 0) is not None


def test_padding_and_bias_epilogue_are_recognized():
    task = conv_task()
    sch = Schedule(task.mod)
    pad = BA.realize_of(sch, sch.get_block("pad_temp")).block
    assert guards_a_load(pad.body)
    relu = BA.realize_of(sch, sch.get_block("T_relu")).block
    assert not guards_a_load(relu.body)
    sch.compute_inline(sch.get_block("T_add"))  # relu(conv + b[0, c, 0, 0])
    assert is_write_cache(BA.realize_of(sch, sch.get_block("T_relu")).block)


def test_move_last_map():
    assert move_last_map(4, 1) == "lambda i0, i1, i2, i3: (i0, i2, i3, i1,)"
