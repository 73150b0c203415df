"""The graph executor: runs the graph JSON of ``relay.build`` over its compiled kernels
(TVM's ``tvm.contrib.graph_executor``).

Storage is allocated once per storage id of the memory plan (64-byte aligned); every entry of
the graph is a view into its storage. ``run()`` calls each ``tvm_op`` node's kernel on the
views of its inputs and outputs, in order; ``__nop`` nodes cost nothing (the output already
shares the input's storage). ``set_input`` copies into the input's storage; ``get_output``
returns a view of the output (the next ``run`` overwrites it, as in TVM).
"""

from __future__ import annotations

import json
import time

import numpy as np

from irlab.errors import IrlabError
from irlab.ir.dtype import to_numpy_dtype
from irlab.runtime.ndarray import NDArray, cpu, empty
from irlab.runtime.registry import register_func


class GraphExecutor:
    """The executor object ``lib["default"](dev)`` returns (TVM's runtime module)."""

    def __init__(self, graph_json, lib, device=None, params=None):
        self.graph = json.loads(graph_json) if isinstance(graph_json, str) else graph_json
        self.lib = lib
        self.device = device or cpu(0)
        g = self.graph
        self.nodes = g["nodes"]
        self.row_ptr = g["node_row_ptr"]
        attrs = g["attrs"]
        shapes = attrs["shape"][1]
        dtypes = attrs["dltype"][1]
        sids = attrs["storage_id"][1]
        need: dict[int, int] = {}
        for sid, shape, dtype in zip(sids, shapes, dtypes):
            nbytes = int(np.prod(shape, dtype=np.int64)) * to_numpy_dtype(dtype).itemsize
            need[sid] = max(need.get(sid, 0), nbytes)
        self.storage = {sid: empty((max(n, 1),), "uint8") for sid, n in need.items()}
        self.entries = []
        for sid, shape, dtype in zip(sids, shapes, dtypes):
            np_dtype = to_numpy_dtype(dtype)
            count = int(np.prod(shape, dtype=np.int64))
            raw = self.storage[sid]._data[:count * np_dtype.itemsize]
            self.entries.append(raw.view(np_dtype).reshape(shape))
        self.input_nodes = {n["name"]: i for i, n in enumerate(self.nodes)
                            if n["op"] == "null"}
        self.heads = g["heads"]
        self._steps = []
        for nid, node in enumerate(self.nodes):
            if node["op"] != "tvm_op" or node["attrs"]["func_name"] == "__nop":
                continue
            args = [self.entry(e) for e in node["inputs"]]
            args += [self.entries[self.row_ptr[nid] + k]
                     for k in range(self.row_ptr[nid + 1] - self.row_ptr[nid])]
            func = lib.get_function(node["attrs"]["func_name"], query_imports=True)
            self._steps.append((nid, func, args))
        if params:
            self.set_input(**params)

    def entry(self, ref):
        nid, index = ref[0], ref[1]
        return self.entries[self.row_ptr[nid] + index]

    # -- inputs ---------------------------------------------------------------------------
    def get_input_index(self, name) -> int:
        names = [n["name"] for n in self.nodes if n["op"] == "null"]
        if name not in names:
            raise IrlabError(f"graph has no input {name!r}; inputs: {', '.join(names)}")
        return names.index(name)

    def _input_node(self, key):
        if isinstance(key, str):
            if key not in self.input_nodes:
                self.get_input_index(key)  # raises with the list
            return self.input_nodes[key]
        args = self.graph["arg_nodes"]
        if not 0 <= int(key) < len(args):
            raise IrlabError(f"input index {key} out of range (0..{len(args) - 1})")
        return args[int(key)]

    def set_input(self, key=None, value=None, **params):
        if key is not None:
            self._copy_in(self._input_node(key), value)
        for name, v in params.items():
            self._copy_in(self._input_node(name), v)

    def _copy_in(self, nid, value):
        target = self.entries[self.row_ptr[nid]]
        src = value.numpy() if isinstance(value, NDArray) else np.asarray(value)
        if src.shape != target.shape:
            raise IrlabError(f"input {self.nodes[nid]['name']}: expected shape "
                             f"{target.shape}, got {src.shape}")
        if src.dtype != target.dtype:
            raise IrlabError(f"input {self.nodes[nid]['name']}: expected dtype "
                             f"{target.dtype}, got {src.dtype}")
        target[...] = src

    def get_input(self, index):
        return NDArray(self.entries[self.row_ptr[self._input_node(index)]])

    def get_num_inputs(self) -> int:
        return len(self.graph["arg_nodes"])

    # -- running --------------------------------------------------------------------------
    def run(self):
        for _, func, args in self._steps:
            func(*args)

    def run_individual(self, number=10, repeat=1):
        """Seconds per kernel node (the mean over ``number`` calls, best of ``repeat``)."""
        times = {}
        for nid, func, args in self._steps:
            best = float("inf")
            for _ in range(repeat):
                start = time.perf_counter()
                for _ in range(number):
                    func(*args)
                best = min(best, (time.perf_counter() - start) / number)
            times[self.nodes[nid]["name"]] = times.get(self.nodes[nid]["name"], 0.0) + best
        return times

    def get_output(self, index, out=None):
        if not 0 <= index < len(self.heads):
            raise IrlabError(f"output index {index} out of range (0..{len(self.heads) - 1})")
        view = self.entry(self.heads[index])
        if out is not None:
            out.copyfrom(view)
            return out
        return NDArray(view)

    def get_num_outputs(self) -> int:
        return len(self.heads)


