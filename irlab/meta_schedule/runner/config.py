"""``EvaluatorConfig``: how a runner times one candidate (TVM's names and defaults)."""

from __future__ import annotations

from irlab.errors import IrlabError


class EvaluatorConfig:
    """``number`` calls per measurement, ``repeat`` measurements, each grown to last at
    least ``min_repeat_ms``. ``enable_cpu_cache_flush``: before each measurement the
    candidate's inputs are evicted from the CPU caches (``f_preproc``, TVM's
    ``cache_flush_cpu_non_first_arg``), so a kernel is timed as a network runs it, its inputs
    not left in the caches by its previous call; as in TVM, it takes ``number=1`` for every
    call to start cold (the later calls of a measurement find the caches warm again)."""

    def __init__(self, number=3, repeat=1, min_repeat_ms=40, enable_cpu_cache_flush=False):
        for name, value in (("number", number), ("repeat", repeat)):
            if int(value) < 1:
                raise IrlabError(f"EvaluatorConfig: {name} must be >= 1, got {value}")
        self.number = int(number)
        self.repeat = int(repeat)
        self.min_repeat_ms = float(min_repeat_ms)
        self.enable_cpu_cache_flush = bool(enable_cpu_cache_flush)

    @property
    def f_preproc(self):
        """The ``time_evaluator`` preprocessing this config asks for (None: none)."""
        if not self.enable_cpu_cache_flush:
            return None
        import irlab.runtime.cache_flush  # noqa: F401  (registers the function)

        return "cache_flush_cpu_non_first_arg"

    def __repr__(self):
        flush = ", enable_cpu_cache_flush=True" if self.enable_cpu_cache_flush else ""
        return (f"EvaluatorConfig(number={self.number}, repeat={self.repeat}, "
                f"min_repeat_ms={self.min_repeat_ms:g}{flush})")
