"""``RunPanel``: run the built module inline and check it against the Relay interpreter.

The graph executor runs on random inputs (drawn from ``seed``) or on the user's arrays; the
reference interpreter (``relay.create_executor("debug")``) runs the same program on the same
inputs; each output shows its max abs / rel error (norm-wise, as the pass stepper's numerics)
and pass/fail at ``tol``. The total latency is ``benchmark()``'s mean; the chart shows the time
per kernel node from ``profile()``, slowest first.

Kernels an external compiler made (BYOC: ``relay.ext.dnnl`` ...) are timed like the others;
their bars are coloured by compiler and tagged ``[dnnl]``, and ``compiler_times`` sums the
time per compiler (native kernels under ``"irlab"``).

Python: ``run(inputs=None, seed=None)``, ``results`` (dict), ``node_times`` (node -> seconds,
slowest first), ``kernel_times`` (kernel function -> seconds, summed over its nodes),
``compiler_times`` (compiler -> seconds).
"""

from __future__ import annotations

import html

import anywidget
import numpy as np
import traitlets as t

from irlab.viz.dot import compiler_color
from irlab.widgets.assets import css, widget_module
from irlab.widgets.lowering_data import as_factory, external_functions
from irlab.widgets.picture import StaticPicture


def _errors(expected: np.ndarray, got: np.ndarray):
    if expected.shape != got.shape:
        return float("inf"), float("inf")
    diff = np.abs(expected.astype(np.float64) - got.astype(np.float64))
    if not diff.size:
        return 0.0, 0.0
    worst = float(np.nanmax(diff))
    return worst, worst / max(float(np.nanmax(np.abs(expected))), 1e-12)


