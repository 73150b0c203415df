"""``Trace``: the instructions a Schedule ran and the decisions of its sampling instructions;
printable as TVM's ``apply_trace`` Python, serializable as TVM's JSON record
(``[[[kind, inputs, attrs, outputs], ...], [[inst_index, decision], ...]]``), and replayable,
with the recorded decisions or changed ones (mutation)."""

from __future__ import annotations

import json

from irlab.tir.schedule.errors import ScheduleError
from irlab.tir.schedule.handles import RV_TYPES, rv_prefix
from irlab.tir.schedule.instruction import KINDS_BY_NAME, Instruction, kind_of
from irlab.tir.schedule.primitives_layout import IndexMap

__all__ = ["Trace", "Instruction"]


def _is_rv(x):
    return isinstance(x, RV_TYPES)


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
    if isinstance(value, float):  # 1.0 prints as TVM's 1; other floats round-trip exactly
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def _name_outputs(inst, names):
    out = []
    for rv in inst.outputs:
        names[id(rv)] = f"{rv_prefix(rv)}{len(names)}"
        out.append(names[id(rv)])
    return out


def _rvs_in(value, found):
    """Add the ids of the handles in ``value`` (nested lists included) to ``found``."""
    if _is_rv(value):
        found.add(id(value))
    elif isinstance(value, (list, tuple)):
        for v in value:
            _rvs_in(v, found)


