"""CPU schedule of softmax / log-softmax: rows (the loops before the axis) in parallel, each
row's max, exp and sum computed under the row loop, the elementwise stages vectorized."""

from __future__ import annotations

from irlab.topi.x86.norm import row_axis, schedule_rows


def schedule_softmax(sch, outs, target):
    """Softmax / log-softmax: rows are the loops before the softmax axis."""
    out = outs[0]
    schedule_rows(sch, out, target, row_axis(out, len(out.shape) - 1))


__all__ = ["schedule_softmax"]
