"""A VM function resolved once into a flat list of prebound Python closures (what the VM runs).

Each instruction becomes one closure over the register file, with its callee, its argument
registers and its destination bound: no decoding, no dispatch by opcode per step. Constants,
immediates and function values live in slots after the registers, so every argument is a
register read. Builtins with a fast form for their constant arguments (``specialize``) get it;
compiled kernels are bound to their fixed arguments (``CompiledFunction.bind``), so only the
arguments that change from call to call are checked.

**Frames: storage reused across calls.** An allocation whose arguments are all constant
(``alloc_shape_heap``, ``alloc_storage`` of a static size, and ``alloc_tensor`` of a static
shape in such a storage: what StaticPlanBlockMemory plans) runs once per *frame*, not once
per call. A frame holds those buffers and the closures bound to
them; a call takes a free frame (or makes one) and gives it back when it returns. A buffer
must never be overwritten while someone still holds it, so on return:

* a returned tensor that lives in the frame's storage is copied out (the caller owns it);
* if anything else still holds one of the frame's buffers (a packed function kept an argument,
  a closure captured one, a profile keeps its values), the frame is dropped, not reused --
  TVM's pooled allocator likewise reuses memory only once nothing refers to it.

A call that fails drops its frame too. Concurrent and recursive calls each take their own
frame. Functions with ``If``/``Goto`` run their closures in a pc loop; one that jumps back
keeps nothing across calls.
"""

from __future__ import annotations

import sys
from operator import itemgetter

import numpy as np

from irlab.errors import IrlabError, VMError
from irlab.runtime.ndarray import ALIGNMENT, NDArray
from irlab.runtime.relax_vm.builtin import read_if_cond
from irlab.runtime.relax_vm.bytecode import ArgKind, Call, Goto, If, Ret, SpecialReg
from irlab.runtime.relax_vm.memory import Storage
from irlab.runtime.relax_vm.specialize import fast_form, is_reusable_allocation