class Trace:
    """The ordered instructions of a schedule (``sch.trace``) and the decisions of its
    sampling instructions (``decisions``: instruction -> decision)."""

    def __init__(self, insts=None, decisions=None):
        self.insts = list(insts or [])
        self.decisions = dict(decisions or {})

    def __repr__(self):
        return f"Trace({len(self.insts)} instructions, {len(self.decisions)} decisions)"

    def append(self, inst, decision=None):
        self.insts.append(inst)
        if decision is not None:
            self.decisions[inst] = decision

    def pop(self):
        """Remove and return the last instruction (None when empty)."""
        if not self.insts:
            return None
        inst = self.insts.pop()
        self.decisions.pop(inst, None)
        return inst

    def get_decision(self, inst):
        """The decision recorded for ``inst`` (None if it samples nothing)."""
        return self.decisions.get(inst)

    def copy(self):
        return Trace(self.insts, self.decisions)

    def _valid_insts(self, remove_postproc):
        if not remove_postproc:
            return list(self.insts)
        out = []
        for inst in self.insts:
            if kind_of(inst).is_postproc:
                break
            out.append(inst)
        return out

    # -- printing ---------------------------------------------------------------------------
    def as_python(self, remove_postproc=False):
        """The body lines of ``apply_trace`` (TVM's ``Trace::AsPython``)."""
        names, lines = {}, []
        for inst in self._valid_insts(remove_postproc):
            args = []
            for key, value in inst.inputs:
                text = _fmt(value, names)
                args.append(text if key is None else f"{key}={text}")
            args += [f"{k}={_fmt(v, names)}" for k, v in inst.attrs]
            if inst in self.decisions:
                args.append(f"decision={_fmt(self.decisions[inst], names)}")
            outs = _name_outputs(inst, names)
            if len(outs) == 1 and kind_of(inst).returns_list:
                outs.append("")  # "l1, = sch.get_loops(...)": unpack the one-handle list
            call = f"sch.{inst.kind}({', '.join(args)})"
            lines.append(f"{', '.join(outs).rstrip()} = {call}" if outs else call)
        return lines

    def __str__(self):
        body = self.as_python() or ["pass"]
        return ("# from tvm import tir\ndef apply_trace(sch: tir.Schedule) -> None:\n"
                + "\n".join("  " + line for line in body))

    def show(self):
        print(str(self))

    # -- replay -----------------------------------------------------------------------------
    def apply_to_schedule(self, sch, remove_postproc=False, decision_provider=None):
        """Replay every instruction on ``sch``, mapping this trace's handles to the new ones.
        Sampling instructions reuse the recorded decision, or what
        ``decision_provider(inst, inputs, attrs, decision)`` returns. On an error the
        schedule is left as it was."""
        rv_map = {}

        def conv(value):
            if _is_rv(value):
                return rv_map[id(value)]
            if isinstance(value, list):
                return [conv(v) for v in value]
            if isinstance(value, tuple):
                return tuple(conv(v) for v in value)
            return value

        with sch.transaction():
            for inst in self._valid_insts(remove_postproc):
                args = [conv(v) for k, v in inst.inputs if k is None]
                kwargs = {k: conv(v) for k, v in inst.inputs if k is not None}
                kwargs.update({k: conv(v) for k, v in inst.attrs})
                if kind_of(inst).samples:
                    decision = self.decisions.get(inst)
                    if decision_provider is not None:
                        decision = decision_provider(inst, args, kwargs, decision)
                    kwargs["decision"] = decision
                result = getattr(sch, inst.kind)(*args, **kwargs)
                if inst.outputs:
                    results = result if isinstance(result, (list, tuple)) else [result]
                    for old, new in zip(inst.outputs, results):
                        rv_map[id(old)] = new

    # -- JSON -------------------------------------------------------------------------------
    def as_json(self, remove_postproc=False) -> list:
        """TVM's JSON record of the trace: ``[insts, decisions]`` with each instruction as
        ``[kind, inputs, attrs, outputs]`` (handles named b0, l1, v2...; strings among the
        inputs quoted) and each decision as ``[inst_index, decision]``."""
        names, insts, decisions = {}, [], []
        for index, inst in enumerate(self._valid_insts(remove_postproc)):
            kind = kind_of(inst)
            inputs = []
            for key in kind.inputs:
                if key == "*":
                    inputs += [_encode_input(v, names, inst) for v in inst.positional_inputs]
                elif key.startswith("*"):
                    inputs += [_encode_input(v, names, inst) for v in inst.value(key[1:])]
                else:
                    inputs.append(_encode_input(inst.value(key), names, inst))
            attrs = [_encode_attr(inst.value(key), inst) for key in kind.attrs]
            insts.append([kind.name, inputs, attrs, _name_outputs(inst, names)])
            if inst in self.decisions:
                decisions.append([index, _encode_attr(self.decisions[inst], inst)])
        return [insts, decisions]

    @staticmethod
    def apply_json_to_schedule(json_obj, sch) -> None:
        """Replay a trace given as ``as_json`` made it (or as parsed back from text) on
        ``sch``. A malformed record raises ScheduleError and leaves ``sch`` unchanged."""
        insts, decisions = _parse_record(json_obj)
        named = {}
        with sch.transaction():
            for index, entry in enumerate(insts):
                args, kwargs, outputs, kind = _decode_inst(entry, index, named)
                if kind.samples:
                    kwargs["decision"] = decisions.get(index)
                result = getattr(sch, kind.method)(*args, **kwargs)
                results = result if isinstance(result, (list, tuple)) else [result]
                if outputs and len(results) != len(outputs):
                    raise ScheduleError(f"trace JSON instruction {index} ({kind.name}) names "
                                        f"{len(outputs)} outputs but made {len(results)}")
                named.update(zip(outputs, results))

    # -- transformations --------------------------------------------------------------------
    def with_decision(self, inst, decision, remove_postproc) -> "Trace":
        """A new trace with ``inst``'s decision replaced (TVM's ``Trace.with_decision``)."""
        if inst not in self.insts:
            raise ScheduleError(f"{inst!r} is not an instruction of this trace")
        insts = self._valid_insts(remove_postproc)
        kept = set(insts)
        decisions = {i: d for i, d in self.decisions.items() if i in kept}
        decisions[inst] = decision
        return Trace(insts, decisions)

    def simplified(self, remove_postproc) -> "Trace":
        """The trace without pure instructions (getters, samplers) whose outputs nothing
        uses (TVM's ``Trace.simplified``)."""
        used, kept = set(), []
        for inst in reversed(self._valid_insts(remove_postproc)):
            if kind_of(inst).is_pure and not any(id(rv) in used for rv in inst.outputs):
                continue
            kept.append(inst)
            for _, value in inst.inputs + inst.attrs:
                _rvs_in(value, used)
        kept.reverse()
        alive = set(kept)
        return Trace(kept, {i: d for i, d in self.decisions.items() if i in alive})


