"""The runtime: NDArray and devices, PackedFunc and the global registry, timing, and the
compiled ``Module`` (``load_module`` reads what ``export_library`` wrote)."""

from irlab.runtime.ndarray import NDArray, Device, array, empty, cpu, device, from_dlpack
from irlab.runtime.packed_func import PackedFunc
from irlab.runtime.registry import (register_func, get_global_func, list_global_func_names,
                                    remove_global_func)
from irlab.runtime.benchmark import BenchmarkResult, time_evaluator
from irlab.runtime.module import Module, load_module
from irlab.runtime.container import ShapeTuple, String
from irlab.runtime import container
from irlab.runtime.registry import register_func_provider as _provider

# the Relax VM loads on first use: load_module finds its archive loader through the registry
_provider("runtime.module.load_archive.relax.vm", "irlab.runtime.relax_vm")

__all__ = ["NDArray", "Device", "array", "empty", "cpu", "device", "from_dlpack", "PackedFunc",
           "register_func", "get_global_func", "list_global_func_names", "remove_global_func",
           "BenchmarkResult", "time_evaluator", "Module", "load_module", "ShapeTuple", "String", "container"]
