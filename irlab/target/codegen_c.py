"""C codegen: lowered TIR -> readable C99 source, compiled by the system C compiler.

``irlab.build(mod, target="c")`` ends here (TVM's ``CodeGenC`` / ``codegen_c_host``). The C
follows the calling convention of ``irlab.runtime.abi``, as the LLVM codegen does, so the
runtime calls both the same way. For each PrimFunc ``f``:

* ``static int32_t f_compute(...)`` takes the typed parameters -- buffer data pointers
  (``float *restrict A`` when the PrimFunc has ``tir.noalias``), scalars, then the bound vars
  (symbolic dimensions) -- and holds the body, one C statement per TIR statement, with locals
  named after the TIR vars;
* ``int32_t f(int64_t *args)`` (exported) unpacks the argument slots and calls it.

Semantics mirror ``codegen_llvm``:

* integer ``/`` and ``%`` by anything but a nonzero constant (other than -1) go through
  small helpers that raise a local ``err`` flag on division by zero instead of crashing (the
  statement is followed by ``if (err) return k;``, ``k`` naming the assert message);
  ``INT_MIN / -1`` wraps to ``INT_MIN`` (``% -1`` is 0) instead of trapping;
* an ``AssertStmt`` becomes ``if (!(cond)) return k;`` (``k``: 1-based index of its message);
* bools sit in memory as bytes (``uint8_t``), as numpy's; in registers they are ``bool``;
* ``Allocate``: a constant size of at most 256 KiB is a 64-byte aligned local array, anything
  else is heap memory from ``posix_memalign`` (``free``d after the body, and before every
  early error return inside it; ``ERR_ALLOC`` when it fails);
* a ``parallel`` loop is outlined into ``static int32_t f_parallel_k(begin, end, closure)``;
  the variables it uses travel in a closure of ``int64_t`` words, and it runs through the
  ``__irlab_parallel_for`` hook, or serially when the hook is NULL (no ``#pragma omp``);
* ``T.call_packed`` fills ``values``/``codes`` arrays (buffers as array descriptors) and calls
  the ``__irlab_call_packed`` hook.

Vectors: the C is *scalarized*. A vector statement ``B[T.Ramp(i * 4, 1, 4)] = A[...] + 1`` is
printed as a loop over its lanes, ``for (int32_t lane = 0; lane < 4; ++lane) B[i * 4 + lane] =
A[i * 4 + lane] + 1.0f;`` (unrolled with constant lanes when a ``Shuffle`` picks lanes). That
reads like the TIR next to it, is plain C99 and lets ``-O2 -march=native`` re-vectorize; GCC
vector extensions would be faster to compile to SIMD but are neither C99 nor easy to read.
A vector ``LetStmt`` becomes a small local array; a vector store whose value reads the
buffer it writes is staged through such an array first, keeping vector semantics.

``build_c`` compiles with ``-O2 -march=native -std=c99 -fPIC -shared -lm`` and caches the
``.so`` by the SHA-256 of (source, compiler, flags) under ``cache_dir()/c``. The source is
deterministic: the same TIR always prints the same C.

Parts: ``c_syntax.py`` (types, names, literals, precedence), ``codegen_c_calls.py`` (calls),
``codegen_c_vector.py`` (vector statements as lane loops), ``c_compile.py`` (the compiler,
the cache, ``build_c``); this file the rest.
"""

from __future__ import annotations

import re

import numpy as np

from irlab.errors import CodegenError
from irlab.runtime.dtype import parse_dtype
from irlab.runtime import abi
from irlab.tir import expr as E
from irlab.tir import op as O
from irlab.tir import stmt as S
from irlab.tir.analysis import vars_used, written_buffer_data
from irlab.tir.functor import method_table
from irlab.target.c_syntax import (ALIGN, INDENT, P_ADD, P_ATOM, P_COND, P_EQ, P_LAND, P_LOR,
                                   P_MUL, P_REL, P_UNARY, STACK_LIMIT, _BINOPS, _C_KEYWORDS,
                                   _DOUBLE_TO_BITS, _c_string, _call_name, _comment, _elem,
                                   _identifier, _lanes, _paren_if_needed, _simple, _suffix, c_type)
from irlab.target import deep_expr
from irlab.target.codegen_c_calls import CallWriter
from irlab.target.codegen_c_vector import VectorLanes
from irlab.target.function_info import bound_vars, function_info


