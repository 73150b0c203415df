"""CPU schedule of softmax / log-softmax: rows (the loops before the axis) in parallel, each
row's max, exp and sum computed under the row loop, the elementwise stages vectorized."""

from __future__ import annotations

from irlab.topi.x86.norm import schedule_rows


def schedule_softmax(sch, outs, target):
    """Softmax / log-softmax: rows are the loops before the softmax axis."""
    out = outs[0]
    axis = int(out.op.attrs.get("axis", len(out.shape) - 1)) if out.op.attrs else \
        len(out.shape) - 1
    schedule_rows(sch, out, target, axis)


__all__ = ["schedule_softmax"]
