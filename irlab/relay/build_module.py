"""``relay.build`` (Relay -> graph JSON + kernels + params), ``create_executor`` and
``bind_params_by_name``.

``build(mod, target, params)`` runs ``relay.optimize`` (binding ``params`` as constants), then
graph codegen: LowerTE turns each fused function into a scheduled PrimFunc, the memory plan
assigns storage, and ``irlab.build`` compiles every PrimFunc into one library (for "llvm",
each kernel is handed over as soon as LowerTE has made it, ``build_module.IncrementalBuild``,
so that LLVM compiles on the other cores while Python schedules the next kernels). A function with
``Compiler="<name>"`` (made by ``PartitionGraph``) goes instead to the external codegen
registered as ``relay.ext.<name>``; the module it returns is imported into the library
(``lib.imported_modules``). The result is a ``GraphExecutorFactoryModule``, as TVM's.
"""

from __future__ import annotations

import hashlib
import threading
import warnings

from irlab.errors import IrlabError
from irlab.runtime.lru import LRUCache
from irlab.runtime.registry import get_global_func
from irlab.relay.expr import bind, const


def bind_params_by_name(func, params):
    """Replace the parameters of ``func`` named in ``params`` by constants."""
    if not params:
        return func
    by_name = {}
    for p in func.params:
        by_name.setdefault(p.name_hint, []).append(p)
    binds = {}
    for name, value in params.items():
        if name not in by_name:
            continue
        if len(by_name[name]) > 1:
            raise IrlabError(f"multiple parameters are named {name!r}")
        binds[by_name[name][0]] = const(value)
    return bind(func, binds)


def create_executor(kind="debug", mod=None, device=None, target="llvm", params=None):
    """An executor for ``mod``: ``"debug"`` is the numpy reference interpreter; ``"graph"``
    compiles ``@main`` with ``relay.build`` and runs it on the graph executor (irlab also runs
    TVM's ``"vm"`` and ``"aot"`` kinds that way: static shapes only)."""
    from irlab.relay.interpreter import create_executor as _create

    if kind in ("graph", "vm", "aot"):
        if mod is None:
            raise IrlabError(f"create_executor({kind!r}) compiles a module: pass mod=")
        return _GraphExecutor(mod, device, target, params)
    return _create(kind, mod, device, target, params)


class _GraphExecutor:
    """TVM's ``create_executor("graph", ...)``: ``evaluate()`` returns ``f(*inputs)``."""

    def __init__(self, mod, device, target, params):
        self.mod, self.device, self.target = mod, device, target
        self.params = dict(params or {})

    def evaluate(self, expr=None, binds=None):
        if expr is not None or binds:
            raise IrlabError('create_executor("graph").evaluate() compiles the module\'s @main; '
                             'it takes no expr / binds (use kind="debug" for those)')
        factory = build(self.mod, target=self.target, params=self.params)
        runner = factory["default"](self.device)
        names = [p.name_hint for p in self.mod["main"].params if p.name_hint not in self.params]

        def run(*args, **kwargs):
            if len(args) > len(names):
                raise IrlabError(f"@main takes {len(names)} inputs, got {len(args)}")
            for name, value in list(zip(names, args)) + list(kwargs.items()):
                runner.set_input(name, value)
            runner.run()
            outputs = [runner.get_output(i) for i in range(runner.get_num_outputs())]
            return outputs[0] if len(outputs) == 1 else outputs

        return run


class GraphExecutorFactoryModule:
    """What ``relay.build`` returns: graph JSON, the compiled library and the params."""

    def __init__(self, ir_mod, target, graph_json, lib, params, mod_name="default",
                 lowered=()):
        self.ir_mod = ir_mod  # the optimized, fused module the graph was made from
        self.target = target
        self.graph_json = graph_json
        self.lib = lib
        self.params = params
        self.libmod_name = mod_name
        self.lowered = list(lowered)  # LoweredFunction per kernel (Relay, TE, TIR)

    def get_graph_json(self) -> str:
        return self.graph_json

    def get_lib(self):
        return self.lib

    def get_params(self) -> dict:
        from irlab.runtime.ndarray import NDArray, array

        return {k: v if isinstance(v, NDArray) else array(v) for k, v in self.params.items()}

    def __getitem__(self, name):
        if name != self.libmod_name:
            raise IrlabError(f"the factory module has {self.libmod_name!r}, not {name!r}")
        return self._create

    def _create(self, device=None):
        # The graph executor lives in a higher layer (contrib): reach it through the registry,
        # as TVM's factory module does.
        create_executor = get_global_func("tvm.graph_executor.create_executor")
        executor = create_executor(self.graph_json, self.lib, device, self.get_params())
        executor.param_names = list(self.params)
        return executor

    def export_library(self, file_name, **kw):
        return self.lib.export_library(file_name, **kw)

    def __iter__(self):
        warnings.warn("legacy graph executor behavior of producing json / lib / params will "
                      "be removed in the next release. Please see documents of "
                      "tvm.contrib.graph_executor.GraphModule for the new recommended usage.",
                      DeprecationWarning, stacklevel=2)
        return iter((self.graph_json, self.lib, self.get_params()))


