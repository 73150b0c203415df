"""``tvm.tir.schedule.testing``: checks TVM's schedule tests call on every schedule they make."""

from __future__ import annotations

import json

from irlab.ir.module import IRModule
from irlab.ir.structural import assert_structural_equal
from irlab.tir.schedule.schedule import Schedule
from irlab.tir.schedule.trace import Trace


def _fresh(mod) -> Schedule:
    return Schedule(mod if isinstance(mod, IRModule) else IRModule({"main": mod}))


def verify_trace_roundtrip(sch: Schedule, mod, *, debug_mask="all",
                           text_format=("python", "json")) -> Schedule:
    """The schedule ``sch`` made from ``mod`` is reproduced by its trace, replayed on a fresh
    schedule of ``mod`` and, for ``"python"`` in ``text_format``, by executing the trace's
    printed Python (``str(sch.trace)``); the result also survives a TVMScript round trip.
    With ``"json"`` in ``text_format``, the trace's JSON record (through ``json.dumps``)
    replays to the same module too. Returns the replayed schedule."""
    from irlab import tir
    from irlab.script import from_source

    replayed = _fresh(mod)
    sch.trace.apply_to_schedule(replayed, remove_postproc=False)
    assert_structural_equal(replayed.mod, sch.mod)
    formats = (text_format,) if isinstance(text_format, str) else tuple(text_format)
    if "python" in formats:
        namespace = {"tir": tir, "T": None}
        exec(str(sch.trace), namespace)  # defines apply_trace(sch)
        from_text = _fresh(mod)
        namespace["apply_trace"](from_text)
        assert_structural_equal(from_text.mod, sch.mod)
    if "json" in formats:
        from_json = _fresh(mod)
        Trace.apply_json_to_schedule(json.loads(json.dumps(sch.trace.as_json())), from_json)
        assert_structural_equal(from_json.mod, sch.mod)
    assert_structural_equal(from_source(sch.mod.script()), sch.mod)
    return replayed


__all__ = ["verify_trace_roundtrip"]
