"""``EvaluatorConfig``: how a runner times one candidate (TVM's names and defaults)."""

from __future__ import annotations

from irlab.errors import IrlabError


class EvaluatorConfig:
    """``number`` calls per measurement, ``repeat`` measurements, each grown to last at
    least ``min_repeat_ms``. ``enable_cpu_cache_flush`` is accepted for TVM's signature; irlab
    times warm caches."""

    def __init__(self, number=3, repeat=1, min_repeat_ms=40, enable_cpu_cache_flush=False):
        for name, value in (("number", number), ("repeat", repeat)):
            if int(value) < 1:
                raise IrlabError(f"EvaluatorConfig: {name} must be >= 1, got {value}")
        self.number = int(number)
        self.repeat = int(repeat)
        self.min_repeat_ms = float(min_repeat_ms)
        self.enable_cpu_cache_flush = bool(enable_cpu_cache_flush)

    def __repr__(self):
        return (f"EvaluatorConfig(number={self.number}, repeat={self.repeat}, "
                f"min_repeat_ms={self.min_repeat_ms:g})")
