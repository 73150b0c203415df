"""``Trace``: the instructions a Schedule ran, printable as TVM's ``apply_trace`` Python."""

from __future__ import annotations

import json


class Instruction:
    """One primitive call: ``kind`` (method name), ``inputs`` (RVs, values, lists),
    ``attrs`` (keyword arguments, in printing order) and ``outputs`` (RVs)."""

    __slots__ = ("kind", "inputs", "attrs", "outputs", "positional")

    def __init__(self, kind, inputs, attrs, outputs, positional=False):
        self.kind = kind
        self.inputs = inputs        # list of (keyword or None, value)
        self.attrs = attrs          # list of (keyword, value)
        self.outputs = list(outputs)
        self.positional = positional

    def __repr__(self):
        return f"Instruction({self.kind})"


def _is_rv(x):
    from irlab.tir.schedule.schedule import BlockRV, LoopRV

    return isinstance(x, (BlockRV, LoopRV))


def _fmt(value, names):
    if _is_rv(value):
        return names[id(value)]
    if isinstance(value, tuple):  # TVM prints a buffer index pair as a tuple
        return "(" + ", ".join(_fmt(v, names) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v, names) for v in value) + "]"
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_fmt(k, names)}: {_fmt(v, names)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, float):
        return repr(value)
    return str(value)


class Trace:
    """The ordered instructions of a schedule (``sch.trace``)."""

    def __init__(self, insts=None):
        self.insts = list(insts or [])

    def append(self, inst):
        self.insts.append(inst)

    def copy(self):
        return Trace(self.insts)

    def as_python(self, remove_postproc=False):
        """The body lines of ``apply_trace`` (TVM's ``Trace::AsPython``)."""
        names, lines, counter = {}, [], 0
        for inst in self.insts:
            if remove_postproc and inst.kind == "enter_postproc":
                break
            outs = []
            for rv in inst.outputs:
                prefix = "b" if type(rv).__name__ == "BlockRV" else "l"
                names[id(rv)] = f"{prefix}{counter}"
                counter += 1
                outs.append(names[id(rv)])
            args = []
            for key, value in inst.inputs:
                text = _fmt(value, names)
                args.append(text if key is None else f"{key}={text}")
            args += [f"{k}={_fmt(v, names)}" for k, v in inst.attrs]
            call = f"sch.{inst.kind}({', '.join(args)})"
            lines.append(f"{', '.join(outs)} = {call}" if outs else call)
        return lines

    def __str__(self):
        body = self.as_python() or ["pass"]
        return ("# from tvm import tir\ndef apply_trace(sch: tir.Schedule) -> None:\n"
                + "\n".join("  " + line for line in body))

    def show(self):
        print(str(self))

    def apply_to_schedule(self, sch, remove_postproc=False):
        """Replay every instruction on ``sch``, mapping this trace's RVs to the new ones."""
        rv_map = {}

        def conv(value):
            if _is_rv(value):
                return rv_map[id(value)]
            if isinstance(value, list):
                return [conv(v) for v in value]
            if isinstance(value, tuple):
                return tuple(conv(v) for v in value)
            return value

        for inst in self.insts:
            if remove_postproc and inst.kind == "enter_postproc":
                break
            args, kwargs = [], {}
            for key, value in inst.inputs:
                if key is None:
                    args.append(conv(value))
                else:
                    kwargs[key] = conv(value)
            kwargs.update({k: conv(v) for k, v in inst.attrs})
            result = getattr(sch, inst.kind)(*args, **kwargs)
            if inst.outputs:
                results = result if isinstance(result, (list, tuple)) else [result]
                for old, new in zip(inst.outputs, results):
                    rv_map[id(old)] = new
