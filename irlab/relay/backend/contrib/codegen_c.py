"""Base classes of external C codegens (TVM's ``CodegenCBase`` / ``CSourceModuleCodegenBase``).

``CodegenC`` is an ``ExprVisitor`` over one partitioned function: each node gives the list of
C values (``Output``: a name, dtype and shape) it produces; an operator call writes a loop into
a fresh buffer. ``CSourceModuleCodegenBase`` wraps the C of a function into a ``CSourceModule``
(an entry point with irlab's calling convention plus the metadata the runtime checks calls
with) and registers itself as ``relay.ext.<compiler>``. A new external codegen overrides
``CodegenC.emit_op`` (or adds entries to ``ELEMENTWISE``) and names its compiler::

    class MyCodegen(CodegenC):
        ELEMENTWISE = {**CodegenC.ELEMENTWISE, "maximum": "({0} > {1} ? {0} : {1})"}

    class MyModuleCodegen(CSourceModuleCodegenBase):
        compiler, codegen_class = "mycomp", MyCodegen

    MyModuleCodegen.register()        # relay.build now calls it for Compiler="mycomp"
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.op import Op
from irlab.ir.type import TensorType, flatten_tuple_type
from irlab.relay.expr_functor import ExprVisitor
from irlab.relay.function import Function
from irlab.runtime.abi import ERR_ALLOC, FunctionInfo, ParamInfo
from irlab.runtime.registry import register_func

_C_TYPES = {"float32": "float", "float64": "double", "int8": "int8_t", "int16": "int16_t",
            "int32": "int32_t", "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t",
            "uint32": "uint32_t", "uint64": "uint64_t", "bool": "uint8_t"}


def c_type(dtype: str) -> str:
    """The C element type of a tensor of ``dtype``."""
    if dtype not in _C_TYPES:
        raise IrlabError(f"external C codegen: dtype {dtype} is not supported "
                         f"(supported: {', '.join(_C_TYPES)})")
    return _C_TYPES[dtype]


def c_literal(value, dtype: str) -> str:
    """A C literal holding ``value`` exactly (floats as hexadecimal literals)."""
    if dtype.startswith("float"):
        value = float(value)
        if math.isnan(value):
            return "NAN"
        if math.isinf(value):
            return "INFINITY" if value > 0 else "-INFINITY"
        return value.hex() + ("f" if dtype == "float32" else "")
    return str(int(value)) + {"int64": "LL", "uint64": "ULL", "uint32": "U"}.get(dtype, "")


@dataclass(frozen=True)
class Output:
    """A C array the generated code computes or reads: its name, dtype and shape, and its
    ``layout``: '' is row-major (what the function's parameters and results are); a codegen
    may keep intermediate arrays in another order (dnnl: ``"nhwc"``) and convert its results
    back in ``finish_results``."""

    name: str
    dtype: str
    shape: tuple
    layout: str = ""

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


def _tensor_types(ty) -> list:
    """The tensor types of a value of type ``ty`` (a tuple's fields, flattened)."""
    types = flatten_tuple_type(ty)
    for leaf in types:
        if not isinstance(leaf, TensorType):
            raise IrlabError(f"external C codegen handles tensors, got {leaf}")
    return types


def _as_output(name, ty) -> Output:
    return Output(name, ty.dtype, tuple(int(d) for d in ty.shape))


def broadcast_index(flat: str, out: Output, operand: Output) -> str:
    """The C index into ``operand`` for element ``flat`` of ``out`` (numpy broadcasting)."""
    if operand.shape == out.shape:
        return flat
    if operand.size == 1:
        return "0"
    rank = len(out.shape)
    shape = (1,) * (rank - len(operand.shape)) + tuple(operand.shape)
    terms, out_stride, in_stride = [], 1, 1
    for dim in reversed(range(rank)):
        if shape[dim] != 1:
            term = f"({flat} / {out_stride}) % {out.shape[dim]}" if out_stride > 1 else \
                f"{flat} % {out.shape[dim]}"
            terms.append(f"({term}) * {in_stride}" if in_stride > 1 else f"({term})")
        out_stride *= out.shape[dim]
        in_stride *= shape[dim]
    return " + ".join(terms) or "0"


class CodegenC(ExprVisitor):
    """One partitioned Relay function -> one C function (seed 002's ``CodegenC``).

    ``visit`` returns the list of ``Output`` an expression produces. Statements go to
    ``body``, intermediate arrays to ``buffers`` (heap, freed at the end), constant arrays and
    helpers to ``globals``. Subclasses override ``emit_op`` / ``emit_composite``."""

    # op name -> C expression of the inputs' elements {0}, {1}, ...
    ELEMENTWISE = {"add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
                   "nn.relu": "({0} > 0 ? {0} : 0)"}

    HEADERS = ("math.h", "stdint.h", "stdlib.h", "string.h")  # what the C always includes

    def __init__(self, symbol: str, compiler: str = "ccompiler"):
        super().__init__()
        self.symbol = symbol
        self.compiler = compiler
        self.body: list[str] = []
        self.buffers: list[Output] = []
        self.globals: list[str] = []
        self.headers = set(self.HEADERS)  # emit_op may add more
        # why a call failed: a body statement setting ``status = k > 0`` reports messages[k-1]
        self.messages: list[str] = []
        self._ids = itertools.count()

    def fresh(self, prefix: str) -> str:
        """A new C name, unique in this function."""
        return f"{prefix}_{next(self._ids)}"

    # -- the visitor ------------------------------------------------------------------------
    def visit_var(self, var):
        raise IrlabError(f"{self.compiler} codegen: variable %{var.name_hint} is not a "
                         f"parameter of {self.symbol} (let bindings are not supported)")

    def _unsupported(self, expr):
        raise IrlabError(f"{self.compiler} codegen: {type(expr).__name__} nodes are not "
                         f"supported in {self.symbol} (it emits dataflow graphs of operator "
                         f"calls)")

    visit_let = visit_if = visit_function = visit_global_var = _unsupported

    def visit_constant(self, const):
        ty = const.checked_type
        out = _as_output(f"{self.symbol}_const_{next(self._ids)}", ty)
        data = np.asarray(const.data.numpy()).reshape(-1)
        values = ", ".join(c_literal(v, out.dtype) for v in data)
        self.globals.append(f"static const {c_type(out.dtype)} {out.name}[{max(out.size, 1)}]"
                            f" = {{{values}}};")
        return [out]

    def visit_tuple(self, tup):
        return [o for field in tup.fields for o in self.visit(field)]

    def visit_tuple_getitem(self, t):
        return [self.visit(t.tuple_value)[t.index]]

    def visit_call(self, call):
        inputs = []
        for arg in call.args:
            outs = self.visit(arg)
            if len(outs) != 1:
                raise IrlabError(f"{self.compiler} codegen: a call takes tuples "
                                 f"({call.op}); only tensor arguments are supported")
            inputs.append(outs[0])
        if isinstance(call.op, Op):
            return [self.emit_op(call, inputs)]
        if isinstance(call.op, Function) and call.op.attrs and "Composite" in call.op.attrs:
            return self.emit_composite(call, inputs)
        raise IrlabError(f"{self.compiler} codegen: cannot call {type(call.op).__name__} "
                         f"in {self.symbol}")

    # -- what subclasses extend ------------------------------------------------------------
    def emit_op(self, call, inputs: list) -> Output:
        """C for one operator call; the default handles ``ELEMENTWISE`` operators."""
        template = self.ELEMENTWISE.get(call.op.name)
        if template is None:
            raise IrlabError(f"{self.compiler} codegen does not support operator "
                             f"{call.op.name} (supported: {', '.join(self.ELEMENTWISE)})")
        return self.emit_elementwise(call, inputs, template)

    def emit_composite(self, call, inputs: list) -> list:
        """C for a call of a ``Composite`` function; the default emits its body inline."""
        inner = type(self)(self.symbol, self.compiler)
        inner.body, inner.buffers, inner.globals = self.body, self.buffers, self.globals
        inner.headers, inner._ids, inner.messages = self.headers, self._ids, self.messages
        for param, value in zip(call.op.params, inputs):
            inner.memo_map[param] = [value]
        return inner.visit(call.op.body)

    def new_buffer(self, ty) -> Output:
        """A fresh intermediate array of TensorType ``ty``."""
        out = _as_output(self.fresh("buf"), ty)
        self.buffers.append(out)
        return out

    def emit_elementwise(self, call, inputs: list, template: str) -> Output:
        """A loop writing ``template`` of the inputs' (broadcast) elements to a new buffer."""
        out = self.new_buffer(call.checked_type)
        values = [f"{x.name}[{broadcast_index('i', out, x)}]" for x in inputs]
        expr = template.format(*values)
        self.body.append(f"for (int64_t i = 0; i < {out.size}; ++i) {{\n"
                         f"    {out.name}[i] = ({c_type(out.dtype)})({expr});\n  }}")
        return out

    # -- the function ----------------------------------------------------------------------
    def generate(self, func: Function) -> tuple[str, FunctionInfo]:
        """The C definition of ``func`` (entry point ``symbol``) and how to call it."""
        params = []
        for k, p in enumerate(func.params):
            types = _tensor_types(p.checked_type)
            if len(types) != 1:
                raise IrlabError(f"{self.compiler} codegen: parameter %{p.name_hint} of "
                                 f"{self.symbol} is a tuple; only tensors are supported")
            params.append(_as_output(f"in{k}", types[0]))
            self.memo_map[p] = [params[-1]]
        results = self.finish_results(self.visit(func.body))
        outs = [_as_output(f"out{k}", t) for k, t in enumerate(_tensor_types(
            func.body.checked_type))]
        return self._definition(params, outs, results), self._info(params, outs)

    def _definition(self, params, outs, results) -> str:
        args = [f"const {c_type(p.dtype)}* {p.name}" for p in params]
        args += [f"{c_type(o.dtype)}* {o.name}" for o in outs]
        lines = [f"static int32_t {self.symbol}_({', '.join(args)}) {{"]
        for b in self.buffers:
            t = c_type(b.dtype)
            lines.append(f"  {t}* {b.name} = ({t}*)malloc({max(b.size, 1)} * sizeof({t}));")
        if self.buffers:
            ok = " && ".join(b.name for b in self.buffers)
            lines.append(f"  int32_t status = ({ok}) ? 0 : {ERR_ALLOC};")
            lines.append("  if (status == 0) {")
        pad = "    " if self.buffers else "  "
        body = [s.replace("\n", "\n" + pad[2:]) for s in self.body]
        body += [f"memcpy({o.name}, {r.name}, {o.size} * sizeof({c_type(o.dtype)}));"
                 for o, r in zip(outs, results)]
        lines += [pad + s for s in body]
        if self.buffers:
            lines.append("  }")
            lines += [f"  free({b.name});" for b in self.buffers]
            lines.append("  return status;")
        else:
            lines.append("  return 0;")
        lines.append("}")
        call = ",\n      ".join(f"({'const ' if k < len(params) else ''}{c_type(x.dtype)}*)"
                                f"(intptr_t)args[{k}]" for k, x in enumerate(params + outs))
        lines += ["", "/* entry point: irlab's calling convention (irlab.runtime.abi) */",
                  f"int32_t {self.symbol}(int64_t* args) {{",
                  *self.entry_body(f"{self.symbol}_(\n      {call})"), "}"]
        return "\n".join(self.globals + [""] + lines) + "\n"

    def finish_results(self, results: list) -> list:
        """The function's results as row-major arrays (they are copied to the outputs); a
        codegen keeping arrays in another layout converts them here."""
        return results

    def entry_body(self, call: str) -> list:
        """The statements of the entry point around ``call`` (the C function's call
        expression); a subclass may take a lock around it."""
        return [f"  return {call};"]

    def _info(self, params, outs) -> FunctionInfo:
        infos = [ParamInfo(x.name, "buffer", x.dtype, list(x.shape), written=x in outs)
                 for x in params + outs]
        return FunctionInfo(self.symbol, infos, asserts=list(self.messages))


class CSourceModuleCodegenBase:
    """Turns a partitioned function (``Compiler=compiler``) into a ``CSourceModule``.

    Calling an instance with the function is what ``relay.ext.<compiler>`` does."""

    compiler = "ccompiler"
    codegen_class = CodegenC

    def support_code(self) -> str:
        """C placed before the functions (helpers they call); none by default."""
        return ""

    def compile_options(self) -> tuple:
        """``(flags, libraries)`` the C compiler needs for the source (include directories,
        the libraries it calls); none by default."""
        return (), ()

    def __call__(self, func):
        return self.create_c_source_module(func)

    def gen_c_func(self, func: Function) -> tuple[str, FunctionInfo, set]:
        """The C of one partitioned function (by ``codegen_class``), how to call it and the
        headers it needs."""
        attrs = func.attrs or {}
        symbol = str(attrs.get("global_symbol", "")) or f"{self.compiler}_main"
        codegen = self.codegen_class(symbol, self.compiler)
        code, info = codegen.generate(func)
        return code, info, codegen.headers

    def create_c_source_module(self, func):
        from irlab.target.source_module import CSourceModule

        code, info, headers = self.gen_c_func(func)
        includes = "\n".join(f"#include <{h}>" for h in sorted(headers))
        banner = f"/* generated by the {self.compiler} external codegen (irlab BYOC) */"
        support = self.support_code()
        support = f"{support.strip()}\n\n" if support else ""
        flags, libraries = self.compile_options()
        return CSourceModule(f"{banner}\n{includes}\n\n{support}{code}", [info],
                             flags=flags, libraries=libraries)

    @classmethod
    def register(cls, override=True):
        """Register an instance as the global function ``relay.ext.<compiler>``."""
        return register_func(f"relay.ext.{cls.compiler}", cls(), override=override)


__all__ = ["CodegenC", "CSourceModuleCodegenBase", "Output", "c_type", "c_literal",
           "broadcast_index"]
