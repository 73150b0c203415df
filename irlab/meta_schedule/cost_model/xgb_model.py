"""``XGBModel``: a gradient-boosted-trees cost model on ``PerStoreFeature`` features.

Each candidate's per-store features are pooled into one vector (max and mean over stores,
and the store count); the target is normalized throughput, ``best measured time / time``
(1 for the fastest so far, 0 for a failed run), as TVM's model learns. XGBoost is the
learner; irlab supplies the features. Until ``num_warmup_samples`` measurements exist the
model has nothing to learn from and predicts random scores.
"""

from __future__ import annotations

import os

import numpy as np

from irlab.errors import IrlabError
from irlab.meta_schedule.cost_model.cost_model import CostModel
from irlab.meta_schedule.database.workload import MAX_RUN_SECS


class XGBConfig:
    """Booster parameters (TVM's names and defaults, but ``nthread=1``: a tuner's training
    sets are tens to a few thousand rows, on which OpenMP's thread start-ups and barriers
    cost more than the trees, worst on a busy machine: 200 rounds on 48 rows took 11.7 s of
    CPU with every core and 0.14 s with one, on 2 cores at load 3. ``None``: all cores.)"""

    def __init__(self, max_depth=10, gamma=0.001, min_child_weight=0, eta=0.2,
                 nthread=1, num_boost_round=200):
        self.max_depth = max_depth
        self.gamma = gamma
        self.min_child_weight = min_child_weight
        self.eta = eta
        self.nthread = nthread
        self.num_boost_round = num_boost_round

    def params(self, seed):
        params = {"max_depth": self.max_depth, "gamma": self.gamma,
                  "min_child_weight": self.min_child_weight, "eta": self.eta,
                  "objective": "reg:squarederror", "seed": seed, "verbosity": 0}
        if self.nthread:
            params["nthread"] = self.nthread
        return params


def _xgboost():
    try:
        import xgboost
    except ImportError:
        raise IrlabError("XGBModel needs XGBoost: pip install 'irlab[tune]' (or xgboost-cpu)") \
            from None
    return xgboost


class XGBModel(CostModel):
    """TVM's ``ms.cost_model.XGBModel``: ``update`` learns from measured candidates,
    ``predict`` scores new ones (higher is better)."""

    def __init__(self, *, extractor=None, config=None, num_warmup_samples=16,
                 early_stopping_rounds=50, verbose_eval=25, average_peak_n=32,
                 adaptive_training=True, seed=0, path=None):
        from irlab.meta_schedule.feature_extractor import PerStoreFeature

        self.extractor = extractor or PerStoreFeature()
        self.config = config or XGBConfig()
        self.num_warmup_samples = num_warmup_samples
        self.early_stopping_rounds = early_stopping_rounds
        self.average_peak_n = average_peak_n
        self.adaptive_training = adaptive_training
        self.seed = seed
        self.features = []     # pooled feature vectors of measured candidates
        self.costs = []        # their mean seconds (MAX_RUN_SECS: failed)
        self.booster = None
        self._trained_on = 0
        self._rng = np.random.default_rng(seed)
        self._cache = {}
        if path is not None:
            self.load(path)

    # -- features ------------------------------------------------------------------------
    def pooled_features(self, context, candidates) -> np.ndarray:
        """One row per candidate: max and mean of its stores' features, and their count."""
        rows = []
        for cand in candidates:
            key = id(cand.sch)
            if key not in self._cache:
                if len(self._cache) > 4096:
                    self._cache.clear()
                per_store = self.extractor.extract_from(context, [cand])[0]
                self._cache[key] = (cand.sch, _pool(per_store, self.extractor.num_features))
            rows.append(self._cache[key][1])
        return np.asarray(rows, dtype="float32").reshape(len(rows), -1)

    # -- learning ------------------------------------------------------------------------
    def update(self, context, candidates, results) -> None:
        if len(candidates) != len(results):
            raise IrlabError(f"XGBModel.update: {len(candidates)} candidates but "
                             f"{len(results)} results")
        if not candidates:
            return
        self.features.extend(self.pooled_features(context, candidates))
        for result in results:
            secs = result.run_secs
            ok = secs and all(s < MAX_RUN_SECS for s in secs)
            self.costs.append(float(np.mean(secs)) if ok else MAX_RUN_SECS)
        if len(self.costs) < self.num_warmup_samples:
            return
        if self.adaptive_training and self.booster is not None \
                and len(self.costs) < 1.2 * self._trained_on:
            return
        self._train()

    def _train(self):
        xgb = _xgboost()
        costs = np.asarray(self.costs)
        best = costs.min()
        targets = np.where(costs < MAX_RUN_SECS, best / costs, 0.0)
        data = xgb.DMatrix(np.asarray(self.features, dtype="float32"), label=targets)
        self.booster = xgb.train(self.config.params(self.seed), data,
                                 num_boost_round=self.config.num_boost_round)
        self._trained_on = len(self.costs)

    def predict(self, context, candidates) -> np.ndarray:
        if not candidates:
            return np.zeros(0)
        if self.booster is None:
            return self._rng.uniform(0, 1e-3, len(candidates))
        xgb = _xgboost()
        return self.booster.predict(xgb.DMatrix(self.pooled_features(context, candidates)))

    # -- saving --------------------------------------------------------------------------
    def save(self, path) -> None:
        """One ``.npz`` file: the training data and the booster."""
        raw = bytes(self.booster.save_raw("json")) if self.booster is not None else b""
        with open(os.fspath(path), "wb") as f:
            np.savez(f, features=np.asarray(self.features, dtype="float32"),
                     costs=np.asarray(self.costs), booster=np.frombuffer(raw, dtype="uint8"),
                     trained_on=np.asarray(self._trained_on))

    def load(self, path) -> None:
        try:
            with np.load(os.fspath(path)) as data:
                features, costs = data["features"], data["costs"]
                raw, trained_on = data["booster"].tobytes(), int(data["trained_on"])
        except (OSError, KeyError, ValueError) as err:
            raise IrlabError(f"XGBModel.load: {path} is not a saved XGBModel ({err})") from None
        self.features = list(features)
        self.costs = [float(c) for c in costs]
        self._trained_on = trained_on
        self.booster = None
        if raw:
            self.booster = _xgboost().Booster()
            self.booster.load_model(bytearray(raw))

    def __repr__(self):
        state = "untrained" if self.booster is None else f"trained on {self._trained_on}"
        return f"XGBModel({len(self.costs)} samples, {state})"


def _pool(per_store, width):
    if per_store.shape[0] == 0:
        return np.zeros(2 * width + 1, dtype="float32")
    return np.concatenate([per_store.max(axis=0), per_store.mean(axis=0),
                           [np.log2(1 + per_store.shape[0])]]).astype("float32")


