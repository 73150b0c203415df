"""sample_perfect_tile, sample_categorical, sample_compute_location: reproducible by seed,
decisions in the trace, TVM's JSON record, replay with the same or changed decisions."""

import json

import numpy as np
import pytest

from irlab import te
from irlab.ir.structural import assert_structural_equal, structural_equal
from irlab.tir import Schedule
from irlab.tir.interpreter import run
from irlab.tir.schedule import ExprRV, ScheduleError, Trace
from irlab.tir.schedule.testing import verify_trace_roundtrip


def matmul_relu(m=12, n=8, k=6):
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    D = te.compute((m, n), lambda i, j: te.max(C[i, j], 0.0), name="D")
    return te.create_prim_func([A, B, D])


def outputs(func, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(tuple(int(s.value) for s in func.buffer_map[p].shape))
              .astype("float32") for p in func.params]
    arrays[-1][...] = 0
    run(func, *arrays)
    return arrays[-1]


def sampled_schedule(func, seed, decisions=None):
    """Tile C's spatial loops by sampled factors, sample an unroll annotation and where D
    goes (the shape of a design-space schedule)."""
    sch = Schedule(func, seed=seed)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i_tiles = sch.sample_perfect_tile(i, 3, max_innermost_factor=4)
    j_tiles = sch.sample_perfect_tile(j, 2, max_innermost_factor=4)
    i0, i1, i2 = sch.split(i, i_tiles)
    j0, j1 = sch.split(j, j_tiles)
    sch.reorder(i0, j0, i1, k, i2, j1)
    unroll = sch.sample_categorical([0, 16, 64], [0.2, 0.4, 0.4])
    sch.annotate(i0, "pragma_auto_unroll_max_step", unroll)
    return sch


def test_perfect_tile_values_and_decisions():
    func = matmul_relu()
    sch = sampled_schedule(func, seed=1)
    samples = [inst for inst in sch.trace.insts if inst.kind == "sample_perfect_tile"]
    assert len(samples) == 2
    for inst in samples:
        decision = sch.trace.get_decision(inst)
        assert decision == [sch.get(rv) for rv in inst.outputs]
        assert int(np.prod(decision)) == {0: 12, 1: 8}[samples.index(inst)]
        assert decision[-1] <= 4
    assert all(isinstance(rv, ExprRV) for rv in samples[0].outputs)
    assert len(sch.trace.decisions) == 3
    unroll = next(i for i in sch.trace.insts if i.kind == "sample_categorical")
    assert sch.trace.decisions[unroll].value == sch.trace.decisions[unroll]  # TVM's IntImm


@pytest.mark.parametrize("extent,n,limit", [(1, 3, 16), (7, 1, 16), (97, 3, 4), (360, 4, 8),
                                            (64, 2, 0)])
def test_perfect_tile_factorizations(extent, n, limit):
    A = te.placeholder((extent,), name="A")
    B = te.compute((extent,), lambda i: A[i] + 1.0, name="B")
    func = te.create_prim_func([A, B])
    seen = set()
    for seed in range(20):
        sch = Schedule(func, seed=seed)
        (loop,) = sch.get_loops(sch.get_block("B"))
        values = [sch.get(rv) for rv in sch.sample_perfect_tile(loop, n, limit)]
        assert len(values) == n and int(np.prod(values)) == extent
        assert limit <= 0 or values[-1] <= limit
        seen.add(tuple(values))
    if extent == 360:
        assert len(seen) > 5  # really random


def test_same_seed_same_trace_and_different_seeds_differ():
    func = matmul_relu()
    records = [json.dumps(sampled_schedule(func, seed=7).trace.as_json()) for _ in range(2)]
    assert records[0] == records[1]
    others = {json.dumps(sampled_schedule(func, seed=s).trace.as_json()) for s in range(8)}
    assert len(others) > 1