class GraphModule:
    """TVM's ``graph_executor.GraphModule``: wraps ``lib["default"](dev)``."""

    def __init__(self, module):
        if not isinstance(module, GraphExecutor):
            raise IrlabError(f"GraphModule wraps what lib['default'](dev) returns, got "
                             f"{type(module).__name__}")
        self.module = module

    def set_input(self, key=None, value=None, **params):
        self.module.set_input(key, value, **params)

    def run(self, **inputs):
        if inputs:
            self.module.set_input(**inputs)
        self.module.run()

    def get_output(self, index, out=None):
        return self.module.get_output(index, out)

    def get_input(self, index):
        return self.module.get_input(index)

    def get_input_index(self, name):
        return self.module.get_input_index(name)

    def get_num_outputs(self):
        return self.module.get_num_outputs()

    def get_num_inputs(self):
        return self.module.get_num_inputs()

    def get_input_info(self):
        """(shape dict, dtype dict) of the inputs that are not params."""
        g = self.module.graph
        shapes, dtypes = {}, {}
        params = set(getattr(self.module, "param_names", ()))
        for nid in g["arg_nodes"]:
            name = g["nodes"][nid]["name"]
            if name in params:
                continue
            e = g["node_row_ptr"][nid]
            shapes[name] = tuple(g["attrs"]["shape"][1][e])
            dtypes[name] = g["attrs"]["dltype"][1][e]
        return shapes, dtypes

    def __getitem__(self, key):
        return getattr(self, key)

    def benchmark(self, device=None, func_name="run", repeat=5, number=5, min_repeat_ms=None,
                  limit_zero_time_iterations=100, end_to_end=False, cooldown_interval_ms=0,
                  repeats_to_cooldown=1, **kwargs):
        from irlab.runtime.benchmark import time_evaluator

        if func_name != "run":
            raise IrlabError("benchmark times 'run' only")
        if kwargs:
            self.module.set_input(**kwargs)
        evaluator = time_evaluator(self.module.run, number=number, repeat=repeat,
                                   min_repeat_ms=min_repeat_ms or 0,
                                   limit_zero_time_iterations=limit_zero_time_iterations,
                                   cooldown_interval_ms=cooldown_interval_ms,
                                   repeats_to_cooldown=repeats_to_cooldown)
        return evaluator()

    def profile(self, number=10, repeat=3):
        """Seconds per kernel (TVM's debug executor), slowest first."""
        times = self.module.run_individual(number, repeat)
        return dict(sorted(times.items(), key=lambda kv: -kv[1]))


@register_func("tvm.graph_executor.create_executor")
def _create_executor(graph_json_str, libmod, device, params):
    """A GraphExecutor with ``params`` bound: what ``relay.build``'s factory module hands out."""
    return GraphExecutor(graph_json_str, libmod, device, params)


def create(graph_json_str, libmod, device=None):
    """``graph_executor.create(graph_json, lib, dev)`` -> GraphModule."""
    return GraphModule(GraphExecutor(graph_json_str, libmod, device))


__all__ = ["GraphExecutor", "GraphModule", "create"]
