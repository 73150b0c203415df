"""The texts behind ``LoweringExplorer``, with no widget library: one kernel of a built module
at every level (Relay, TIR from TE, scheduled TIR + trace, lowered TIR, LLVM IR, assembly) and
the loop map that links them. A kernel an external compiler made (BYOC, ``Compiler="dnnl"``)
has two levels: its partitioned Relay function and the source its codegen generated.

Loops are named after their TIR loop variable at every level: the LLVM code generator names a
loop's basic blocks ``for.<var>`` / ``for.<var>.body`` / ``for.<var>.end`` (the exit), and
verbose assembly prints each machine block's IR name as a comment (``# %for.<var>.body``;
after inlining into the packed function, optimized IR adds ``.i``). A loop's blocks are its
header and what is reachable from its body without going back through the header or out through
its exit (nested loops and ``if`` blocks included), found on the generated (unoptimized) IR and
looked up by name in the optimized IR and both assemblies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PANES = (
    ("relay", "Relay"),
    ("te", "TIR from TE"),
    ("scheduled", "Scheduled TIR"),
    ("lowered", "Lowered TIR"),
    ("llvm", "LLVM IR"),
    ("asm", "Assembly"),
    ("source", "External source"),
)
PANE_KEYS = tuple(k for k, _ in PANES)
NATIVE_PANES = ("relay", "te", "scheduled", "lowered", "llvm", "asm")
EXTERNAL_PANES = ("relay", "source")
TIR_PANES = ("te", "scheduled", "lowered")

_TIR_FOR = re.compile(r"^(\s*)for (.+?) in ")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_LL_DEFINE = re.compile(r'^define\b[^@]*@"?([^"(\s]+)"?\s*\(')
_LL_LABEL = re.compile(r'^"?([-\w.$]+)"?:')
_LL_TARGET = re.compile(r'label %"?([-\w.$]+)"?')
_ASM_TYPE = re.compile(r"^\s*\.type\s+\"?([^\",\s]+)\"?\s*,\s*@function")
_ASM_SIZE = re.compile(r"^\s*\.size\s+\"?([^\",\s]+)\"?\s*,")
_ASM_LABEL = re.compile(r"^(?:[.\w$]+:|# %bb\.\d+:)")
_ASM_NAME = re.compile(r"#\s+%([-\w.$]+)\s*$")
_INLINED = re.compile(r"\.i\d*$")


def kernel_symbol(name: str, symbol: str) -> bool:
    """Whether ``symbol`` (an LLVM function or assembly symbol) belongs to kernel ``name``:
    the packed function itself, its ``_compute`` body or an outlined ``_parallel_<k>`` body."""
    if symbol == name or symbol == name + "_compute":
        return True
    rest = symbol[len(name):] if symbol.startswith(name) else ""
    return re.fullmatch(r"(?:_compute)?_parallel_\d+", rest) is not None


def mentions(line: str, var: str) -> bool:
    """``var`` occurs in ``line`` as a whole identifier."""
    return bool(var) and re.search(rf"(?<![\w.%]){re.escape(var)}(?!\w)", line) is not None


# -- TIR ------------------------------------------------------------------------------------------
def tir_loops(text: str):
    """Per line of printed TIR: (header vars or None, vars of the loops enclosing the line,
    innermost last). A ``for a, b in T.grid(...)`` header opens one loop per variable."""
    out = []
    stack = []  # (indent, [vars])
    for line in text.split("\n"):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if stripped:
            while stack and indent <= stack[-1][0]:
                stack.pop()
        match = _TIR_FOR.match(line)
        header = None
        if match:
            header = [v for v in (p.strip() for p in match.group(2).split(",")) if
                      _IDENT.fullmatch(v)]
            stack.append((indent, header))
        enclosing = [v for _, vs in stack for v in vs]
        out.append((header, enclosing))
    return out


# -- LLVM IR --------------------------------------------------------------------------------------
def llvm_functions(text: str) -> dict:
    """``{symbol: text}`` of every ``define`` in an LLVM IR module."""
    funcs, name, buf = {}, None, []
    for line in text.split("\n"):
        if name is None:
            match = _LL_DEFINE.match(line)
            if match:
                name, buf = match.group(1), [line]
            continue
        buf.append(line)
        if line.startswith("}"):
            funcs[name] = "\n".join(buf)
            name = None
    return funcs


def kernel_llvm(text: str, name: str) -> str:
    """The functions of kernel ``name`` in an LLVM IR module, in module order."""
    return "\n\n".join(body for sym, body in llvm_functions(text).items()
                       if kernel_symbol(name, sym))


def llvm_blocks(func_text: str):
    """``[(label, first line, last line, successors)]`` of one function's text."""
    blocks = []
    lines = func_text.split("\n")
    for i, line in enumerate(lines):
        match = _LL_LABEL.match(line)
        if match and not line.startswith("define"):
            blocks.append([match.group(1), i, i, []])
        elif blocks:
            blocks[-1][2] = i
            if line.lstrip().startswith(("br ", "switch ")):
                blocks[-1][3].extend(_LL_TARGET.findall(line))
    return [tuple(b) for b in blocks]