class ResolvedFunction:
    """VM function ``info`` (bytecode ``code``) ready to run: ``run(args)``.

    ``callees[k]`` is what function-table entry ``k`` calls (VM functions included);
    ``names[k]`` its name; ``constant(arg)`` the value of a non-register argument. With
    ``observe(pc, index, callee) -> callable`` every Call goes through the callable it returns
    (the profiler, instruments) and nothing is specialized or kept across calls."""

    def __init__(self, info, code, callees, names, constant, observe=None):
        self.name = info.name
        self.num_args = info.num_args
        self.param_names = tuple(info.param_names)
        self.names = names
        self.callees = callees
        self.observe = observe
        size = self.num_registers = info.register_file_size
        self.sink = size  # where a dropped result goes
        self.initial = [None] * (size + 1)  # registers, the sink, then constants
        self.code = self._decode(code, constant)
        self.straight = all(c[0] is Call or c[0] is Ret for c in self.code)
        if self.straight:
            ret = next((pc for pc, c in enumerate(self.code) if c[0] is Ret), None)
            if ret is None:
                raise VMError(f"{self.name}: the bytecode has no ret")
            self.code, self.result = self.code[:ret], self.code[ret][1]
        self.hoisted = self._hoistable() if observe is None else set()
        self.frames: list = []  # free frames

    def _decode(self, code, constant):
        """The instructions as tuples whose arguments are slots of the register file (a
        constant, an immediate or a function value gets a slot after the sink)."""
        slots: dict = {}  # constant key -> slot

        def slot(arg):
            if arg.kind == ArgKind.REGISTER and arg.value < SpecialReg.VOID_ARG:
                return arg.value
            void = arg.kind == ArgKind.REGISTER and arg.value == SpecialReg.VOID_ARG
            key = ("void",) if void else (int(arg.kind), arg.value)
            if key not in slots:
                slots[key] = len(self.initial)
                self.initial.append(None if void else constant(arg))
            return slots[key]

        decoded = []
        for instr in code:
            if type(instr) is Call:
                dst = instr.dst.value
                decoded.append((Call, instr.func_idx, tuple(slot(a) for a in instr.args),
                                self.sink if dst >= SpecialReg.VOID_ARG else dst))
            elif type(instr) is Ret:
                decoded.append((Ret, slot(instr.result)))
            elif type(instr) is Goto:
                decoded.append((Goto, instr.offset))
            elif type(instr) is If:
                decoded.append((If, slot(instr.cond), instr.false_offset))
            else:
                raise VMError(f"{self.name}: unknown instruction {instr!r}")
        return decoded

    # -- what may be kept across calls ---------------------------------------------------
    def _hoistable(self):
        """The pcs of allocations with constant arguments whose register nothing else
        writes (their value is the same at every call while a frame is reused). None in a
        function that jumps back (an allocation there may run more than once a call)."""
        if any((c[0] is Goto and c[1] <= 0) or (c[0] is If and c[2] <= 0) for c in self.code):
            return set()
        writes: dict = {}
        for c in self.code:
            if c[0] is Call:
                writes[c[3]] = writes.get(c[3], 0) + 1
        static, hoisted = set(), set()
        for pc, c in enumerate(self.code):
            if c[0] is not Call:
                continue
            _, index, args, dst = c
            if dst == self.sink or dst < self.num_args or writes[dst] != 1:
                continue
            if not is_reusable_allocation(self.names[index], self.callees[index]):
                continue
            if all(a >= self.num_registers or a in static for a in args):
                static.add(dst)
                hoisted.add(pc)
        return hoisted

    # -- running ---------------------------------------------------------------------------
    def run(self, args):
        if len(args) != self.num_args:
            return self._arity_error(args)
        frames = self.frames
        frame = frames.pop() if frames else self._frame()
        if frame.counts is None:  # now that the frame's makers let go of its buffers
            frame.counts = _refcounts(frame.held)
        registers = [*args, *frame.tail]
        if self.straight:
            result = self._run_straight(frame, registers)
        else:
            result = self._run_with_jumps(frame.steps, registers)
        registers.clear()
        if frame.held:
            result = frame.copy_out(result)
            if not frame.shared():
                frames.append(frame)
        else:
            frames.append(frame)
        return result

    def _run_straight(self, frame, registers):
        step = None
        try:
            for step in frame.steps:
                step(registers)
        except IrlabError:
            raise
        except Exception as err:
            pc = frame.pcs[frame.steps.index(step)] if step is not None else 0
            raise self._failure(pc, err) from err
        return registers[self.result]

    def _run_with_jumps(self, steps, registers):
        pc = 0
        try:
            while True:
                jump = steps[pc](registers)
                if jump is None:
                    pc += 1
                elif jump < 0:
                    return registers[self.sink]
                else:
                    pc = jump
        except IrlabError:
            raise
        except Exception as err:
            raise self._failure(pc, err) from err

    def _arity_error(self, args):
        names = ", ".join(self.param_names) or f"{self.num_args} arguments"
        raise VMError(f"{self.name} takes {self.num_args} arguments ({names}), got {len(args)}")

    def _failure(self, pc, err):
        instr = self.code[pc] if pc < len(self.code) else None
        callee = self.names[instr[1]] if instr is not None and instr[0] is Call else "?"
        return VMError(f"{self.name}, instruction {pc} (call {callee}): "
                       f"{type(err).__name__}: {err}")

    # -- building closures ------------------------------------------------------------------
    def _frame(self):
        """A new frame: the hoisted allocations run, the closures bound to their buffers."""
        values = list(self.initial)
        for pc in sorted(self.hoisted):
            _, index, args, dst = self.code[pc]
            try:
                values[dst] = self.callees[index](*[values[a] for a in args])
            except IrlabError:
                raise
            except Exception as err:
                raise self._failure(pc, err) from err
        held = [values[self.code[pc][3]] for pc in sorted(self.hoisted)]
        if self.straight:
            pcs = [pc for pc in range(len(self.code)) if pc not in self.hoisted]
            steps = [self._call_step(pc, values) for pc in pcs]
        else:
            pcs, steps = list(range(len(self.code))), self._steps(values)
        return _Frame(values[self.num_args:], steps, pcs, held)

    def _steps(self, values):
        """Closures for every instruction of a function with jumps: each returns where to
        go (None: the next one); a hoisted allocation does nothing (its value is there)."""
        steps = []
        for pc, instr in enumerate(self.code):
            kind = instr[0]
            if pc in self.hoisted:
                steps.append(_nothing)
            elif kind is Call:
                steps.append(self._call_step(pc, values))
            elif kind is Ret:
                steps.append(_ret_step(instr[1], self.sink))
            elif kind is Goto:
                steps.append(_goto_step(pc + instr[1]))
            else:
                steps.append(_if_step(instr[1], pc + 1, pc + instr[2]))
        return steps

    def _call_step(self, pc, values):
        """The closure of Call ``pc`` in a frame (it serves one call at a time); ``values``
        knows the constants and hoisted values."""
        _, index, args, dst = self.code[pc]
        callee = self.callees[index]
        if self.observe is not None:
            return _call(self.observe(pc, index, callee), args, dst)
        known = self.num_registers
        dynamic = [k for k, a in enumerate(args) if a < known and values[a] is None]
        fixed = [None if k in dynamic else values[a] for k, a in enumerate(args)]
        dynamic_args = tuple(args[k] for k in dynamic)
        fast = fast_form(self.names[index], callee, fixed, dynamic, exclusive=True)
        if fast is None and hasattr(callee, "bind"):
            try:
                fast = callee.bind(fixed, dynamic)
            except IrlabError:
                fast = None  # the call itself raises, at its instruction
        if fast is not None:
            return _call(fast, dynamic_args, dst)
        return _call(callee, args, dst)


