"""The graph executor: runs the graph JSON of ``relay.build`` over its compiled kernels
(TVM's ``tvm.contrib.graph_executor``).

Storage is allocated once per storage id of the memory plan (64-byte aligned); every entry of
the graph is a view into its storage. ``run()`` calls each ``tvm_op`` node's kernel on the
views of its inputs and outputs, in order; ``__nop`` nodes cost nothing (the output already
shares the input's storage). ``set_input`` copies into the input's storage; ``get_output``
returns a view of the output (the next ``run`` overwrites it, as in TVM).

**Threads.** Inputs, outputs and intermediate storage are *per thread*: the first call from a
thread allocates that thread's own storage (the params are copied in), and ``set_input`` /
``run`` / ``get_output`` act on the calling thread's copy. So several threads may share one
module and run at once, each getting the outputs of its own inputs (TVM's executor has one
storage: threads interleaving ``set_input`` and ``run`` there get each other's results). A
thread sees only what it set: ``run()`` raises naming the inputs this thread has not set, and
``get_output`` raises before this thread's first ``run()``, so handing a module to another
thread halfway (inputs set here, ``run`` there) fails loudly instead of computing on
uninitialised memory. One GraphModule per thread works as well and costs the same memory.
"""

from __future__ import annotations

import functools
import json
import threading
import time

import numpy as np

from irlab.errors import IrlabError
from irlab.runtime.dtype import to_numpy_dtype
from irlab.runtime.ndarray import NDArray, cpu, empty
from irlab.runtime.registry import register_func


class _Storage:
    """One thread's storage: a view per graph entry, the kernel calls bound to those views
    (``steps``: node id, callable of no arguments), the inputs not set yet and whether
    ``run()`` has been called."""

    def __init__(self, executor):
        shapes, dtypes, sids = executor.entry_layout
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
        self.steps = [(nid, _bound_call(func, [self.entries[e] for e in refs]))
                      for nid, func, refs in executor.kernel_calls]
        self.unset = set(executor.input_nodes)
        self.ran = False