def llvm_loop_blocks(llvm_text: str) -> dict:
    """``{var: set of block names}``: the blocks of every ``for.<var>`` loop of the raw IR."""
    loops: dict = {}
    for body in llvm_functions(llvm_text).values():
        blocks = llvm_blocks(body)
        succ = {b[0]: b[3] for b in blocks}
        for label in succ:
            match = re.fullmatch(r"for\.(\w+)", label)
            if not match:
                continue
            var = match.group(1)
            seen = {label}
            todo = [f"{label}.body"] if f"{label}.body" in succ else []
            stop = {label, f"{label}.end"}
            while todo:
                block = todo.pop()
                if block in seen or block in stop:
                    continue
                seen.add(block)
                todo.extend(succ.get(block, ()))
            loops.setdefault(var, set()).update(seen)
    return loops


def block_owner(loops: dict) -> dict:
    """``{block name: var of the innermost loop holding it}``."""
    owner = {}
    for var, blocks in sorted(loops.items(), key=lambda kv: -len(kv[1])):
        for block in blocks:
            owner[block] = var  # smaller (inner) loops come later and win
    return owner


def _raw_block_name(name: str, known) -> str:
    """An optimized IR / assembly block name as the raw IR's (``for.x.body.i`` ->
    ``for.x.body``)."""
    while name not in known:
        stripped = _INLINED.sub("", name)
        if stripped == name or "." not in stripped:
            break
        name = stripped
    return name


def llvm_line_blocks(text: str):
    """The block name of every line of LLVM IR text ('' outside blocks)."""
    out, current = [], ""
    for line in text.split("\n"):
        if line.startswith("define") or line.startswith("}"):
            current = ""
        else:
            match = _LL_LABEL.match(line)
            if match:
                current = match.group(1)
        out.append(current)
    return out


# -- assembly -------------------------------------------------------------------------------------
def asm_functions(text: str) -> dict:
    """``{symbol: text}`` of every function of an assembly listing: from the end of the
    previous function (so its constant pool comes along) to its ``.size`` line."""
    funcs = {}
    lines = text.split("\n")
    start = 0
    pending = None
    for i, line in enumerate(lines):
        match = _ASM_TYPE.match(line)
        if match:
            pending = match.group(1)
            continue
        match = _ASM_SIZE.match(line)
        if match and pending is not None and match.group(1) == pending:
            funcs[pending] = "\n".join(lines[start:i + 1]).strip("\n")
            start = i + 1
            pending = None
    return funcs


def kernel_asm(text: str, name: str) -> str:
    return "\n\n".join(body for sym, body in asm_functions(text).items()
                       if kernel_symbol(name, sym))


def asm_line_blocks(text: str):
    """The IR block name of every line of verbose assembly (from ``# %name`` comments on
    labels; '' for blocks without one)."""
    out, current = [], ""
    for line in text.split("\n"):
        if _ASM_LABEL.match(line):
            match = _ASM_NAME.search(line)
            current = match.group(1) if match else ""
        elif _ASM_TYPE.match(line) or _ASM_SIZE.match(line):
            current = ""
        out.append(current)
    return out


