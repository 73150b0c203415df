"""``ProfileReport``: what ``VirtualMachine.profile`` measured, one row per Call instruction."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

from irlab.runtime.ndarray import NDArray
from irlab.runtime.relax_vm.bytecode import VMFuncKind


@dataclass
class ProfileRow:
    """One Call instruction: where it is, what it calls, how often and how long (seconds).
    A call of a VM function includes the time of the instructions it ran."""

    function: str
    pc: int
    callee: str
    is_vm_function: bool
    count: int
    seconds: float
    arg_shapes: str


class ProfileReport:
    """Rows in execution order; ``str()`` prints a table, ``csv()`` the same as CSV."""

    def __init__(self, records, total_seconds):
        rows: dict = {}
        for function, pc, callee, kind, seconds, values in records:
            row = rows.get((function, pc))
            if row is None:
                shapes = ", ".join(_describe(v) for v in values)
                row = rows[(function, pc)] = ProfileRow(function, pc, callee,
                                                        kind == VMFuncKind.VM_FUNC, 0, 0.0,
                                                        shapes)
            row.count += 1
            row.seconds += seconds
        self.rows = list(rows.values())
        self.total_seconds = total_seconds

    def by_callee(self) -> dict:
        """Seconds per called function (kernels and builtins; VM functions excluded)."""
        totals: dict = {}
        for row in self.rows:
            if not row.is_vm_function:
                totals[row.callee] = totals.get(row.callee, 0.0) + row.seconds
        return totals

    def table(self) -> str:
        header = f"{'function:pc':<16} {'callee':<36} {'calls':>5} {'Duration (us)':>13} " \
                 f"{'percent':>7}  arguments"
        lines = [header, "-" * len(header)]
        for row in self.rows:
            percent = 100.0 * row.seconds / self.total_seconds if self.total_seconds else 0.0
            callee = row.callee + (" (vm)" if row.is_vm_function else "")
            lines.append(f"{row.function + ':' + str(row.pc):<16} {callee:<36} {row.count:>5} "
                         f"{row.seconds * 1e6:>13.1f} {percent:>6.1f}%  {row.arg_shapes}")
        lines.append("-" * len(header))
        lines.append(f"{'total':<16} {'':<36} {'':>5} {self.total_seconds * 1e6:>13.1f}")
        return "\n".join(lines)

    def csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["function", "pc", "callee", "calls", "seconds", "arguments"])
        for row in self.rows:
            writer.writerow([row.function, row.pc, row.callee, row.count, row.seconds,
                             row.arg_shapes])
        return out.getvalue()

    def json(self) -> str:
        """The rows and the total as JSON (durations in microseconds)."""
        rows = [{"function": r.function, "pc": r.pc, "callee": r.callee, "calls": r.count,
                 "duration_us": r.seconds * 1e6, "arguments": r.arg_shapes}
                for r in self.rows]
        return json.dumps({"calls": rows, "total_us": self.total_seconds * 1e6})

    def __str__(self):
        return self.table()

    def __repr__(self):
        return f"ProfileReport({len(self.rows)} instructions, {self.total_seconds * 1e3:.3f} ms)"


def _describe(value) -> str:
    if isinstance(value, NDArray):
        return f"{value.dtype}{list(value.shape)}"
    if value is None:
        return "-"
    if hasattr(value, "nbytes") and type(value).__name__ == "Storage":
        return f"storage[{value.nbytes}B]"
    if type(value).__name__ == "VirtualMachine":
        return "vm"
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


__all__ = ["ProfileReport", "ProfileRow"]
