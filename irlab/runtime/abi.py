"""The calling convention shared by irlab's code generators (LLVM, C) and the runtime.

Every compiled PrimFunc ``f`` is one C symbol::

    int32_t f(int64_t *args);

``args`` holds one 8-byte slot per PrimFunc parameter, in order, then one slot per *bound var*
(a symbolic dimension, stride or offset of a parameter buffer, see ``FunctionInfo.bound_vars``):

* a buffer parameter -> its data pointer (64-byte aligned: the caller guarantees it);
* an integer or bool scalar -> its value, sign-extended;
* a float scalar -> the bits of the value as a C ``double``;
* a bound var -> its value (the caller read it off the array it passed).

The return value is 0 on success; ``k > 0`` means the ``k``-th ``AssertStmt`` message
(``FunctionInfo.asserts[k - 1]``) failed; ``ERR_CALLBACK`` means a Python function called back
through ``__irlab_call_packed`` raised (the runtime keeps the exception and re-raises it);
``ERR_ALLOC`` means a heap allocation failed.

The caller (``irlab.runtime.compiled``) checks everything before entering machine code: arity,
dtype, ndim, shape (a symbolic dimension takes one value across all arguments), contiguity,
device and alignment. Generated code trusts the slots.

Two hooks are global *variables* holding function pointers, set by the runtime after loading
(they are null until then; generated code must then run the loop serially / fail the call):

* ``__irlab_parallel_for``: ``int32_t (*)(int32_t (*body)(int64_t begin, int64_t end,
  void *closure), void *closure, int64_t extent)`` -- runs ``body`` over ``[0, extent)`` in
  chunks on the thread pool and returns the first non-zero code. A ``parallel`` loop is
  outlined into ``body``; the loop variable is ``loop.min + i`` for ``i`` in ``[begin, end)``.
* ``__irlab_call_packed``: ``int32_t (*)(const char *name, int64_t *values, int32_t *codes,
  int32_t n)`` -- calls the registered global function ``name`` (``T.call_packed``). Each value
  is encoded by its code: ``CODE_INT`` (value), ``CODE_FLOAT`` (double bits), ``CODE_HANDLE``
  (raw pointer), ``CODE_STR`` (``const char *``), ``CODE_ARRAY`` (pointer to an array
  descriptor: int64 words ``[data, ndim, dtype_code, dtype_bits, lanes, shape[0..ndim)]``,
  dtype codes as DLPack's). Returns 0, or non-zero if the Python function raised.

Each compiled library also carries ``__irlab_metadata``: a NUL-terminated JSON string
``{"version": 1, "target": str, "functions": [FunctionInfo.to_json(), ...]}``, so a saved
``.so`` describes its own functions to ``irlab.runtime.load_module``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from irlab.errors import IrlabError
from irlab.runtime.dtype import parse_dtype

ERR_CALLBACK = -1
ERR_ALLOC = -2

CODE_INT, CODE_UINT, CODE_FLOAT, CODE_HANDLE, CODE_ARRAY, CODE_STR = 0, 1, 2, 3, 7, 11
# DLPack's dtype codes, used in array descriptors
DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT, DL_BOOL = 0, 1, 2, 4, 6

PARALLEL_HOOK = "__irlab_parallel_for"
PACKED_HOOK = "__irlab_call_packed"
METADATA_SYMBOL = "__irlab_metadata"
# ``void <prefix><function>()`` frees the temporary blocks a function caches between calls
WORKSPACE_RELEASE_PREFIX = "__irlab_release_"
ABI_VERSION = 1


def dl_code(dtype: str) -> int:
    code = parse_dtype(dtype).code
    return {"int": DL_INT, "uint": DL_UINT, "float": DL_FLOAT, "bfloat": DL_BFLOAT,
            "bool": DL_BOOL}.get(code, DL_UINT)


@dataclass
class ParamInfo:
    """One parameter as the caller sees it.

    ``kind`` is "buffer" (an array), "scalar" (a number) or "handle" (an opaque pointer).
    For buffers, ``shape``/``strides`` entries are ints or the name of a bound var;
    ``strides`` is None for compact row-major; ``elem_offset`` is 0 or a bound var name.
    ``written``: the function may write the buffer (a read-only array is refused for it).
    """

    name: str
    kind: str
    dtype: str
    shape: list = field(default_factory=list)
    strides: list | None = None
    elem_offset: int | str = 0
    written: bool = False

    def describe(self) -> str:
        if self.kind == "buffer":
            dims = ", ".join(str(d) for d in self.shape)
            return f"{self.name}: Buffer(({dims}{',' if len(self.shape) == 1 else ''}), " \
                   f"{self.dtype})"
        return f"{self.name}: {self.dtype}"


@dataclass
class FunctionInfo:
    """What the runtime must know to call a compiled PrimFunc safely."""

    name: str
    params: list[ParamInfo]
    bound_vars: list[str] = field(default_factory=list)
    asserts: list[str] = field(default_factory=list)

    @property
    def num_slots(self) -> int:
        return len(self.params) + len(self.bound_vars)

    def signature(self) -> str:
        return f"{self.name}({', '.join(p.describe() for p in self.params)})"

    def to_json(self) -> dict:
        return {"name": self.name, "bound_vars": self.bound_vars, "asserts": self.asserts,
                "params": [vars(p) for p in self.params]}

    @staticmethod
    def from_json(data: dict) -> "FunctionInfo":
        return FunctionInfo(data["name"], [ParamInfo(**p) for p in data["params"]],
                            list(data["bound_vars"]), list(data["asserts"]))


def metadata_json(infos, target: str) -> str:
    return json.dumps({"version": ABI_VERSION, "target": target,
                       "functions": [i.to_json() for i in infos]}, sort_keys=True)


def parse_metadata(text: str) -> tuple[str, list[FunctionInfo]]:
    data = json.loads(text)
    if data.get("version") != ABI_VERSION:
        raise IrlabError(f"library ABI version {data.get('version')} is not "
                         f"{ABI_VERSION}: rebuild it with this irlab")
    return data["target"], [FunctionInfo.from_json(f) for f in data["functions"]]


__all__ = ["FunctionInfo", "ParamInfo", "metadata_json",
           "parse_metadata", "ERR_CALLBACK", "ERR_ALLOC", "PARALLEL_HOOK", "PACKED_HOOK",
           "METADATA_SYMBOL", "WORKSPACE_RELEASE_PREFIX"]