def _bound_call(func, args):
    """``func`` called on ``args`` as a callable of no arguments: the kernel bound to them
    (``CompiledFunction.bind`` checks them once, here) when it can be, else a plain call.

    The views never change their shape, dtype or address (``set_input`` copies into them),
    so a check that passed once holds for every ``run``; binding takes the argument checks
    (~2 us per array with CPython) out of the run loop, which a small model feels (the MLP
    b32 makes 4 calls of 3-30 us each)."""
    bind = getattr(func, "bind", None)
    bound = bind(args) if bind is not None else None
    return bound if bound is not None else functools.partial(func, *args)


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
        self.entry_layout = (attrs["shape"][1], attrs["dltype"][1], attrs["storage_id"][1])
        self.input_nodes = {n["name"]: i for i, n in enumerate(self.nodes)
                            if n["op"] == "null"}
        self.heads = g["heads"]
        self.kernel_calls = []  # (node id, kernel, entry indexes of its arguments)
        for nid, node in enumerate(self.nodes):
            if node["op"] != "tvm_op" or node["attrs"]["func_name"] == "__nop":
                continue
            refs = [self.row_ptr[e[0]] + e[1] for e in node["inputs"]]
            refs += [self.row_ptr[nid] + k for k in range(self.row_ptr[nid + 1] -
                                                           self.row_ptr[nid])]
            func = lib.get_function(node["attrs"]["func_name"], query_imports=True)
            self.kernel_calls.append((nid, func, refs))
        # name -> the creating thread's param entry, copied into each other thread's storage
        # (a view, not a copy: the memory plan never lets a kernel write a param's storage)
        self._params: dict = {}
        self._threads = threading.local()
        if params:
            self.set_input(**params)
            self._params = {name: self._state().entries[self.row_ptr[self._input_node(name)]]
                            for name in params}

    def _state(self) -> _Storage:
        """The calling thread's storage (made, params copied in, on its first use)."""
        state = getattr(self._threads, "state", None)
        if state is None:
            state = self._threads.state = _Storage(self)
            for name, value in self._params.items():
                self._copy_in(state, self._input_node(name), value)
        return state

    @property
    def entries(self) -> list:
        """The calling thread's view of every graph entry (``node_row_ptr`` order)."""
        return self._state().entries

    @property
    def storage(self) -> dict:
        """The calling thread's storage: one aligned byte NDArray per storage id."""
        return self._state().storage

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
        if key is None and value is not None:
            raise IrlabError("set_input: a value without a key: name the input "
                             "(set_input('data', value)) or give its index")
        if key is not None and value is None:
            raise IrlabError(f"set_input: no value for input {key!r}")
        state = self._state()
        if key is not None:
            self._copy_in(state, self._input_node(key), value)
        for name, v in params.items():
            if v is None:
                raise IrlabError(f"set_input: no value for input {name!r}")
            self._copy_in(state, self._input_node(name), v)

    def _copy_in(self, state, nid, value):
        target = state.entries[self.row_ptr[nid]]
        src = value.numpy() if isinstance(value, NDArray) else np.asarray(value)
        if src.shape != target.shape:
            raise IrlabError(f"input {self.nodes[nid]['name']}: expected shape "
                             f"{target.shape}, got {src.shape}")
        if src.dtype != target.dtype:
            raise IrlabError(f"input {self.nodes[nid]['name']}: expected dtype "
                             f"{target.dtype}, got {src.dtype}")
        target[...] = src
        state.unset.discard(self.nodes[nid]["name"])

    def get_input(self, index):
        return NDArray(self.entries[self.row_ptr[self._input_node(index)]])

    def get_num_inputs(self) -> int:
        return len(self.graph["arg_nodes"])

    # -- running --------------------------------------------------------------------------
    def _ready(self) -> _Storage:
        """The calling thread's storage, checked to hold every input."""
        state = self._state()
        if state.unset:
            missing = ", ".join(sorted(state.unset))
            raise IrlabError(f"run(): input(s) not set: {missing}; call set_input first "
                             f"(inputs are per thread: set them in the thread that runs)")
        return state

    def run(self):
        state = self._ready()
        for _, call in state.steps:
            call()
        state.ran = True

    def run_individual(self, number=10, repeat=1):
        """Seconds per kernel node (the mean over ``number`` calls, best of ``repeat``)."""
        state = self._ready()
        times = {}
        for nid, call in state.steps:
            best = float("inf")
            for _ in range(repeat):
                start = time.perf_counter()
                for _ in range(number):
                    call()
                best = min(best, (time.perf_counter() - start) / number)
            times[self.nodes[nid]["name"]] = times.get(self.nodes[nid]["name"], 0.0) + best
        state.ran = True
        return times

    def get_output(self, index, out=None):
        """Output ``index`` of this thread's last ``run()``: a view (overwritten by the next
        run), or copied into ``out`` (an NDArray or a writeable numpy array)."""
        if not 0 <= index < len(self.heads):
            raise IrlabError(f"output index {index} out of range (0..{len(self.heads) - 1})")
        state = self._state()
        if not state.ran:
            raise IrlabError("get_output: run() has not been called yet (in this thread: "
                             "outputs are per thread)")
        view = state.entries[self.row_ptr[self.heads[index][0]] + self.heads[index][1]]
        if out is None:
            return NDArray(view)
        array = out._data if isinstance(out, NDArray) else out
        if not isinstance(array, np.ndarray):
            raise IrlabError(f"get_output: out must be an NDArray or a numpy array, got "
                             f"{type(out).__name__}")
        if not array.flags.writeable:
            raise IrlabError(f"get_output({index}, out): out is read-only")
        if isinstance(out, NDArray):
            return out.copyfrom(view)
        if array.shape != view.shape or array.dtype != view.dtype:
            raise IrlabError(f"get_output({index}, out): out is {array.dtype}{list(array.shape)}"
                             f", the output is {view.dtype}{list(view.shape)}")
        np.copyto(array, view)
        return out

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