def build(ir_mod, target=None, target_host=None, executor=None, runtime=None,
          workspace_memory_pools=None, constant_memory_pools=None, params=None,
          mod_name="default"):
    """Compile a Relay module for ``target`` into a ``GraphExecutorFactoryModule``."""
    from irlab.build_module import IncrementalBuild, garbage_collection_paused
    from irlab.ir.module import IRModule
    from irlab.relay.backend.graph_codegen import GraphCodegen
    from irlab.relay.backend.lower_te_pass import lower_te_passes
    from irlab.relay.function import Function
    from irlab.relay.pipeline import optimize
    from irlab.target import as_target

    if isinstance(ir_mod, Function):
        warnings.warn("Please use input parameter mod (tvm.IRModule) instead of deprecated "
                      "parameter mod (tvm.relay.function.Function)", DeprecationWarning,
                      stacklevel=2)
        ir_mod = IRModule.from_expr(ir_mod)
    if not isinstance(ir_mod, IRModule):
        raise IrlabError(f"relay.build takes an IRModule, got {type(ir_mod).__name__}")
    target = as_target(target)
    program = _program_key(ir_mod, target, mod_name)
    weights = None
    if program is not None:
        if any(key[0] == program for key in _built):  # built before: with these params?
            weights = _params_digest(params)
            hit = _built.get((program, weights))
            if hit is not None:
                return hit
        else:  # a new program: its params are hashed meanwhile, to remember the build
            weights = _in_background(_params_digest, params)
    with target, garbage_collection_paused():
        mod, _ = optimize(ir_mod, target, params)
        codegen = GraphCodegen(target, mod_name)
        # each kernel starts compiling (on the other cores) as soon as LowerTE has made it
        kernel_build = IncrementalBuild(target)
        codegen.compiler.on_lowered = lambda lf: kernel_build.add(lf.name, lf.prim_func)
        mod = lower_te_passes(codegen.compiler)(mod)  # step 29, seen by instruments
        graph_json, lowered, consts = codegen.codegen(mod["main"])
        kernels = IRModule({lf.name: lf.prim_func for lf in lowered})
        if lowered:
            lib = kernel_build.build_module(kernels)
        else:
            from irlab.runtime.module import Module

            lib = Module((), str(target))
        for external in codegen.external.modules:  # BYOC: relay.ext.<compiler>'s modules
            lib.import_module(external)
    factory = GraphExecutorFactoryModule(mod, target, graph_json, lib, consts, mod_name,
                                         lowered)
    if program is not None:
        _built[(program, weights if isinstance(weights, str) else weights())] = factory
    return factory


# Built models by what determines the result: (the program, the target and the PassContext;
# the params' bytes). A factory is immutable -- every executor allocates its own storage -- so
# a rebuild returns the same one. Instruments always see a real build.
_built = LRUCache(16)


def _tuning_database_in_scope() -> bool:
    """Whether a MetaSchedule database is in scope (asked through the registry: meta_schedule
    sits above relay)."""
    from irlab.runtime.registry import get_global_func

    query = get_global_func("relay.backend.meta_schedule.database_in_scope", allow_missing=True)
    return bool(query is not None and query())


def _program_key(ir_mod, target, mod_name):
    """A digest of what decides the build but the params' bytes (the program, the target, the
    PassContext), or None when the build must not be remembered."""
    from irlab.ir.structural import structural_hash
    from irlab.transform import PassContext

    ctx = PassContext.current()
    text = str(ir_mod)
    if _tuning_database_in_scope():
        return None  # the records decide the kernels: a build under a database is not cached
    if ctx.instruments or ctx.config.get("tir.add_lower_pass") or "Compiler=" in text:
        # instruments must see the build; user passes and external codegens are user code
        # (not hashable, and may change between builds)
        return None
    h = hashlib.sha256()
    for part in (str(target), mod_name, str(ctx.opt_level), repr(sorted(ctx.disabled_pass)),
                 repr(sorted(ctx.required_pass)),
                 repr(sorted((k, repr(v)) for k, v in ctx.config.items())),
                 # the text shows the program; the structural hash covers constants' bytes
                 str(structural_hash(ir_mod)), text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _params_digest(params) -> str:
    """A digest of the params' names, dtypes, shapes and bytes."""
    import numpy as np

    h = hashlib.sha256()
    for name in sorted(params or {}):
        # the bytes are hashed where they are (an NDArray's numpy() and tobytes() would each
        # copy them: ResNet-18's 47 MB of weights, twice)
        array = np.ascontiguousarray(np.asarray(params[name]))
        h.update(name.encode() + str(array.dtype).encode() + str(array.shape).encode())
        h.update(array.reshape(-1).view(np.uint8))
    return h.hexdigest()


def _in_background(fn, *args):
    """``fn(*args)`` started in a thread; returns a function waiting for its result. For the
    params' digest of a new program: hashlib lets go of the GIL while it hashes (ResNet-18's
    45 MB take ~40 ms with SHA instructions, several times that without), and the build's
    other cores idle until LLVM gets the first kernel anyway."""
    out = {}

    def run():
        try:
            out["value"] = fn(*args)
        except BaseException as err:  # noqa: BLE001 - re-raised by the caller of result
            out["error"] = err

    thread = threading.Thread(target=run, name="irlab-params-digest", daemon=True)
    thread.start()

    def result():
        thread.join()
        if "error" in out:
            raise out["error"]
        return out["value"]

    return result
