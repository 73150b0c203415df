"""``CostModel`` interface and ``RandomModel`` (TVM's ``ms.cost_model``)."""

from __future__ import annotations

import numpy as np


class CostModel:
    """Predicts how good candidates are (higher is better) and learns from measurements."""

    def update(self, context, candidates, results) -> None:
        raise NotImplementedError

    def predict(self, context, candidates) -> np.ndarray:
        raise NotImplementedError

    def load(self, path) -> None:
        raise NotImplementedError

    def save(self, path) -> None:
        raise NotImplementedError


class RandomModel(CostModel):
    """Uniform random scores in ``[0, max_range)``: the baseline a learned model must beat."""

    def __init__(self, *, seed=None, path=None, max_range=100):
        self.max_range = max_range
        self._rng = np.random.default_rng(seed)
        if path is not None:
            self.load(path)

    def update(self, context, candidates, results) -> None:
        pass

    def predict(self, context, candidates) -> np.ndarray:
        return self._rng.uniform(0, self.max_range, len(candidates))

    def load(self, path) -> None:
        state = np.load(path, allow_pickle=True).item()
        self._rng.bit_generator.state = state

    def save(self, path) -> None:
        with open(path, "wb") as f:
            np.save(f, np.array(self._rng.bit_generator.state, dtype=object))

    def __repr__(self):
        return f"RandomModel(max_range={self.max_range})"