def test_seed_fork_seed_and_copy():
    sch = Schedule(matmul_relu(), seed=5)
    first = [sch.fork_seed() for _ in range(3)]
    sch.seed(5)
    assert [sch.fork_seed() for _ in range(3)] == first
    sch.seed(11)
    copy = sch.copy()  # forks: the copy and the original draw different streams
    assert copy.fork_seed() != sch.fork_seed()
    with pytest.raises(ScheduleError, match="seed"):
        sch.seed(-5)


def test_json_record_shape_and_roundtrip():
    func = matmul_relu()
    sch = sampled_schedule(func, seed=3)
    record = json.loads(json.dumps(sch.trace.as_json()))
    insts, decisions = record
    assert insts[0] == ["GetBlock", [], ["C", "main"], ["b0"]]
    assert insts[1] == ["GetLoops", ["b0"], [], ["l1", "l2", "l3"]]
    assert insts[2][0] == "SamplePerfectTile" and insts[2][1:3] == [["l1"], [3, 4]]
    assert insts[4][0] == "Split" and insts[4][1] == ["l1", "v4", "v5", "v6"]
    assert [index for index, _ in decisions] == [2, 3, 7]
    replayed = Schedule(func)
    Trace.apply_json_to_schedule(record, replayed)
    assert_structural_equal(replayed.mod, sch.mod)
    assert json.dumps(replayed.trace.as_json()) == json.dumps(record)
    verify_trace_roundtrip(sch, func, text_format=("python", "json"))


def test_sampled_schedules_compute_the_same():
    func = matmul_relu()
    expected = outputs(func)
    for seed in range(10):
        sch = sampled_schedule(func, seed)
        c = sch.get_block("C")
        sch.compute_at(c, sch.sample_compute_location(c))  # under a loop of D, or not moved
        np.testing.assert_allclose(outputs(sch.mod["main"]), expected, rtol=1e-5, atol=1e-5)


def test_mutated_decision_replays():
    func = matmul_relu()
    sch = sampled_schedule(func, seed=2)
    tile = next(i for i in sch.trace.insts if i.kind == "sample_perfect_tile")
    old = sch.trace.get_decision(tile)
    new = [3, 4, 1] if old != [3, 4, 1] else [1, 3, 4]
    mutated = sch.trace.with_decision(tile, new, remove_postproc=True)
    assert sch.trace.get_decision(tile) == old  # the original trace is unchanged
    replay = Schedule(func)
    mutated.apply_to_schedule(replay)
    split = next(i for i in replay.trace.insts if i.kind == "split")
    assert [replay.get(rv) for rv in split.value("factors")] == new
    assert not structural_equal(replay.mod, sch.mod)
    np.testing.assert_allclose(outputs(replay.mod["main"]), outputs(func), rtol=1e-5,
                               atol=1e-5)
    # the same with TVM's JSON: edit the decision in the record
    record = sch.trace.as_json()
    record[1][0][1] = new
    from_json = Schedule(func)
    Trace.apply_json_to_schedule(record, from_json)
    assert_structural_equal(from_json.mod, replay.mod)


def test_decision_provider():
    func = matmul_relu()
    sch = sampled_schedule(func, seed=4)
    replay = Schedule(func)

    def provider(inst, args, kwargs, decision):
        return 0 if inst.kind == "sample_categorical" else decision

    sch.trace.apply_to_schedule(replay, decision_provider=provider)
    cat = next(i for i in replay.trace.insts if i.kind == "sample_categorical")
    assert replay.trace.get_decision(cat) == 0


def test_compute_location_candidates_and_replay():
    func = matmul_relu()
    seen = set()
    for seed in range(12):
        sch = Schedule(func, seed=seed)
        c = sch.get_block("C")
        i, j, k = sch.get_loops(c)
        sch.split(i, [3, 4])
        loc = sch.sample_compute_location(c)
        decision = sch.trace.get_decision(sch.trace.insts[-1])
        seen.add(decision)
        sch.compute_at(c, loc)
        np.testing.assert_allclose(outputs(sch.mod["main"]), outputs(func), rtol=1e-5,
                                   atol=1e-5)
        verify_trace_roundtrip(sch, func, text_format=("python", "json"))
    assert -1 in seen and seen - {-1}  # root and at least one loop of D