# -- JSON encoding helpers --------------------------------------------------------------------
def _unserializable(value, inst):
    return ScheduleError(f"the trace cannot be written as JSON: {inst.kind} has a "
                         f"{type(value).__name__} argument ({value!r})")


def _encode_input(value, names, inst):
    if _is_rv(value):
        if id(value) not in names:
            raise ScheduleError(f"the trace cannot be written as JSON: {inst.kind} uses "
                                f"{value!r}, which no earlier instruction made")
        return names[id(value)]
    if value is None:
        return "None"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return [_encode_input(v, names, inst) for v in value]
    if isinstance(value, IndexMap):  # as its lambda text, which IndexMap reads back
        return f'"{value}"'
    return _encode_attr(value, inst)


def _encode_attr(value, inst):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_encode_attr(v, inst) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _encode_attr(v, inst) for k, v in value.items()}
    raise _unserializable(value, inst)


def _parse_record(json_obj):
    """(instruction entries, {index: decision}) of a JSON record, or a ScheduleError."""
    if not (isinstance(json_obj, (list, tuple)) and len(json_obj) == 2
            and all(isinstance(x, (list, tuple)) for x in json_obj)):
        raise ScheduleError("a trace JSON record must be [instructions, decisions], got "
                            f"{str(json_obj)[:200]}")
    insts, raw = json_obj
    decisions = {}
    for entry in raw:
        if not (isinstance(entry, (list, tuple)) and len(entry) == 2
                and isinstance(entry[0], int) and 0 <= entry[0] < len(insts)):
            raise ScheduleError(f"a trace JSON decision must be [inst_index, decision] with an "
                                f"index below {len(insts)}, got {entry!r}")
        decisions[entry[0]] = entry[1]
    return insts, decisions


def _decode_value(value, named, where):
    if isinstance(value, list):
        return [_decode_value(v, named, where) for v in value]
    if not isinstance(value, str):
        return value
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    if value == "None":
        return None
    if value not in named:
        raise ScheduleError(f"{where} uses {value!r}, which no earlier instruction defines")
    return named[value]


def _decode_inst(entry, index, named):
    """(args, kwargs, output names, kind) of the ``index``-th JSON instruction."""
    if not (isinstance(entry, (list, tuple)) and len(entry) == 4
            and isinstance(entry[0], str) and all(isinstance(x, list) for x in entry[1:])
            and all(isinstance(o, str) for o in entry[3])):
        raise ScheduleError(f"trace JSON instruction {index} must be [kind, inputs, attrs, "
                            f"outputs], got {str(entry)[:200]}")
    name, inputs, attrs, outputs = entry
    kind = KINDS_BY_NAME.get(name)
    if kind is None:
        raise ScheduleError(f"trace JSON instruction {index}: unknown instruction kind "
                            f"{name!r}")
    where = f"trace JSON instruction {index} ({name})"
    values = [_decode_value(v, named, where) for v in inputs]
    args, kwargs, pos = [], {}, 0
    for key in kind.inputs:
        if key == "*":
            args, pos = values[pos:], len(values)
        elif key.startswith("*"):
            kwargs[key[1:]], pos = values[pos:], len(values)
        elif pos < len(values):
            kwargs[key], pos = values[pos], pos + 1
    if pos != len(values) or len(attrs) > len(kind.attrs):
        raise ScheduleError(f"{where}: {len(inputs)} inputs and {len(attrs)} attrs do not "
                            f"match its inputs {list(kind.inputs)}, attrs {list(kind.attrs)}")
    kwargs.update(zip(kind.attrs, attrs))
    return args, kwargs, outputs, kind