def assembly(llvm_text: str, target) -> str:
    """Verbose assembly of an LLVM IR module for ``target`` (block names as comments)."""
    import llvmlite.binding as llvm

    from irlab.target import Target
    from irlab.target.llvm_jit import target_machine

    tm = target_machine(target if isinstance(target, Target) else Target(str(target)))
    tm.set_asm_verbosity(True)
    return tm.emit_assembly(llvm.parse_assembly(llvm_text))


# -- one kernel -----------------------------------------------------------------------------------
@dataclass
class KernelView:
    """Every text of one kernel and its loop map (built lazily per pane)."""

    name: str
    lowered: object
    library: "ModuleTexts"
    texts: dict = field(default_factory=dict)
    _loops: dict | None = None
    _default: object = None  # TOPI's LoweredFunction of a tuned kernel (default_lowering)
    panes = NATIVE_PANES  # the levels this kernel has
    compiler = ""  # native: compiled by irlab

    def pane_title(self, pane: str, default: str) -> str:
        return default

    @property
    def anchor_op(self) -> str:
        anchor = getattr(self.lowered, "anchor", None)
        op = anchor[2] if anchor else None
        return getattr(op, "name", "") if op is not None else ""

    @property
    def implementation(self) -> str:
        if self.tuned:
            return "meta_schedule (tuned)"
        anchor = getattr(self.lowered, "anchor", None)
        return getattr(anchor[0], "name", "") if anchor else ""

    @property
    def tuned(self) -> bool:
        """Scheduled by a tuning record (its trace holds the sampled decisions)."""
        return bool(getattr(self.lowered, "tuned", False))

    def default_lowering(self):
        """What TOPI's schedule makes of this kernel (the untuned default a tuned kernel is
        compared with): ``lower_function`` again, with no tuning database in scope."""
        if self._default is None:
            from irlab.meta_schedule.database.database import Database
            from irlab.relay.backend.te_compiler import lower_function

            if Database.current() is not None:
                raise RuntimeError("the TOPI default is made outside a 'with database:' "
                                   "scope; create the explorer after it")
            self._default = lower_function(self.lowered.relay_func, self.library.target,
                                           self.name)
        return self._default

    def text(self, pane: str, optimized=False) -> str:
        key = (pane, bool(optimized)) if pane in ("llvm", "asm") else pane
        if key not in self.texts:
            self.texts[key] = self._make(pane, optimized)
        return self.texts[key]

    def has(self, pane, optimized=False) -> bool:
        key = (pane, bool(optimized)) if pane in ("llvm", "asm") else pane
        return key in self.texts

    def _make(self, pane, optimized):
        low = self.lowered
        if pane == "relay":
            return str(low.relay_func)
        if pane == "te":
            func = getattr(low, "tir_from_te", None)
            return str(func) if func is not None else "(not kept by this build)"
        if pane == "scheduled":
            return str(low.prim_func)
        if pane == "trace":
            trace = getattr(getattr(low, "schedule", None), "trace", None)
            return str(trace) if trace is not None else ""
        if pane in ("default_trace", "default_scheduled"):
            default = self.default_lowering()
            return str(default.schedule.trace if pane == "default_trace"
                       else default.prim_func)
        if pane == "lowered":
            return self.library.lowered_tir(self.name, low)
        if pane == "llvm":
            return kernel_llvm(self.library.llvm(optimized), self.name)
        if pane == "asm":
            return kernel_asm(self.library.asm(optimized), self.name)
        if pane == "source":
            return ""  # a native kernel's source is its LLVM IR
        raise KeyError(pane)

    # -- loops ------------------------------------------------------------------------------------
    def raw_loops(self) -> dict:
        if self._loops is None:
            try:
                self._loops = llvm_loop_blocks(self.text("llvm", False))
            except Exception:  # noqa: BLE001 - no LLVM text: TIR panes still link
                self._loops = {}
        return self._loops

    def loop_vars(self) -> list:
        """Loop variables of the kernel: scheduled TIR first, then the other levels."""
        seen = []
        for pane in ("scheduled", "lowered", "te"):
            for header, _ in tir_loops(self.text(pane)):
                for var in header or ():
                    if var not in seen:
                        seen.append(var)
        for var in self.raw_loops():
            if var not in seen:
                seen.append(var)
        return seen

    def line_loops(self, pane: str, text: str) -> list:
        """The loop each line of ``pane``'s ``text`` selects when clicked ('' for none): a
        loop header's (last) variable, else the innermost loop the line is in."""
        if pane in TIR_PANES:
            out = []
            for header, enclosing in tir_loops(text):
                out.append(header[-1] if header else (enclosing[-1] if enclosing else ""))
            return out
        if pane in ("llvm", "asm"):
            owner = block_owner(self.raw_loops())
            blocks = llvm_line_blocks(text) if pane == "llvm" else asm_line_blocks(text)
            return [owner.get(_raw_block_name(b, owner), "") if b else "" for b in blocks]
        return [""] * len(text.split("\n"))

    def marks(self, pane: str, text: str, var: str) -> dict:
        """Lines (0-based) of ``text`` to highlight for loop ``var``: ``head`` (the loop's
        header: TIR ``for``, LLVM ``for.<var>`` block label, its assembly label), ``body``
        (inside the loop), ``use`` (mentions the variable)."""
        head, body, use = [], [], []
        if not var:
            return {"head": head, "body": body, "use": use}
        lines = text.split("\n")
        if pane in TIR_PANES:
            for i, (header, enclosing) in enumerate(tir_loops(text)):
                if header and var in header:
                    head.append(i)
                elif var in enclosing:
                    body.append(i)
                if mentions(lines[i], var) and not (header and var in header):
                    use.append(i)
        elif pane in ("llvm", "asm"):
            blocks = self.raw_loops().get(var, set())
            known = block_owner(self.raw_loops())
            names = llvm_line_blocks(text) if pane == "llvm" else asm_line_blocks(text)
            label = _LL_LABEL if pane == "llvm" else _ASM_LABEL
            for i, name in enumerate(names):
                raw = _raw_block_name(name, known) if name else ""
                if raw and raw in blocks:
                    if label.match(lines[i]) and raw in (f"for.{var}", f"for.{var}.body"):
                        head.append(i)
                    else:
                        body.append(i)
                if pane == "llvm" and (f'%"{var}"' in lines[i] or
                                       re.search(rf"%{re.escape(var)}(?!\w)", lines[i])):
                    use.append(i)
        return {"head": head, "body": body, "use": use}