def test_compute_location_inline_mark():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((8,), lambda i: B[i] + 1.0, name="C")
    func = te.create_prim_func([A, C])
    sch = Schedule(func)
    loc = sch.sample_compute_location(sch.get_block("B"), decision=-2)
    assert sch.get(loc) == "inline"
    sch.compute_at(sch.get_block("B"), loc)
    assert 'T.block("B")' not in sch.mod.script()
    np.testing.assert_allclose(outputs(sch.mod["main"]), outputs(func), rtol=1e-6)
    verify_trace_roundtrip(sch, func, text_format=("python", "json"))
    # a decision that is no longer a candidate falls back to the nearest one before it
    sch = Schedule(func)
    sch.sample_compute_location(sch.get_block("B"), decision=5)
    assert sch.trace.get_decision(sch.trace.insts[-1]) == 0


def _state(sch):
    return sch.mod, len(sch.trace.insts), dict(sch.trace.decisions), sch._rand.state


@pytest.mark.parametrize("call,match", [
    (lambda s, lp, blk: s.sample_perfect_tile(lp, 2, decision=[5, 3]), "multiplies to 15"),
    (lambda s, lp, blk: s.sample_perfect_tile(lp, 2, decision=[12]), "list of 2 positive"),
    (lambda s, lp, blk: s.sample_perfect_tile(lp, 2, 4, decision=[1, 12]), "innermost factor 12"),
    (lambda s, lp, blk: s.sample_perfect_tile(lp, 0), "n >= 1"),
    (lambda s, lp, blk: s.sample_categorical([1, 2], [0.5, 0.5], decision=2), "index below 2"),
    (lambda s, lp, blk: s.sample_categorical([1, 2], [0.5]), "2 candidates but 1"),
    (lambda s, lp, blk: s.sample_categorical([1, 2], [0.0, 0.0]), "positive sum"),
    (lambda s, lp, blk: s.sample_compute_location(blk, decision="x"), "integer >= -2"),
    (lambda s, lp, blk: s.split(lp, [ExprRV(), None]), "not sampled by this schedule"),
])
def test_bad_decisions_leave_the_schedule_unchanged(call, match):
    sch = Schedule(matmul_relu(), seed=0)
    block = sch.get_block("C")
    loop = sch.get_loops(block)[0]
    before = _state(sch)
    with pytest.raises(ScheduleError, match=match):
        call(sch, loop, block)
    mod, n, decisions, state = _state(sch)
    assert mod is before[0] and n == before[1] and decisions == before[2]
    assert state == before[3]


@pytest.mark.parametrize("edit,match", [
    (lambda r: r.pop(), r"\[instructions, decisions\]"),
    (lambda r: r[0].append(["NoSuchKind", [], [], []]), "unknown instruction kind"),
    (lambda r: r[0][1][1].__setitem__(0, "b99"), "'b99', which no earlier"),
    (lambda r: r[1].append([99, 1]), "index below"),
    (lambda r: r[1].__setitem__(0, [2, [5, 5, 5]]), "multiplies to 125"),
])
def test_bad_json_records_leave_the_schedule_unchanged(edit, match):
    func = matmul_relu()
    record = json.loads(json.dumps(sampled_schedule(func, seed=0).trace.as_json()))
    edit(record)
    sch = Schedule(func, seed=0)
    before = _state(sch)
    with pytest.raises(ScheduleError, match=match):
        Trace.apply_json_to_schedule(record, sch)
    mod, n, decisions, state = _state(sch)
    assert mod is before[0] and n == before[1] and decisions == before[2]
    assert state == before[3]


