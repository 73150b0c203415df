"""``VMExecutable``: Relax VM bytecode, its constant pool and function table, as a runtime module.

The kernels a program calls (compiled PrimFuncs) are the executable's imported library module, so
``export_library`` writes both in one file and ``runtime.load_module`` reads both back.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile

import numpy as np

from irlab.errors import IrlabError
from irlab.runtime import module as _module
from irlab.runtime.container import ShapeTuple
from irlab.runtime.dtype import DataType, parse_dtype
from irlab.runtime.ndarray import NDArray, Device, array
from irlab.runtime.relax_vm.bytecode import (Arg, ArgKind, Call, Goto, If, Ret, VMFuncInfo,
                                             VMFuncKind)

ARCHIVE_KIND = "relax.vm"


class VMExecutable(_module.Module):
    """Bytecode functions (``code[name]``), the function table they call through, and the
    constant pool. Run it with ``relax.VirtualMachine(ex, tvm.cpu())``."""

    type_key = "relax.Executable"

    def __init__(self, func_table, code, constants):
        super().__init__()
        self.func_table: tuple = tuple(func_table)
        self.func_map = {info.name: k for k, info in enumerate(self.func_table)}
        self.code: dict = {name: tuple(instrs) for name, instrs in code.items()}
        self.constants: tuple = tuple(constants)

    @property
    def mod(self):
        """The runtime module (TVM's ``relax.Executable.mod``): the executable itself."""
        return self

    def vm_functions(self):
        return [info for info in self.func_table if info.kind == VMFuncKind.VM_FUNC]

    def get_func_names(self):
        return [info.name for info in self.vm_functions()]

    def implements_function(self, name, query_imports=False):
        return name in self.code or super().implements_function(name, query_imports)

    def get_function(self, name, query_imports=False):
        """A kernel of the imported library (``ex["main"]`` is not callable: use a VM)."""
        if name in self.code:
            raise IrlabError(f"{name!r} is VM bytecode: run it with "
                             f"relax.VirtualMachine(ex, tvm.cpu())[{name!r}]")
        for lib in self.imported_modules:
            if lib.implements_function(name, query_imports=True):
                return lib.get_function(name, query_imports=True)
        raise IrlabError(f"executable has no kernel {name!r}")

    # -- reading -----------------------------------------------------------------------------
    def stats(self) -> str:
        """Counts of functions, instructions and constants."""
        kernels = [i.name for i in self.func_table if i.kind == VMFuncKind.PACKED_FUNC]
        instrs = sum(len(c) for c in self.code.values())
        return (f"Relax VM executable statistics:\n  VM functions: {self.get_func_names()}\n"
                f"  packed functions called: {kernels}\n  instructions: {instrs}\n"
                f"  constants: {len(self.constants)}")

    def as_text(self) -> str:
        """The bytecode, one instruction a line, with the constant pool."""
        names = [info.name for info in self.func_table]
        lines = []
        for info in self.vm_functions():
            params = ", ".join(f"%{k} {p}" if p else f"%{k}"
                               for k, p in enumerate(_param_names(info)))
            lines.append(f"@{info.name}({params}):  # {info.register_file_size} registers")
            for pc, instr in enumerate(self.code[info.name]):
                lines.append(f"  {pc:>3}: {_instr_text(instr, names)}")
            lines.append("")
        for k, value in enumerate(self.constants):
            lines.append(f"c[{k}] = {_const_text(value)}")
        return "\n".join(lines).rstrip() + "\n"

    def as_python(self) -> str:
        """Python that rebuilds the bytecode with ``relax.ExecBuilder`` (constants as ``ib.c``)."""
        names = [info.name for info in self.func_table]
        lines = ["ib = relax.ExecBuilder()"]
        for k, value in enumerate(self.constants):
            lines.append(f"# c[{k}] = {_const_text(value)}")
        for info in self.vm_functions():
            params = list(_param_names(info))
            lines.append(f"with ib.function({info.name!r}, num_inputs={info.num_args}, "
                         f"param_names={params!r}):")
            for instr in self.code[info.name]:
                lines.append(f"    {_instr_python(instr, names)}")
        return "\n".join(lines) + "\n"

    def __repr__(self):
        return (f"relax.Executable(functions={self.get_func_names()}, "
                f"constants={len(self.constants)}, libs={len(self.imported_modules)})")

    # -- saving ------------------------------------------------------------------------------
    def _export_archive(self, path):
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("kind", ARCHIVE_KIND)
            arrays = []
            record = {"functions": [_info_json(i) for i in self.func_table],
                      "code": {n: [_instr_json(i) for i in c] for n, c in self.code.items()},
                      "constants": [_const_json(c, arrays) for c in self.constants]}
            z.writestr("executable.json", json.dumps(record))
            for k, arr in enumerate(arrays):
                buf = io.BytesIO()
                np.save(buf, arr.numpy(), allow_pickle=False)
                z.writestr(f"const.{k}.npy", buf.getvalue())

    def _export_shared(self, path, extra_sources=()):
        """A ``.so`` that carries the whole executable archive (bytecode and kernels) as its
        embedded imports blob; ``load_module`` returns the executable."""
        with tempfile.TemporaryDirectory(prefix="irlab-") as tmp:
            blob = os.path.join(tmp, "executable.irlab")
            self.export_library(blob)
            with open(blob, "rb") as f:
                data = f.read()
            rows = [", ".join(str(b) for b in data[i:i + 32]) for i in range(0, len(data), 32)]
            source = os.path.join(tmp, "irlab_vm.c")
            with open(source, "w") as out:
                out.write(f"const unsigned long long {_module.IMPORTS_SIZE_SYMBOL} = "
                          f"{len(data)}ULL;\nconst unsigned char {_module.IMPORTS_SYMBOL}[] "
                          "= {\n" + ",\n".join(rows) + "};\n")
            _module.Module._export_shared(self, path, [source])


def load_archive(path, z) -> VMExecutable:
    """Read an executable written by ``_export_archive`` (its imports are added by the caller)."""
    record = json.loads(z.read("executable.json"))
    arrays = {}
    for name in z.namelist():
        if name.startswith("const.") and name.endswith(".npy"):
            arrays[int(name.split(".")[1])] = np.load(io.BytesIO(z.read(name)),
                                                      allow_pickle=False)
    try:
        infos = [VMFuncInfo(VMFuncKind(i["kind"]), i["name"], i["num_args"],
                            i["register_file_size"], tuple(i["param_names"]))
                 for i in record["functions"]]
        code = {n: [_instr_from_json(i) for i in c] for n, c in record["code"].items()}
        constants = [_const_from_json(c, arrays) for c in record["constants"]]
    except (KeyError, ValueError, TypeError) as err:
        raise IrlabError(f"{path}: malformed Relax VM executable ({err})") from None
    return VMExecutable(infos, code, constants)


def _param_names(info):
    names = list(info.param_names) + [""] * (info.num_args - len(info.param_names))
    return names[:info.num_args]


# -- text -------------------------------------------------------------------------------------
def _instr_text(instr, names) -> str:
    if isinstance(instr, Call):
        args = ", ".join(a.text(names) for a in instr.args)
        dst = "" if instr.dst.text() == "%void" else f" -> {instr.dst.text()}"
        return f"call  {names[instr.func_idx]}({args}){dst}"
    if isinstance(instr, Ret):
        return f"ret   {instr.result.text()}"
    if isinstance(instr, Goto):
        return f"goto  {instr.offset:+d}"
    return f"if    {instr.cond.text()} else goto {instr.false_offset:+d}"


def _instr_python(instr, names) -> str:
    if isinstance(instr, Call):
        args = ", ".join(a.python() for a in instr.args)
        return (f"ib.emit_call({names[instr.func_idx]!r}, args=[{args}], "
                f"dst={instr.dst.python()})")
    if isinstance(instr, Ret):
        return f"ib.emit_ret({instr.result.python()})"
    if isinstance(instr, Goto):
        return f"ib.emit_goto({instr.offset})"
    return f"ib.emit_if({instr.cond.python()}, {instr.false_offset})"


def _const_text(value) -> str:
    if isinstance(value, NDArray):
        flat = value.numpy().ravel()  # a preview, one line whatever the rank
        head = ", ".join(f"{v:.6g}" if flat.dtype.kind == "f" else str(v) for v in flat[:4])
        body = f"[{head}{', ...' if flat.size > 4 else ''}]"
        return f"NDArray({value.dtype}, shape={value.shape}) {body}"
    if isinstance(value, DataType):
        return f"dtype({str(value)!r})"
    return repr(value)


# -- serialization ----------------------------------------------------------------------------
def _info_json(info):
    return {"kind": int(info.kind), "name": info.name, "num_args": info.num_args,
            "register_file_size": info.register_file_size,
            "param_names": list(info.param_names)}


def _arg_json(arg):
    return [int(arg.kind), arg.value]


def _arg_from_json(item):
    return Arg(ArgKind(item[0]), int(item[1]))


def _instr_json(instr):
    if isinstance(instr, Call):
        return ["call", instr.func_idx, [_arg_json(a) for a in instr.args], _arg_json(instr.dst)]
    if isinstance(instr, Ret):
        return ["ret", _arg_json(instr.result)]
    if isinstance(instr, Goto):
        return ["goto", instr.offset]
    return ["if", _arg_json(instr.cond), instr.false_offset]


def _instr_from_json(item):
    op = item[0]
    if op == "call":
        return Call(int(item[1]), tuple(_arg_from_json(a) for a in item[2]),
                    _arg_from_json(item[3]))
    if op == "ret":
        return Ret(_arg_from_json(item[1]))
    if op == "goto":
        return Goto(int(item[1]))
    if op == "if":
        return If(_arg_from_json(item[1]), int(item[2]))
    raise ValueError(f"unknown instruction {op!r}")


def _const_json(value, arrays):
    """A constant as JSON; NDArrays go to ``arrays`` (saved as ``const.<k>.npy``)."""
    if isinstance(value, NDArray):
        arrays.append(value)
        return {"ndarray": len(arrays) - 1}
    if isinstance(value, ShapeTuple):
        return {"shape": list(value)}
    if isinstance(value, DataType):
        return {"dtype": str(value)}
    if isinstance(value, Device):
        return {"device": [value.device_type, value.device_id]}
    if value is None:
        return {"none": None}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, (int, float, str)):
        return {type(value).__name__: value}
    if isinstance(value, (tuple, list)):
        return {"tuple": [_const_json(v, arrays) for v in value]}
    raise IrlabError(f"a Relax VM constant of type {type(value).__name__} cannot be saved")


def _const_from_json(item, arrays):
    (key, value), = item.items()
    if key == "ndarray":
        return array(arrays[value])
    if key == "shape":
        return ShapeTuple(value)
    if key == "dtype":
        return parse_dtype(value)
    if key == "device":
        return Device(*value)
    if key == "tuple":
        return tuple(_const_from_json(v, arrays) for v in value)
    if key in ("none", "bool", "int", "float", "str"):
        return value
    raise ValueError(f"unknown constant kind {key!r}")


__all__ = ["VMExecutable", "load_archive", "ARCHIVE_KIND"]