class CodegenC:
    """Collects PrimFuncs into one C translation unit (``add_function``, then ``source``)."""

    def __init__(self, target):
        self.target = target
        self.infos: list[abi.FunctionInfo] = []
        self.helpers: dict[str, str] = {}
        self.externs: dict[str, str] = {}
        self.chunks: list[str] = []
        self.symbols: set[str] = set()

    def reserve(self, name):
        if name in self.symbols:
            raise CodegenError(f"two functions are named {name!r} in one module")
        self.symbols.add(name)

    def helper(self, name, text):
        self.helpers.setdefault(name, text)
        return name

    # -- functions -----------------------------------------------------------------------
    def add_function(self, func, name: str) -> abi.FunctionInfo:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name in _C_KEYWORDS:
            raise CodegenError(f"{name!r} is not a valid C function name")
        self.reserve(name)
        self.reserve(name + "_compute")
        info = function_info(func, name, written=written_buffer_data(func))
        attrs = func.attrs or {}
        noalias = bool(attrs.get("tir.noalias", False)) if hasattr(attrs, "get") else False
        bound = bound_vars(func)
        writer = _FunctionWriter(self, name, info, noalias)
        params, ctypes_ = [], []
        for p in func.params:
            buffer = func.buffer_map.get(p)
            if buffer is not None:
                params.append(buffer.data)
                writer.buffers[buffer.data] = buffer
                ctypes_.append(writer.bind_pointer(buffer.data, buffer.dtype))
            else:
                params.append(p)
                ctypes_.append(writer.bind_scalar(p))
        for v in bound:
            params.append(v)
            ctypes_.append(writer.bind_scalar(v))
        writer.emit_stmt(func.body)
        header = [f"/* PrimFunc {info.signature()}"]
        if bound:
            header.append(f" * symbolic dimensions: {', '.join(info.bound_vars)}")
        if noalias:
            header.append(" * tir.noalias: buffer pointers are restrict")
        header.append(" */")
        decl = f"static int32_t {name}_compute("
        args = [f"{ct}{'' if ct.endswith('*') else ' '}{writer.names[p]}"
                for ct, p in zip(ctypes_, params)]
        sig = decl + ", ".join(args) + ") {"
        if len(sig) > 96:
            pad = " " * len(decl)
            sig = decl + (",\n" + pad).join(args) + ") {"
        body = writer.finish()
        text = "\n".join(header) + "\n" + sig + "\n" + body + "}\n"
        # the exported entry of irlab.runtime.abi
        unpack = [_from_slot(f"args[{k}]", ct.replace(" *restrict", " *"), p.dtype, self)
                  for k, (ct, p) in enumerate(zip(ctypes_, params))]
        slots = ", ".join(writer.names[p] for p in params)
        entry = [f"/* entry point (irlab.runtime.abi): args = [{slots}] */",
                 f"int32_t {name}(int64_t *args) {{"]
        if unpack:
            entry.append(f"{INDENT}return {name}_compute(")
            entry.append(",\n".join(f"{INDENT * 3}{u}" for u in unpack) + ");")
        else:
            entry.append(f"{INDENT}(void)args;")
            entry.append(f"{INDENT}return {name}_compute();")
        entry.append("}\n")
        self.chunks.extend(writer.outlined)
        self.chunks.append(text)
        self.chunks.append("\n".join(entry))
        self.infos.append(info)
        return info

    def source(self) -> str:
        out = ["/* Generated by irlab's C code generator (target \"c\").",
               " * Calling convention: irlab.runtime.abi -- every exported function is",
               " *   int32_t f(int64_t *args)",
               " * returning 0, or k > 0 when the k-th assert message of __irlab_metadata failed.",
               " */",
               "#define _POSIX_C_SOURCE 200809L",
               "#include <math.h>",
               "#include <stdbool.h>",
               "#include <stdint.h>",
               "#include <stdlib.h>",
               "#include <string.h>",
               "",
               "/* runtime hooks, set by irlab after loading the library (NULL until then) */",
               "typedef int32_t (*irlab_parallel_body)(int64_t begin, int64_t end, "
               "void *closure);",
               f"int32_t (*{abi.PARALLEL_HOOK})(irlab_parallel_body body, void *closure, "
               f"int64_t extent) = NULL;",
               f"int32_t (*{abi.PACKED_HOOK})(const char *name, int64_t *values, "
               f"int32_t *codes, int32_t n) = NULL;",
               ""]
        if self.externs:
            out.append("/* external functions (T.call_extern) */")
            out += [self.externs[k] for k in sorted(self.externs)]
            out.append("")
        if self.helpers:
            out.append("/* helpers */")
            out += [self.helpers[k] for k in sorted(self.helpers)]
            out.append("")
        out += [c.rstrip("\n") + "\n" for c in self.chunks]
        meta = abi.metadata_json(self.infos, str(self.target))
        pieces = [meta[i:i + 80] for i in range(0, len(meta), 80)] or [""]
        out.append("/* what the runtime needs to call the functions above safely */")
        out.append(f"const char {abi.METADATA_SYMBOL}[] =")
        out += [f"{INDENT}{_c_string(p)}" for p in pieces[:-1]]
        out.append(f"{INDENT}{_c_string(pieces[-1])};")
        return "\n".join(out) + "\n"


