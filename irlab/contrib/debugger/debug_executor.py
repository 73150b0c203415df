"""The debug executor: the graph executor that times every node (TVM's
``tvm.contrib.debugger.debug_executor``).

``create(graph_json, lib, dev)`` returns a ``GraphModuleDebug``; ``run()`` runs the graph once
per node-timing pass and keeps each kernel node's time; ``debug_datum`` / ``profile()`` give
them (slowest first) and ``str()`` of the report prints TVM-style columns.
"""

from __future__ import annotations

from irlab.contrib.graph_executor import GraphExecutor, GraphModule


class GraphModuleDebug(GraphModule):
    """A GraphModule whose ``run`` records the time of every kernel node."""

    def __init__(self, module, number=1, repeat=1):
        super().__init__(module)
        self.number = number
        self.repeat = repeat
        self.node_times: dict = {}

    def run(self, **inputs):
        if inputs:
            self.module.set_input(**inputs)
        self.node_times = self.module.run_individual(self.number, self.repeat)

    def profile(self, number=None, repeat=None):
        if number is not None or repeat is not None or not self.node_times:
            self.node_times = self.module.run_individual(number or self.number,
                                                         repeat or self.repeat)
        return dict(sorted(self.node_times.items(), key=lambda kv: -kv[1]))

    def report(self) -> str:
        times = self.profile() if not self.node_times else dict(
            sorted(self.node_times.items(), key=lambda kv: -kv[1]))
        total = sum(times.values()) or 1.0
        width = max([len(n) for n in times] + [4])
        lines = [f"{'Node Name':<{width}}  {'Time(us)':>10}  {'Time(%)':>8}",
                 f"{'-' * width}  {'-' * 10}  {'-' * 8}"]
        for name, t in times.items():
            lines.append(f"{name:<{width}}  {t * 1e6:>10.3f}  {100 * t / total:>8.2f}")
        lines.append(f"{'Total':<{width}}  {total * 1e6:>10.3f}  {100.0:>8.2f}")
        return "\n".join(lines)


def create(graph_json_str, libmod, device=None, dump_root=None, number=1, repeat=1):
    """``debug_executor.create(graph_json, lib, dev)`` -> GraphModuleDebug."""
    return GraphModuleDebug(GraphExecutor(graph_json_str, libmod, device), number, repeat)


__all__ = ["GraphModuleDebug", "create"]
