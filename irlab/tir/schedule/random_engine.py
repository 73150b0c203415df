"""``RandomEngine``: the reproducible random state of a schedule (a Lehmer generator, like
TVM's ``LinearCongruentialEngine``: the whole state is one integer, so it forks and
serializes trivially and every sampling decision is reproducible from the seed)."""

from __future__ import annotations

import os

_MODULUS = 2**31 - 1
_MULTIPLIER = 48271


def _mix(x: int) -> int:
    """SplitMix64's finalizer: nearby seeds (0, 1, 2...) become unrelated states. A Lehmer
    generator started from states s and 2s draws x and 2x mod m forever after, so its
    seeds must not be used as states directly."""
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


def normalize_seed(seed) -> int:
    """A valid state (in [1, 2**31 - 2]) from ``seed``; None or -1 draws one from the
    operating system."""
    if seed is None or seed == -1:
        seed = int.from_bytes(os.urandom(8), "little")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a random seed must be a non-negative integer or -1, got {seed!r}")
    return _mix(seed) % (_MODULUS - 1) + 1


class RandomEngine:
    """A Lehmer (minimal standard) generator; ``state`` is a plain int in [1, 2**31 - 2]."""

    __slots__ = ("state",)

    def __init__(self, seed=None):
        self.state = normalize_seed(seed)

    def __repr__(self):
        return f"RandomEngine(state={self.state})"

    def next(self) -> int:
        self.state = self.state * _MULTIPLIER % _MODULUS
        return self.state

    def sample_int(self, low: int, high: int) -> int:
        """A uniform integer in [low, high)."""
        if high <= low:
            raise ValueError(f"empty range [{low}, {high})")
        return low + self.next() % (high - low)

    def sample_uniform(self) -> float:
        """A uniform float in [0, 1)."""
        return (self.next() - 1) / (_MODULUS - 1)

    def choice(self, probs) -> int:
        """An index drawn with (unnormalized, non-negative) weights ``probs``."""
        total = float(sum(probs))
        x = self.sample_uniform() * total
        acc = 0.0
        for i, p in enumerate(probs):
            acc += p
            if x < acc:
                return i
        return max(i for i, p in enumerate(probs) if p > 0)

    def sample_without_replacement(self, n: int, k: int) -> list:
        """``k`` distinct integers of [0, n), in sampled order."""
        pool = list(range(n))
        for i in range(k):
            j = self.sample_int(i, n)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]

    def fork_seed(self) -> int:
        """A seed for an independent engine (advances this one)."""
        return (self.next() * 32767) % 1999999973