@dataclass
class ExternalKernelView:
    """A kernel made by an external compiler (BYOC): its partitioned Relay function and the
    source of the module ``relay.ext.<compiler>`` returned (C for ``ccompiler`` / ``dnnl``).
    It has no TIR, LLVM IR or assembly of irlab's, and no loops to link."""

    name: str
    compiler: str
    relay_func: object
    module: object
    panes = EXTERNAL_PANES
    tuned = False  # an external compiler's kernel is never scheduled by a tuning record

    @property
    def anchor_op(self) -> str:
        return self.compiler

    @property
    def implementation(self) -> str:
        return f"relay.ext.{self.compiler}"

    def pane_title(self, pane: str, default: str) -> str:
        if pane == "source":
            fmt = getattr(self.module, "format", "") if self.module is not None else ""
            return f"{self.compiler} source" + (f" ({fmt})" if fmt else "")
        return default

    def text(self, pane: str, optimized=False) -> str:
        if pane == "relay":
            return str(self.relay_func)
        if pane == "source":
            if self.module is None:
                return f"(no module of relay.ext.{self.compiler} implements {self.name})"
            try:
                return self.module.get_source()
            except Exception as err:  # noqa: BLE001 - a binary-only module
                return f"(the {self.compiler} module has no source: {err})"
        if pane == "trace":
            return ""
        if pane in PANE_KEYS:
            return f"(made by the external compiler {self.compiler}, not by irlab's lowering)"
        raise KeyError(pane)

    def has(self, pane, optimized=False) -> bool:
        return True

    def raw_loops(self) -> dict:
        return {}

    def loop_vars(self) -> list:
        return []

    def line_loops(self, pane: str, text: str) -> list:
        return [""] * len(text.split("\n"))

    def marks(self, pane: str, text: str, var: str) -> dict:
        return {"head": [], "body": [], "use": []}