def _from_slot(word, ct, dtype, cg) -> str:
    """An ``int64_t`` slot -> a C value of type ``ct``."""
    t = parse_dtype(dtype)
    if t.code == "handle":
        return f"({ct})(intptr_t){word}"
    if t.is_float:
        cg.helper("irlab_bits_to_double", _BITS_TO_DOUBLE)
        value = f"irlab_bits_to_double({word})"
        return value if t.bits == 64 else f"({ct}){value}"
    if t.code == "bool":
        return f"{word} != 0"
    return word if ct == "int64_t" else f"({ct}){word}"


_BITS_TO_DOUBLE = """static inline double irlab_bits_to_double(int64_t word) {
  double value;
  memcpy(&value, &word, sizeof value);
  return value;
}"""
_ALLOC = """static inline void *irlab_alloc(int64_t bytes) {
  void *ptr = NULL;
  bytes = bytes <= 0 ? 64 : (bytes + 63) / 64 * 64;
  return posix_memalign(&ptr, 64, (size_t)bytes) == 0 ? ptr : NULL;
}"""


class _FunctionWriter(VectorLanes, CallWriter):
    """Prints one C function body from TIR statements."""

    def __init__(self, cg: CodegenC, symbol, info, noalias, parent=None):
        self.cg = cg
        self.symbol = symbol
        self.info = info
        self.noalias = noalias
        self.lines: list[str] = []
        self.depth = 1
        self.names: dict = {}  # Var -> C name while in scope
        self.frames: list[list] = [[]]  # C blocks: the vars declared in each
        self.ptr_types: dict = {}  # pointer Var -> C element type it points to
        self.buffers: dict = {}  # data Var -> a Buffer over it (for call_packed arrays)
        self.vec_vars: dict = {}  # vector Var -> Buffer of a local array holding its lanes
        self.pending: list[str] = []  # declarations expression Lets hoist before a statement
        self.faults: list[str] = []  # checked divisions of the statement being printed
        self.uses_err = False
        self.heap: list[str] = []  # live heap allocations, freed on every early return
        self.outlined: list[str] = parent.outlined if parent is not None else []
        self.counter = parent.counter if parent is not None else [0]

    # -- names ---------------------------------------------------------------------------
    def _used(self):
        return {n for frame in self.frames for v in frame for n in [self.names.get(v)] if n}

    def bind(self, var, hint=None) -> str:
        base = _identifier(hint or var.name_hint)
        used = self._used() | self.cg.symbols | set(self.cg.helpers)
        name, k = base, 0
        while name in used or name in _C_KEYWORDS or name.startswith("irlab_"):
            k += 1
            name = f"{base}_{k}"
        self.names[var] = name
        self.frames[-1].append(var)
        return name

    def bind_pointer(self, var, dtype) -> str:
        """Bind a buffer data var; returns its C type (``float *restrict``)."""
        self.bind(var)
        elem = c_type(_elem(dtype), memory=True)
        self.ptr_types[var] = elem
        return f"{elem} *{'restrict' if self.noalias else ''}".rstrip()

    def bind_scalar(self, var) -> str:
        self.bind(var)
        if parse_dtype(var.dtype).code == "handle":
            self.ptr_types[var] = "void"
            return "void *"
        return c_type(var.dtype)

    def open_block(self, line):
        self.line(line)
        self.depth += 1
        self.frames.append([])

    def close_block(self, line="}"):
        for v in self.frames.pop():
            self.names.pop(v, None)
        self.depth -= 1
        self.line(line)

    def ret(self, code) -> str:
        """``return code;`` from inside the body, freeing the live heap allocations."""
        if not self.heap:
            return f"return {code};"
        return "{ " + " ".join(f"free({h});" for h in reversed(self.heap)) + f" return {code}; }}"

    def line(self, text):
        self.lines.append(INDENT * self.depth + text)

    def finish(self) -> str:
        self.line("return 0;")
        head = [INDENT + "int32_t err = 0;  /* raised by a checked integer division */"] \
            if self.uses_err else []
        return "\n".join(head + self.lines) + "\n"

    # -- statements ----------------------------------------------------------------------
    def emit_stmt(self, s):
        method = method_table(type(self))[type(s)]
        if method is None:
            raise CodegenError(f"C codegen cannot translate {type(s).__name__} "
                               f"(lower the function first: irlab.lower)", s)
        method(self, s)

    def statement(self, text_fn):
        """Print one C statement; Lets it hoists and division checks go around it."""
        self.pending, self.faults = [], []
        text = text_fn()
        for decl in self.pending:
            self.line(decl)
        self.pending = []
        if isinstance(text, str):
            self.line(text)
        self.check_faults()

    def check_faults(self):
        if self.faults:
            self.info.asserts.append("integer division by zero in "
                                     + "; ".join(self.faults))
            self.line(f"if (err) {self.ret(len(self.info.asserts))}  /* division by zero */")
            self.faults = []

    def hoist(self, e, hint, once=True) -> str:
        """Evaluate ``e`` into a fresh local when it must be evaluated once (loop bounds)
        or checked for a division fault first; else return its text."""
        self.pending, self.faults = [], []
        text = self.expr(e)
        for decl in self.pending:
            self.line(decl)
        self.pending = []
        if not self.faults and (not once or _simple(e)):
            return text
        var = E.Var(hint, e.dtype)
        name = self.bind(var)
        self.line(f"const {c_type(e.dtype)} {name} = {text};")
        self.check_faults()
        return name

    def visit_seq_stmt(self, s):
        for child in s.seq:
            self.emit_stmt(child)

    def visit_evaluate(self, s):
        v = s.value
        if isinstance(v, (E.IntImm, E.FloatImm)):
            return
        if isinstance(v, E.Call) and _call_name(v) in ("tir.call_packed", "tir.tvm_call_packed"):
            self.call_packed(v)
            return
        if _lanes(v) != 1:
            raise CodegenError("C codegen cannot evaluate a vector expression for effect", s)
        self.statement(lambda: f"(void)({self.expr(v)});" if v.dtype != "void"
                       else f"{self.expr(v)};")

    def visit_let_stmt(self, s):
        if _lanes(s.var) != 1:
            buf = self.local_array(s.var.name_hint, s.var.dtype)
            self.store_lanes(buf, E.IntImm("int32", 0), s.value)
            self.vec_vars[s.var] = buf
            self.emit_stmt(s.body)
            return
        if parse_dtype(s.var.dtype).code == "handle":
            def text():
                value = self.expr(s.value)
                self.bind(s.var)
                self.ptr_types[s.var] = "void"
                return f"void *{self.names[s.var]} = {value};"
        else:
            def text():
                value = self.expr(s.value)
                return f"{c_type(s.var.dtype)} {self.bind(s.var)} = {value};"
        self.statement(text)
        self.emit_stmt(s.body)

    def visit_attr_stmt(self, s):
        self.emit_stmt(s.body)

    def visit_decl_buffer(self, s):
        self.buffers.setdefault(s.buffer.data, s.buffer)
        self.emit_stmt(s.body)

    def visit_assert_stmt(self, s):
        message = s.message.value if isinstance(s.message, E.StringImm) else str(s.message)
        cond = self.hoist(s.condition, "cond", once=False)
        self.info.asserts.append(message)
        self.line(f"if (!({cond})) {self.ret(len(self.info.asserts))}  /* assert: "
                  f"{_comment(message)} */")
        self.emit_stmt(s.body)

    def visit_if_then_else(self, s):
        cond = self.hoist(s.condition, "cond", once=False)
        self.open_block(f"if ({cond}) {{")
        self.emit_stmt(s.then_case)
        if s.else_case is not None:
            self.close_block("} else {")
            self.frames.append([])
            self.depth += 1
            self.emit_stmt(s.else_case)
        self.close_block()

    def visit_while(self, s):
        self.pending, self.faults = [], []
        cond = self.expr(s.condition)
        if self.pending or self.faults:
            self.pending, self.faults = [], []
            self.open_block("while (1) {")
            c = self.hoist(s.condition, "cond", once=False)
            self.line(f"if (!({c})) break;")
        else:
            self.open_block(f"while ({cond}) {{")
        self.emit_stmt(s.body)
        self.close_block()

    def visit_allocate(self, s):
        t = parse_dtype(s.dtype)
        elem = c_type(_elem(s.dtype), memory=True)
        elem_bytes = max(1, t.bits // 8) * t.lanes
        constant = all(isinstance(x, E.IntImm) for x in s.extents)
        count = t.lanes
        for x in s.extents:
            count *= int(x.value) if isinstance(x, E.IntImm) else 1
        if constant and count * max(1, t.bits // 8) <= STACK_LIMIT:
            name = self.bind(s.buffer_var)
            self.ptr_types[s.buffer_var] = elem
            self.line(f"{elem} {name}[{max(count, 1)}] __attribute__((aligned({ALIGN})));")
            self.emit_stmt(s.body)
            return
        size = [str(elem_bytes)]
        for x in s.extents:
            size.append(str(int(x.value)) if isinstance(x, E.IntImm) else
                        self.wrap(self.cast_text(x, "int64"), P_MUL + 1))
        self.cg.helper("irlab_alloc", _ALLOC)
        name = self.bind(s.buffer_var)
        self.ptr_types[s.buffer_var] = elem
        self.line(f"{elem} *{name} = ({elem} *)irlab_alloc({' * '.join(size)});")
        self.line(f"if ({name} == NULL) {self.ret(abi.ERR_ALLOC)}  /* out of memory */")
        self.heap.append(name)
        self.emit_stmt(s.body)
        self.heap.pop()
        self.line(f"free({name});")

    def visit_for(self, s):
        if s.kind == S.ForKind.THREAD_BINDING:
            raise CodegenError(f"loop {s.loop_var.name_hint} is bound to a GPU thread; the CPU "
                               f"targets cannot run it", s)
        if s.kind == S.ForKind.PARALLEL:
            self.parallel(s)
            return
        lo = self.hoist(s.min, s.loop_var.name_hint + "_min")
        extent = self.hoist(s.extent, s.loop_var.name_hint + "_extent")
        note = {S.ForKind.UNROLLED: "  /* unrolled */",
                S.ForKind.VECTORIZED: "  /* vectorized */"}.get(s.kind, "")
        self.loop(s.loop_var, lo, extent, s.body, note)

    def loop(self, var, lo, extent, body, note=""):
        ct = c_type(var.dtype)
        self.frames.append([])
        name = self.bind(var)
        self.frames.pop()
        hi = extent if lo == "0" else f"{lo} + {_paren_if_needed(extent)}"
        self.open_block(f"for ({ct} {name} = {lo}; {name} < {hi}; ++{name}) {{{note}")
        self.frames[-1].append(var)
        self.emit_stmt(body)
        self.close_block()

    # -- memory --------------------------------------------------------------------------
    def address(self, buffer, indices) -> str:
        if len(indices) == 1:
            index = indices[0]
        else:
            strides = list(buffer.strides)
            if not strides:
                acc = E.IntImm(indices[0].dtype, 1)
                for dim in reversed(buffer.shape):
                    strides.insert(0, acc)
                    acc = acc * dim
            index = indices[0] * strides[0]
            for i, st in zip(indices[1:], strides[1:]):
                index = index + i * st
        offset = buffer.elem_offset
        if not (isinstance(offset, E.IntImm) and offset.value == 0):
            index = index + offset
        if _lanes(index) != 1:
            raise CodegenError(f"vector index into {buffer.name} was not scalarized")
        name = self.names.get(buffer.data)
        if name is None:
            raise CodegenError(f"buffer {buffer.name} is used outside the scope of its data "
                               f"{buffer.data.name_hint}")
        elem = c_type(buffer.dtype, memory=True)
        if self.ptr_types.get(buffer.data) != elem:
            name = f"(({elem} *){name})"
        return f"{name}[{self.expr(index)}]"

    def store_text(self, buffer, indices, value) -> str:
        target = self.address(buffer, indices)
        text = self.expr(value)
        if parse_dtype(value.dtype).code == "bool":
            return f"{target} = (uint8_t)({text});"
        return f"{target} = {text};"

    # -- expressions ---------------------------------------------------------------------
    def expr(self, e) -> str:
        return self.prec(e)[0]

    def wrap(self, pair, need) -> str:
        text, p = pair
        return text if p >= need else f"({text})"

    def sub(self, e, need) -> str:
        return self.wrap(self.prec(e), need)

    def prec(self, e):
        ahead = self.__dict__.get("_ahead")
        if ahead is None:  # the outermost call: a statement's expression
            self._ahead, self._depth = {}, 0
            try:
                return self.prec(e)
            finally:
                self._ahead = None
        hit = ahead.get(id(e))
        if hit is not None:
            return hit[1]
        if self._depth > deep_expr.DEEP:  # translate the pure parts below first (deep_expr)
            saved, self._depth = self._depth, 0
            for node in deep_expr.evaluation_order(e, ahead):
                ahead[id(node)] = (node, self.prec(node))
            self._depth = saved
        method = method_table(type(self))[type(e)]
        if method is None:
            raise CodegenError(f"C codegen cannot translate {type(e).__name__}: {e}", e)
        if _lanes(e) != 1 and not isinstance(e, E.StringImm):
            raise CodegenError(f"C codegen: vector expression {e} was not scalarized", e)
        self._depth += 1
        try:
            return method(self, e)
        finally:
            self._depth -= 1

    def visit_var(self, e):
        name = self.names.get(e)
        if name is None:
            raise CodegenError(f"variable {e.name_hint} is used outside its scope", e)
        return name, P_ATOM

    visit_size_var = visit_var

    def visit_int_imm(self, e):
        t = parse_dtype(e.dtype)
        v = int(e.value)
        if t.code == "bool":
            return ("true" if v else "false"), P_ATOM
        if t.code == "uint":
            return (f"{v}u" if v < 2 ** 32 else f"UINT64_C({v})"), P_ATOM
        if t.bits == 64 and not -2 ** 31 < v < 2 ** 31:
            return (f"INT64_C({v})" if v != -2 ** 63 else "INT64_MIN"), P_ATOM
        if v == -2 ** 31:
            return "INT32_MIN", P_ATOM
        if t.bits < 32 and t.bits != 0:
            return (str(v) if v >= 0 else f"({v})"), P_ATOM
        return (str(v), P_ATOM) if v >= 0 else (str(v), P_UNARY)

    def visit_float_imm(self, e):
        t = parse_dtype(e.dtype)
        v = float(e.value)
        if np.isnan(v):
            return ("NAN" if t.bits == 32 else "(double)NAN"), P_ATOM
        if np.isinf(v):
            sign = "-" if v < 0 else ""
            text = f"{sign}INFINITY" if t.bits == 32 else f"{sign}(double)INFINITY"
            return text, P_UNARY if sign else P_ATOM
        text = str(np.float32(v)) if t.bits == 32 else repr(v)
        if not any(c in text for c in ".en"):
            text += ".0"
        if t.bits == 32:
            text += "f"
        elif t.bits == 16:
            text = f"(_Float16){text}f"
        return text, (P_UNARY if text.startswith("-") or t.bits == 16 else P_ATOM)

    def visit_string_imm(self, e):
        return _c_string(e.value), P_ATOM

    def cast_text(self, value, dst):
        src = value.dtype
        s, d = parse_dtype(src), parse_dtype(dst)
        if s == d:
            return self.prec(value)
        if d.code == "bool":
            zero = "0" if not s.is_float else ("0.0f" if s.bits == 32 else "0.0")
            return f"{self.sub(value, P_REL)} != {zero}", P_EQ
        return f"({c_type(dst)}){self.sub(value, P_UNARY)}", P_UNARY

    def visit_cast(self, e):
        return self.cast_text(e.value, e.dtype)

    def _narrow(self, e, pair):
        """C promotes int8/int16 arithmetic to int: truncate back to the TIR type."""
        t = parse_dtype(e.dtype)
        if t.code in ("int", "uint") and t.bits < 32:
            return f"({c_type(e.dtype)})({pair[0]})", P_UNARY
        return pair

    def _binop(self, e, op, p):
        return self._narrow(e, (f"{self.sub(e.a, p)} {op} {self.sub(e.b, p + 1)}", p))

    def _negated(self, e, op):
        """``a + -3`` reads better as ``a - 3`` (and ``a - -3`` as ``a + 3``)."""
        b = e.b
        if isinstance(b, E.IntImm) and parse_dtype(b.dtype).code == "int" and \
                -2 ** (parse_dtype(b.dtype).bits - 1) < int(b.value) < 0:
            return self._narrow(e, (f"{self.sub(e.a, P_ADD)} {op} {-int(b.value)}", P_ADD))
        return None

    def visit_add(self, e):
        return self._negated(e, "-") or self._binop(e, "+", P_ADD)

    def visit_sub(self, e):
        return self._negated(e, "+") or self._binop(e, "-", P_ADD)

    def visit_mul(self, e):
        return self._binop(e, "*", P_MUL)

    def _cmp(self, e):
        op, p = _BINOPS[type(e)]
        return f"{self.sub(e.a, p)} {op} {self.sub(e.b, p + 1)}", p

    visit_eq = visit_ne = visit_lt = visit_le = visit_gt = visit_ge = _cmp

    def _safe_divisor(self, e) -> bool:
        b = e.b
        return isinstance(b, E.IntImm) and int(b.value) != 0 and (
            int(b.value) != -1 or parse_dtype(e.dtype).code != "int")

    def _checked(self, e, kind):
        """``a / b`` or ``a % b`` through a helper that raises ``err`` when ``b`` is 0 (as
        codegen_llvm, a signed ``INT_MIN / -1`` wraps to ``INT_MIN`` instead of trapping)."""
        t = parse_dtype(e.dtype)
        ct = c_type(e.dtype)
        name = f"irlab_{kind}_{_suffix(e.dtype)}"
        op = {"div": "/", "mod": "%", "floordiv": "/", "floormod": "%"}[kind]
        lines = [f"static inline {ct} {name}({ct} a, {ct} b, int32_t *err) {{",
                 "  if (b == 0) {",
                 "    *err = 1;",
                 "    return 0;",
                 "  }"]
        if t.code == "int":
            ut = "u" + ct
            minus = (f"({ct})(({ut})0 - ({ut})a);  /* wraps for INT{t.bits}_MIN */"
                     if op == "/" else "0;")
            lines.append(f"  if (b == -1) return {minus}")
        if kind in ("div", "mod") or t.code != "int":
            lines.append(f"  return a {op} b;")
        elif kind == "floordiv":
            lines += ["  " + ct + " q = a / b;",
                      "  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;"]
        else:
            lines += ["  " + ct + " r = a % b;",
                      "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;"]
        lines.append("}")
        self.cg.helper(name, "\n".join(lines))
        symbol = {"div": "/", "mod": "%", "floordiv": "//", "floormod": "%"}[kind]
        if not (isinstance(e.b, E.IntImm) and int(e.b.value) != 0):
            self.faults.append(f"{e.a} {symbol} {e.b}" if kind != "floormod" else
                               f"floormod({e.a}, {e.b})")
            self.uses_err = True
        else:
            self.uses_err = True  # the helper still takes &err
        return f"{name}({self.expr(e.a)}, {self.expr(e.b)}, &err)", P_ATOM

    def _libm_name(self, base, dtype):
        t = parse_dtype(dtype)
        return base + ("f" if t.bits <= 32 else "")

    def visit_div(self, e):
        if parse_dtype(e.dtype).is_float:
            return f"{self.sub(e.a, P_MUL)} / {self.sub(e.b, P_MUL + 1)}", P_MUL
        if self._safe_divisor(e):
            return self._narrow(e, (f"{self.sub(e.a, P_MUL)} / {self.sub(e.b, P_MUL + 1)}",
                                    P_MUL))
        return self._checked(e, "div")

    def visit_mod(self, e):
        if parse_dtype(e.dtype).is_float:
            return f"{self._libm_name('fmod', e.dtype)}({self.expr(e.a)}, " \
                   f"{self.expr(e.b)})", P_ATOM
        if self._safe_divisor(e):
            return self._narrow(e, (f"{self.sub(e.a, P_MUL)} % {self.sub(e.b, P_MUL + 1)}",
                                    P_MUL))
        return self._checked(e, "mod")

    def visit_floor_div(self, e):
        if parse_dtype(e.dtype).is_float:
            return f"{self._libm_name('floor', e.dtype)}({self.sub(e.a, P_MUL)} / " \
                   f"{self.sub(e.b, P_MUL + 1)})", P_ATOM
        if parse_dtype(e.dtype).code == "uint" and self._safe_divisor(e):
            return self.visit_div(e)
        return self._checked(e, "floordiv")

    def visit_floor_mod(self, e):
        if parse_dtype(e.dtype).is_float:
            fl = self._libm_name("floor", e.dtype)
            a, b = self.sub(e.a, P_MUL), self.sub(e.b, P_MUL + 1)
            return f"{self.sub(e.a, P_ADD)} - {fl}({a} / {b}) * {b}", P_ADD
        if parse_dtype(e.dtype).code == "uint" and self._safe_divisor(e):
            return self.visit_mod(e)
        return self._checked(e, "floormod")

    def _minmax(self, e, kind):
        """A call of a ``static inline`` helper. Floats propagate NaN as ``np.maximum`` does:
        the helper tests its second operand, ``(b > a || b != b) ? b : a``, so that with a
        constant there (relu's 0) the compiler drops the NaN test: one ``maxps``."""
        ct = c_type(e.dtype)
        name = f"irlab_{kind}_{_suffix(e.dtype)}"
        op = "<" if kind == "min" else ">"
        a, b = e.a, e.b
        if parse_dtype(e.dtype).is_float:
            body = f"(b {op} a || b != b) ? b : a"
            if O.never_nan(a) and not O.never_nan(b):
                a, b = b, a
        else:
            body = f"a {op} b ? a : b"
        self.cg.helper(name, f"static inline {ct} {name}({ct} a, {ct} b) {{\n"
                             f"  return {body};\n}}")
        return f"{name}({self.expr(a)}, {self.expr(b)})", P_ATOM

    def visit_min(self, e):
        return self._minmax(e, "min")

    def visit_max(self, e):
        return self._minmax(e, "max")

    def visit_and(self, e):
        return f"{self.sub(e.a, P_LAND + 1)} && {self.sub(e.b, P_LAND + 1)}", P_LAND

    def visit_or(self, e):
        # ``a && b || c`` is legal C, but parentheses make it readable
        return f"{self.sub(e.a, P_LAND + 1)} || {self.sub(e.b, P_LAND + 1)}", P_LOR

    def visit_not(self, e):
        return f"!{self.sub(e.a, P_UNARY)}", P_UNARY

    def visit_select(self, e):
        return (f"{self.sub(e.condition, P_EQ)} ? {self.sub(e.true_value, P_COND + 1)} : "
                f"{self.sub(e.false_value, P_COND)}"), P_COND

    def visit_let(self, e):
        value = self.expr(e.value)
        name = self.bind(e.var)
        self.pending.append(f"const {c_type(e.var.dtype)} {name} = {value};")
        return self.prec(e.body)

    def visit_buffer_load(self, e):
        if parse_dtype(e.buffer.dtype).lanes != 1:
            raise CodegenError(f"C codegen: buffer {e.buffer.name} has vector type "
                               f"{e.buffer.dtype}", e)
        text = self.address(e.buffer, list(e.indices))
        if parse_dtype(e.dtype).code == "bool":
            return f"{text} != 0", P_EQ
        return text, P_ATOM

    def visit_ramp(self, e):
        raise CodegenError(f"C codegen: vector expression {e} was not scalarized", e)

    visit_broadcast = visit_shuffle = visit_ramp

    # -- parallel loops ------------------------------------------------------------------
    def parallel(self, s):
        free = [v for v in vars_used(s) if v in self.names and v is not s.loop_var]
        self.counter[0] += 1
        fname = f"{self.symbol}_parallel_{self.counter[0]}"
        self.cg.reserve(fname)
        # the outlined body: runs the loop over [begin, end), unpacking the closure
        inner = _FunctionWriter(self.cg, self.symbol, self.info, self.noalias, parent=self)
        inner.buffers = dict(self.buffers)
        inner.vec_vars = dict(self.vec_vars)
        words = []
        for k, v in enumerate(free):
            if v in self.ptr_types:
                ct = self.ptr_types[v]
                name = inner.bind(v, self.names[v])
                inner.ptr_types[v] = ct
                restrict = " restrict" if self.noalias and ct != "void" else ""
                inner.line(f"{ct} *{restrict} {name} = ({ct} *)(intptr_t)words[{k}];"
                           .replace("* restrict", "*restrict"))
                words.append(f"(int64_t)(intptr_t){self.names[v]}")
            else:
                ct = c_type(v.dtype)
                name = inner.bind(v, self.names[v])
                inner.line(f"{ct} {name} = {_from_slot(f'words[{k}]', ct, v.dtype, self.cg)};")
                if parse_dtype(v.dtype).is_float:
                    self.cg.helper("irlab_double_to_bits", _DOUBLE_TO_BITS)
                    words.append(f"irlab_double_to_bits({self.names[v]})")
                else:
                    words.append(f"(int64_t){self.names[v]}")
        ct = c_type(s.loop_var.dtype)
        inner.pending, inner.faults = [], []
        lo = inner.hoist(s.min, s.loop_var.name_hint + "_min")
        start = f"({ct})begin" if lo == "0" else f"({ct})begin + {_paren_if_needed(lo)}"
        stop = f"({ct})end" if lo == "0" else f"({ct})end + {_paren_if_needed(lo)}"
        inner.frames.append([])
        name = inner.bind(s.loop_var)
        inner.frames.pop()
        inner.open_block(f"for ({ct} {name} = {start}; {name} < {stop}; ++{name}) {{")
        inner.frames[-1].append(s.loop_var)
        inner.emit_stmt(s.body)
        inner.close_block()
        body = inner.finish()
        head = (f"/* parallel loop `{s.loop_var.name_hint}` of {self.symbol}: runs "
                f"{s.loop_var.name_hint} over [begin, end) (+ min); closure: "
                f"{', '.join(self.names[v] for v in free) or 'empty'} */\n"
                f"static int32_t {fname}(int64_t begin, int64_t end, void *closure) {{\n")
        unpack = f"{INDENT}int64_t *words = (int64_t *)closure;\n" if free else \
            f"{INDENT}(void)closure;\n"
        self.outlined.append(head + unpack + body + "}\n")
        # here: fill the closure and hand the loop to the thread pool (or run it serially)
        extent = self.hoist(s.extent, s.loop_var.name_hint + "_extent")
        self.open_block(f"{{  /* parallel for {self.names.get(s.loop_var, s.loop_var.name_hint)}"
                        f" in [0, {extent}) */")
        decl = f"int64_t closure[{max(len(free), 1)}] = {{"
        if len(decl) + sum(len(w) + 2 for w in words) + 2 * self.depth > 96:
            self.line(decl)
            for k, w in enumerate(words):
                self.line(f"{INDENT * 2}{w}{',' if k + 1 < len(words) else ''}  "
                          f"/* {self.names[free[k]]} */")
            self.line("};")
        else:
            self.line(f"{decl}{', '.join(words) or '0'}}};")
        self.line(f"int32_t status = {abi.PARALLEL_HOOK} != NULL")
        self.line(f"{INDENT * 2}? {abi.PARALLEL_HOOK}({fname}, closure, {extent})")
        self.line(f"{INDENT * 2}: {fname}(0, {extent}, closure);")
        self.line(f"if (status != 0) {self.ret('status')}")
        self.close_block()


from irlab.target.c_compile import build_c, compile_source  # noqa: E402,F401 (re-export)
