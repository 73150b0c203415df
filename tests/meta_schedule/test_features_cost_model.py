"""ms.feature_extractor.PerStoreFeature on known TIR; XGBModel learns a synthetic cost;
RandomModel; save/load."""

import itertools
import math

import numpy as np
import pytest

import irlab as tvm
from irlab.errors import IrlabError
from irlab.meta_schedule.cost_model import RandomModel, XGBModel
from irlab.meta_schedule.feature_extractor import PerStoreFeature
from irlab.meta_schedule.runner import RunnerResult
from irlab.meta_schedule.search_strategy import MeasureCandidate
from ms_workloads import gemm_mod

pytest.importorskip("xgboost", reason="XGBModel needs xgboost (irlab[tune]; CI installs it)")


def scheduled_gemm(i_factor, j_factor, vectorize, parallel, n=64):
    sch = tvm.tir.Schedule(gemm_mod(n))
    i, j, k = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, i_factor])
    jo, ji = sch.split(j, [None, j_factor])
    sch.reorder(io, jo, k, ii, ji)
    if parallel:
        sch.parallel(io)
    if vectorize:
        sch.vectorize(ji)
    return sch


def named(extractor, row):
    return dict(zip(extractor.feature_names, row))


def test_features_of_a_vectorized_parallel_gemm():
    fx = PerStoreFeature(buf_extract=3)
    rows = fx.features_of(scheduled_gemm(8, 16, True, True).mod)
    assert rows.shape == (2, fx.num_features)  # the init store and the update store
    init, update = (named(fx, r) for r in rows)
    log = lambda x: math.log2(1 + x)  # noqa: E731
    assert update["num_loops"] == 5 and update["executions"] == pytest.approx(log(64 ** 3))
    assert update["vector_lanes"] == pytest.approx(log(16)) and update["vector_innermost"] == 1
    assert update["parallel_count"] == 1 and update["parallel_outermost"] == 1
    assert update["float_mul"] == pytest.approx(log(64 ** 3))
    assert update["float_add_sub"] == pytest.approx(log(64 ** 3))
    assert init["float_mul"] == 0 and init["B0.is_write"] == 1
    # accesses sorted by bytes (all equal here): A[i, k] does not move with the inner j loop,
    # B[k, j] and C[i, j] do, with unit stride; C is read and written
    buffers = [{n.split(".")[1]: update[n] for n in update if n.startswith(f"B{b}.")}
               for b in range(3)]
    assert sorted(b["stride_is_1"] for b in buffers) == [0, 1, 1]
    assert sum(b["is_read_write"] for b in buffers) == 1
    a = next(b for b in buffers if b["stride_is_0"])
    assert a["reuse_loop_extent"] == pytest.approx(log(16))


def test_features_tell_schedules_apart():
    fx = PerStoreFeature()
    plain = fx.features_of(gemm_mod(64))
    tiled = fx.features_of(scheduled_gemm(8, 16, True, False).mod)
    assert plain.shape == tiled.shape
    assert not np.allclose(plain, tiled)


def synthetic_seconds(i_factor, j_factor, vectorize, parallel):
    """A made-up machine: vector lanes and parallelism pay, tiny i tiles cost."""
    lanes = j_factor if vectorize else 1
    return 1e-3 * (1.0 / lanes + (0.0 if parallel else 0.8) + 0.3 / i_factor)


def spearman(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def test_xgb_model_learns_to_rank_a_synthetic_cost(tmp_path):
    space = list(itertools.product([1, 2, 4, 8], [1, 2, 4, 8, 16, 32], [False, True],
                                   [False, True]))
    rng = np.random.default_rng(0)
    order = rng.permutation(len(space))
    train, test = [space[i] for i in order[:64]], [space[i] for i in order[64:]]
    cands = lambda pts: [MeasureCandidate(scheduled_gemm(*p), []) for p in pts]  # noqa: E731
    model = XGBModel(num_warmup_samples=8, seed=0)
    train_c = cands(train)
    results = [RunnerResult([synthetic_seconds(*p)]) for p in train]
    assert model.booster is None
    model.update(None, train_c, results)
    assert model.booster is not None
    test_c = cands(test)
    predicted = model.predict(None, test_c)
    truth = [1 / synthetic_seconds(*p) for p in test]
    assert spearman(predicted, truth) > 0.8
    # save / load gives the same predictions
    model.save(tmp_path / "model.npz")
    again = XGBModel(path=tmp_path / "model.npz")
    assert np.allclose(again.predict(None, test_c), predicted)
    assert len(again.costs) == 64


def test_failed_runs_count_as_worst_and_random_model():
    model = XGBModel(num_warmup_samples=2)
    cands = [MeasureCandidate(scheduled_gemm(8, f, True, True), []) for f in (4, 8, 16)]
    model.update(None, cands, [RunnerResult(None, "crash"), RunnerResult([1e-3]),
                               RunnerResult([2e-3])])
    assert model.costs[0] == 1e10
    with pytest.raises(IrlabError, match="3 candidates but 2 results"):
        model.update(None, cands, [RunnerResult([1.0])] * 2)
    rand = RandomModel(seed=1)
    scores = rand.predict(None, cands)
    assert scores.shape == (3,) and (0 <= scores).all() and (scores < 100).all()