class _Frame:
    """One call's worth of kept buffers (``held``) and the closures bound to them."""

    __slots__ = ("tail", "steps", "pcs", "held", "owners", "counts")

    def __init__(self, tail, steps, pcs, held):
        self.tail = tail  # the register file after the parameters
        self.steps = steps
        self.pcs = pcs
        objects = []
        for value in held:
            objects.append(value)
            if isinstance(value, Storage):
                objects += [value.buffer, _root(value.buffer)]
            elif isinstance(value, NDArray):
                objects += [value._data, _root(value._data)]
        self.held = objects
        self.owners = {id(o) for o in objects if isinstance(o, np.ndarray) and o.base is None}
        self.counts = None  # the references the frame alone makes (see ResolvedFunction.run)

    def shared(self) -> bool:
        """Whether something besides the frame still refers to one of its buffers."""
        return _refcounts(self.held) != self.counts

    def copy_out(self, value):
        """``value`` with the tensors living in the frame's storage replaced by copies. The
        copies of tensors sharing a storage share one new buffer at the same distances, so
        they alias each other as the originals did."""
        if type(value) is NDArray:  # the common case: one tensor
            if id(_root(value._data)) not in self.owners:
                return value
            return _copy(value)
        tensors = [t for t in _tensors(value) if id(_root(t._data)) in self.owners]
        if not tensors:
            return value
        groups: dict = {}
        for tensor in tensors:
            groups.setdefault(id(_root(tensor._data)), {})[id(tensor)] = tensor
        copies = {}
        for group in groups.values():
            copies.update(_copy_group(list(group.values())))
        return _replace(value, copies)


def _tensors(value):
    if type(value) is NDArray:
        return [value]
    if type(value) is tuple:
        return [t for v in value for t in _tensors(v)]
    return []


def _replace(value, copies):
    if type(value) is NDArray:
        return copies.get(id(value), value)
    if type(value) is tuple:
        return tuple(_replace(v, copies) for v in value)
    return value


def _copy(tensor):
    """A compact, aligned copy of one tensor."""
    data = tensor._data
    raw = np.empty(data.nbytes + ALIGNMENT, dtype=np.uint8)
    out = np.ndarray(data.shape, data.dtype, buffer=raw, offset=-raw.ctypes.data % ALIGNMENT)
    np.copyto(out, data)
    return NDArray(out, tensor.device)


def _copy_group(tensors):
    """Copies of ``tensors`` (views of one buffer) into one new buffer, at the same distances
    and the same alignment: {id(original): copy}."""
    spans = [_span(t._data) for t in tensors]
    low, high = min(s[0] for s in spans), max(s[1] for s in spans)
    raw = np.empty(high - low + ALIGNMENT, dtype=np.uint8)
    start = (low - raw.ctypes.data) % ALIGNMENT
    root = _root(tensors[0]._data)
    root_start = root.ctypes.data
    raw[start:start + high - low] = root.reshape(-1).view(np.uint8)[low - root_start:
                                                                     high - root_start]
    copies = {}
    for tensor, (_, _, pointer) in zip(tensors, spans):
        data = tensor._data
        view = np.ndarray(data.shape, data.dtype, buffer=raw, offset=start + pointer - low,
                          strides=data.strides)
        copies[id(tensor)] = NDArray(view, tensor.device)
    return copies


def _span(data):
    """The bytes ``data`` covers: (first, past the last, address of element 0)."""
    pointer = data.ctypes.data
    if data.size == 0:
        return pointer, pointer, pointer
    low = high = pointer
    for size, stride in zip(data.shape, data.strides):
        if stride < 0:
            low += stride * (size - 1)
        else:
            high += stride * (size - 1)
    return low, high + data.itemsize, pointer


def _refcounts(objects):
    return [sys.getrefcount(o) for o in objects]


def _root(data):
    """The array that owns ``data``'s memory (numpy keeps views pointing at it)."""
    while isinstance(data.base, np.ndarray):
        data = data.base
    return data


# -- the closures ----------------------------------------------------------------------------
def _call(fn, args, dst):
    """``registers[dst] = fn(*registers[args])``."""
    if not args:
        def step(registers):
            registers[dst] = fn()
    elif len(args) == 1:
        a0, = args

        def step(registers):
            registers[dst] = fn(registers[a0])
    elif len(args) == 2:
        a0, a1 = args

        def step(registers):
            registers[dst] = fn(registers[a0], registers[a1])
    else:
        read = itemgetter(*args)

        def step(registers):
            registers[dst] = fn(*read(registers))
    return step


def _ret_step(result, sink):
    def step(registers):
        registers[sink] = registers[result]
        return -1
    return step


def _nothing(registers):
    return None


def _goto_step(target):
    return lambda registers: target


def _if_step(cond, then, otherwise):
    def step(registers):
        return then if read_if_cond(registers[cond]) else otherwise
    return step


__all__ = ["ResolvedFunction"]