def external_functions(factory) -> dict:
    """``{symbol: (compiler, Relay function)}`` of the functions of a build that external
    compilers made (``Compiler`` attr), in the order the program calls them."""
    from irlab.relay.expr_functor import post_order
    from irlab.relay.function import Function

    found = {}
    mod = getattr(factory, "ir_mod", None)
    if mod is None:
        return found
    for gv, func in mod.functions.items():
        if not isinstance(func, Function):
            continue
        for node in [func, *post_order(func.body)]:
            attrs = node.attrs if isinstance(node, Function) else None
            if attrs is None or "Compiler" not in attrs:
                continue
            symbol = str(attrs.get("global_symbol", "")) or gv.name_hint
            found.setdefault(symbol, (str(attrs["Compiler"]), node))
    return found


def external_kernels(factory) -> list:
    """An ``ExternalKernelView`` per external function of a build, with the imported module
    implementing it."""
    lib = factory.get_lib()
    modules = list(getattr(lib, "imported_modules", ()))
    views = []
    for symbol, (compiler, func) in external_functions(factory).items():
        module = next((m for m in modules if m.implements_function(symbol, True)), None)
        views.append(ExternalKernelView(symbol, compiler, func, module))
    return views


class ModuleTexts:
    """Module-wide texts of a built library (each computed once, when first needed)."""

    def __init__(self, factory, target):
        self.factory = factory
        self.target = target
        self.lib = factory.get_lib()
        self._cache = {}

    def _source(self, fmt):
        if fmt not in self._cache:
            try:
                self._cache[fmt] = self.lib.get_source(fmt)
            except Exception as err:  # noqa: BLE001 - e.g. a C-target library
                self._cache[fmt] = f"; ({fmt} not available: {err})"
        return self._cache[fmt]

    def llvm(self, optimized=False) -> str:
        return self._source("ll" if optimized else "ll-raw")

    def asm(self, optimized=False) -> str:
        key = ("asm", bool(optimized))
        if key not in self._cache:
            try:
                self._cache[key] = assembly(self.llvm(optimized), self.target)
            except Exception as err:  # noqa: BLE001
                self._cache[key] = f"# (assembly not available: {err})"
        return self._cache[key]

    def asm_ready(self, optimized=False) -> bool:
        return ("asm", bool(optimized)) in self._cache

    def lowered_tir(self, name, lowered) -> str:
        """The kernel's lowered TIR as compiled (from the library's ``tir`` source), else
        lowered again from its PrimFunc."""
        text = self._source("tir")
        found = _script_function(text, name)
        if found:
            return found
        try:
            import irlab
            from irlab.ir.module import IRModule

            mod = irlab.lower(IRModule({name: lowered.prim_func}))
            return str(mod[name])
        except Exception as err:  # noqa: BLE001
            return f"# (lowered TIR not available: {type(err).__name__}: {err})"


def _script_function(text: str, name: str) -> str:
    """One ``@T.prim_func`` out of a printed ``@I.ir_module`` (dedented)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if re.match(rf"\s*def {re.escape(name)}\(", line):
            start = i - 1 if i and lines[i - 1].strip() == "@T.prim_func" else i
            indent = len(lines[start]) - len(lines[start].lstrip())
            end = i + 1
            while end < len(lines) and (not lines[end].strip() or
                                        len(lines[end]) - len(lines[end].lstrip()) > indent):
                end += 1
            body = [ln[indent:] for ln in lines[start:end]]
            while body and not body[-1].strip():
                body.pop()
            return "\n".join(body)
    return ""


def as_factory(factory_or_mod, params=None, target="llvm"):
    """A ``GraphExecutorFactoryModule``: the one given, or ``relay.build`` of a module,
    function or ``(mod, params)`` pair."""
    if hasattr(factory_or_mod, "lowered") and hasattr(factory_or_mod, "get_lib"):
        return factory_or_mod
    if isinstance(factory_or_mod, tuple) and len(factory_or_mod) == 2 and params is None:
        factory_or_mod, params = factory_or_mod
    from irlab import relay
    from irlab.ir.module import IRModule

    mod = factory_or_mod if isinstance(factory_or_mod, IRModule) else \
        IRModule.from_expr(factory_or_mod)
    return relay.build(mod, target=target, params=params)