def test_simplified_and_postproc():
    func = matmul_relu()
    sch = sampled_schedule(func, seed=0)
    sch.get_block("D")  # dead getter
    sch.sample_perfect_tile(sch.get_loops(sch.get_block("D"))[0], 2)  # dead sample
    sch.enter_postproc()
    sch.parallel(sch.get_loops(sch.get_block("D"))[0])
    full = sch.trace
    kinds = [i.kind for i in full.simplified(remove_postproc=True).insts]
    assert "enter_postproc" not in kinds and "parallel" not in kinds
    assert kinds.count("sample_perfect_tile") == 2 and kinds.count("get_block") == 1
    assert len(full.simplified(remove_postproc=True).decisions) == 3
    kept = [i.kind for i in full.simplified(remove_postproc=False).insts]
    assert kept[-2:] == ["get_loops", "parallel"] and "enter_postproc" in kept
    record = full.as_json(remove_postproc=True)
    assert record[0][-1][0] != "EnterPostproc"
    replay = Schedule(func)
    full.apply_to_schedule(replay, remove_postproc=True)
    assert "T.parallel" not in replay.mod.script()
    text = str(full)
    assert "sch.enter_postproc()" in text and "decision=[" in text


def test_index_map_json_and_text():
    A = te.placeholder((8, 6), name="A")
    B = te.compute((8, 6), lambda i, j: A[i, j] * 2.0, name="B")
    func = te.create_prim_func([A, B])
    sch = Schedule(func)
    sch.transform_layout("B", ("write", 0), lambda i, j: (i // 4, j, i % 4))
    record = json.loads(json.dumps(sch.trace.as_json()))
    assert record[0][-1][1][1] == '"lambda i, j: ((i // 4), j, (i % 4),)"'
    verify_trace_roundtrip(sch, func, text_format=("python", "json"))
    text = Schedule(func)
    text.transform_layout("B", ("write", 0), "lambda i, j: (j, min(i, 7) - 0)")
    np.testing.assert_allclose(outputs(text.mod["main"]), outputs(func).T)  # B is laid out [j, i]
    for bad in ("lambda i, j: __import__('os').getcwd()", "lambda i, j: (i.real, j)",
                "i + 1"):
        with pytest.raises(ScheduleError, match="index map"):
            Schedule(func).transform_layout("B", ("write", 0), bad)


def test_a_one_handle_list_prints_unpacked():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    func = te.create_prim_func([A, B])
    sch = Schedule(func)
    (loop,) = sch.get_loops(sch.get_block("B"))
    (tile,) = sch.sample_perfect_tile(loop, 1)
    sch.annotate(loop, "pragma_tile", tile)
    text = str(sch.trace)
    assert "  l1, = sch.get_loops(block=b0)" in text and "  v2, = sch.sample_perfect_tile(" in text
    verify_trace_roundtrip(sch, func)  # the printed Python runs


def test_traces_built_by_hand_as_tvm_does():
    from irlab.tir.schedule import BlockRV, Instruction, InstructionKind, LoopRV

    b0, l1, l2, l3 = BlockRV(), LoopRV(), LoopRV(), LoopRV()
    trace = Trace([
        Instruction(InstructionKind.get("GetBlock"), [], ["B", "main"], [b0]),
        Instruction(InstructionKind.get("GetLoops"), [b0], [], [l1]),
        Instruction(InstructionKind.get("Split"), [l1, None, 4], [True], [l2, l3]),
    ], {})
    assert str(trace).splitlines()[2:] == [
        '  b0 = sch.get_block(name="B", func_name="main")',
        "  l1, = sch.get_loops(block=b0)",
        "  l2, l3 = sch.split(loop=l1, factors=[None, 4], preserve_unit_iters=True)"]
    assert trace.as_json()[0][2] == ["Split", ["l1", "None", 4], [True], ["l2", "l3"]]
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    sch = Schedule(te.create_prim_func([A, B]))
    trace.apply_to_schedule(sch)
    assert [sch.get(lp).extent.value for lp in sch.get_loops(sch.get_block("B"))] == [2, 4]
    assert trace.pop().same_as(trace.insts[-1]) is False and len(trace.insts) == 2
    with pytest.raises(ValueError, match="unknown instruction kind"):
        InstructionKind.get("Nope")