class RunPanel(StaticPicture, anywidget.AnyWidget):
    """Build (if needed), run and time ``factory_or_mod``; compare with the interpreter."""

    _esm = widget_module("run_panel.js", "renderRunPanel")
    _css = css()

    results = t.Dict().tag(sync=True)
    node_times = t.Dict().tag(sync=True)  # node name -> seconds, slowest first
    kernel_of = t.Dict().tag(sync=True)  # node name -> kernel function name
    compiler_of = t.Dict().tag(sync=True)  # node name -> external compiler (BYOC nodes only)
    compiler_colors = t.Dict().tag(sync=True)  # external compiler -> its bars' colour
    seed = t.Int(0).tag(sync=True)
    tol = t.Float(1e-4).tag(sync=True)
    status = t.Unicode("").tag(sync=True)
    # Not synced: the arrays of the last run.
    inputs = t.Dict()
    outputs = t.List()
    reference = t.List()

    def __init__(self, factory_or_mod, params=None, inputs=None, *, target="llvm", seed=0,
                 tol=1e-4, number=5, repeat=3, run=True, **kwargs):
        super().__init__(**kwargs)
        if isinstance(factory_or_mod, tuple) and len(factory_or_mod) == 2 and params is None:
            factory_or_mod, params = factory_or_mod
        is_factory = hasattr(factory_or_mod, "lowered") and hasattr(factory_or_mod, "get_lib")
        self.factory = as_factory(factory_or_mod, params, target)
        # The interpreter runs the program as written when we have it, else the built one.
        self._ref_mod = self.factory.ir_mod if is_factory else factory_or_mod
        self._ref_params = None if is_factory else params
        self.number, self.repeat = int(number), int(repeat)
        self._user_inputs = inputs
        from irlab.contrib.graph_executor import GraphModule

        self.module = GraphModule(self.factory["default"]())
        graph = self.module.module.graph
        self.kernel_of = {n["name"]: n["attrs"]["func_name"] for n in graph["nodes"]
                          if n["op"] == "tvm_op" and n["attrs"].get("func_name") != "__nop"}
        external = {symbol: compiler for symbol, (compiler, _) in
                    external_functions(self.factory).items()}
        self.compiler_of = {node: external[kernel] for node, kernel in self.kernel_of.items()
                            if kernel in external}
        self.compiler_colors = {c: compiler_color(c)[1] for c in set(self.compiler_of.values())}
        with self.hold_trait_notifications():
            self.seed, self.tol = int(seed), float(tol)
        self.on_msg(self._on_msg)
        if run:
            self.run()

    # -- inputs -----------------------------------------------------------------------------------
    def input_info(self) -> dict:
        """``{name: (shape, dtype)}`` of the inputs that are not params."""
        shapes, dtypes = self.module.get_input_info()
        return {name: (tuple(shapes[name]), dtypes[name]) for name in shapes}

    def random_inputs(self, seed=None) -> dict:
        rng = np.random.default_rng(self.seed if seed is None else seed)
        out = {}
        for name, (shape, dtype) in self.input_info().items():
            if np.dtype(dtype).kind == "f":
                out[name] = rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
            elif np.dtype(dtype).kind == "b":
                out[name] = rng.integers(0, 2, size=shape).astype(dtype)
            else:
                out[name] = rng.integers(0, 8, size=shape).astype(dtype)
        return out

    def _resolve_inputs(self, inputs):
        info = self.input_info()
        if inputs is None:
            return self.random_inputs(), "random (seed %d)" % self.seed
        if isinstance(inputs, np.ndarray) or hasattr(inputs, "numpy"):
            inputs = [inputs]
        if isinstance(inputs, (list, tuple)):
            if len(inputs) != len(info):
                raise ValueError(f"{len(inputs)} arrays for {len(info)} inputs "
                                 f"({', '.join(info)})")
            inputs = dict(zip(info, inputs))
        out = {}
        for name, (shape, dtype) in info.items():
            if name not in inputs:
                raise ValueError(f"no array for input {name!r} {shape} {dtype}")
            value = inputs[name]
            value = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
            out[name] = value.astype(dtype, copy=False)
        return out, "user"

    # -- running ----------------------------------------------------------------------------------
    def run(self, inputs=None, seed=None) -> dict:
        """Run the built module and the interpreter on ``inputs`` (dict by name, list in input
        order, one array; default: the arrays given at construction, else random from
        ``seed``), time it, and return ``results``."""
        from irlab.testing.check import run_module

        if seed is not None:
            self.seed = int(seed)
        if inputs is None:
            inputs = self._user_inputs
        values, source = self._resolve_inputs(inputs)
        self.status = "running…"
        m = self.module
        m.set_input(**values)
        m.run()
        outputs = [m.get_output(i).numpy().copy() for i in range(m.get_num_outputs())]
        problem = ""
        try:
            reference = run_module(self._ref_mod, values, self._ref_params)
        except Exception as err:  # noqa: BLE001 - still show the run and the times
            reference, problem = [], f"interpreter failed: {type(err).__name__}: {err}"
        rows = []
        for i, got in enumerate(outputs):
            row = {"index": i, "shape": list(got.shape), "dtype": str(got.dtype),
                   "max_abs": None, "max_rel": None, "ok": None}
            if i < len(reference):
                ref = reference[i]
                abs_err, rel_err = _errors(ref, got)
                row.update(max_abs=abs_err, max_rel=rel_err,
                           ok=bool(ref.shape == got.shape and np.allclose(
                               got, ref, rtol=self.tol, atol=self.tol, equal_nan=True)))
            rows.append(row)
        if reference and len(reference) != len(outputs):
            problem = (f"the interpreter returned {len(reference)} outputs, the module "
                       f"{len(outputs)}")
        bench = m.benchmark(number=self.number, repeat=self.repeat)
        times = m.profile(number=self.number, repeat=self.repeat)
        ok = bool(rows) and not problem and all(r["ok"] for r in rows)
        self.inputs, self.outputs, self.reference = values, outputs, reference
        results = {
            "ok": ok,
            "tol": self.tol,
            "inputs": [{"name": k, "shape": list(v.shape), "dtype": str(v.dtype)}
                       for k, v in values.items()],
            "source": source,
            "outputs": rows,
            "latency_ms": float(bench.mean) * 1e3,
            "latency_std_ms": float(getattr(bench, "std", 0.0)) * 1e3,
            "problem": problem,
        }
        with self.hold_trait_notifications():
            self.node_times = {k: float(v) for k, v in
                               sorted(times.items(), key=lambda kv: -kv[1])}
            self.results = results
            self.status = ("all outputs match the interpreter" if ok else
                           (problem or "outputs differ from the interpreter")) + \
                f" · {results['latency_ms']:.3f} ms"
        return results

    @property
    def kernel_times(self) -> dict:
        """Seconds per kernel function (its nodes summed), slowest first."""
        out = {}
        for node, seconds in self.node_times.items():
            kernel = self.kernel_of.get(node, node)
            out[kernel] = out.get(kernel, 0.0) + seconds
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    @property
    def compiler_times(self) -> dict:
        """Seconds per compiler: each external compiler's kernels, and irlab's own
        (``"irlab"``), slowest first."""
        out = {}
        for node, seconds in self.node_times.items():
            compiler = self.compiler_of.get(node, "irlab")
            out[compiler] = out.get(compiler, 0.0) + seconds
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def _label(self, node: str) -> str:
        """A node's name, tagged with its external compiler (``[dnnl] name``)."""
        compiler = self.compiler_of.get(node)
        return f"[{compiler}] {node}" if compiler else node

    def _on_msg(self, widget, content, buffers):
        action = content.get("action") if isinstance(content, dict) else None
        try:
            if action == "run":
                self.run(seed=content.get("seed"))
            elif action == "random":
                self._user_inputs = None
                self.run(seed=content.get("seed"))
        except Exception as err:  # noqa: BLE001 - shown in the widget
            self.status = f"{action} failed: {type(err).__name__}: {err}"
        self.send({"event": "done", "action": action})

    # -- text fallback ----------------------------------------------------------------------------
    def chart_svg(self, width=520) -> str:
        """The time per node as an SVG bar chart (labels escaped)."""
        items = list(self.node_times.items())
        if not items:
            return ""
        top = max(v for _, v in items) or 1.0
        row, label_w = 16, 300
        bars = []
        for i, (name, seconds) in enumerate(items):
            y = i * row
            w = max(1.0, (width - label_w - 70) * seconds / top)
            compiler = self.compiler_of.get(name)
            fill = compiler_color(compiler)[1] if compiler else "#93c5fd"
            label = self._label(name)
            bars.append(
                f'<text x="{label_w - 4}" y="{y + 11}" text-anchor="end">'
                f"{html.escape(label[-48:])}</text>"
                f'<rect class="bar" x="{label_w}" y="{y + 2}" width="{w:.1f}" height="{row - 4}"'
                f' fill="{fill}"><title>{html.escape(label)}</title></rect>'
                f'<text x="{label_w + w + 4:.1f}" y="{y + 11}">{seconds * 1e3:.3f} ms</text>')
        return (f'<svg width="{width}" '
                f'height="{len(items) * row + 4}" style="font:10px sans-serif">'
                + "".join(bars) + "</svg>")

    def to_html(self) -> str:
        r = self.results
        if not r:
            return "<div><b>RunPanel</b>: not run yet</div>"
        def num(v):
            return "" if v is None else f"{v:.3g}"

        rows = "".join(
            f"<tr><td>{o['index']}</td><td>{html.escape(str(tuple(o['shape'])))}</td>"
            f"<td>{html.escape(o['dtype'])}</td><td>{num(o['max_abs'])}</td>"
            f"<td>{num(o['max_rel'])}</td>"
            f"<td>{'-' if o['ok'] is None else ('pass' if o['ok'] else 'FAIL')}</td></tr>"
            for o in r["outputs"])
        split = ""
        if self.compiler_of:
            split = "<p>" + html.escape(", ".join(
                f"{c}: {v * 1e3:.3f} ms" for c, v in self.compiler_times.items())) + "</p>"
        return (f"<div><p><b>RunPanel</b>: {html.escape(self.status)}</p>"
                "<table><tr><th>output</th><th>shape</th><th>dtype</th><th>max abs</th>"
                f"<th>max rel</th><th>@{r['tol']:g}</th></tr>{rows}</table>"
                f"{split}{self.chart_svg()}</div>")

    def __str__(self):
        r = self.results
        if not r:
            return "RunPanel(not run)"
        lines = [f"RunPanel: {self.status}"]
        for o in r["outputs"]:
            lines.append(f"  output {o['index']} {tuple(o['shape'])} {o['dtype']}: "
                         f"max abs {o['max_abs']}, max rel {o['max_rel']}, "
                         f"{'pass' if o['ok'] else 'FAIL'}")
        for name, seconds in self.node_times.items():
            lines.append(f"  {seconds * 1e3:9.3f} ms  {self._label(name)}")
        if self.compiler_of:
            lines.append("  per compiler: " + ", ".join(
                f"{c} {v * 1e3:.3f} ms" for c, v in self.compiler_times.items()))
        return "\n".join(lines)
