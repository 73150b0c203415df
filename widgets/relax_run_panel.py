"""``RelaxRunPanel``: run a Relax module's VM inline, for shapes the student picks.

One build (``RelaxBuild``) serves every shape: each symbolic dimension of the entry
function's parameters (``n`` of ``R.Tensor(("n", 784))``) gets a number box, a parameter
whose shape is unknown (``R.Tensor(ndim=2)``) a text box for its shape (dims may name the
symbolic variables: ``k, 8``). "Run" draws random inputs of those shapes, runs the VM, times
it, and checks the outputs against the reference evaluator (``relax.testing.evaluate`` on the
input module): max abs error and pass/fail at ``tol``.

Python: ``run(**dims)`` (e.g. ``run(n=7)``) returns the outputs as numpy arrays; ``results``
holds the last run's shapes, errors and time; ``to_html()`` is the static picture.
"""

from __future__ import annotations

import html
import time

import ipywidgets as widgets
import numpy as np

from irlab.widgets.picture import StaticPicture, esc, titled

from irlab.relax.testing.random_inputs import DEFAULT_DIM


def entry_function(mod) -> str:
    """``main`` if the module has it, else its first Relax function no other one calls."""
    names = [gv.name_hint for gv, f in mod.functions.items()
             if type(f).__module__.startswith("irlab.relax")]
    if "main" in names:
        return "main"
    if not names:
        from irlab.errors import IrlabError

        raise IrlabError("the module has no Relax function to run")
    return sorted(names)[0]


def _parse_shape(text, env_by_name) -> tuple:
    """``"k, 8"`` -> (value of k, 8)."""
    from irlab.errors import IrlabError

    dims = []
    for part in (p.strip() for p in str(text).split(",") if p.strip()):
        if part.lstrip("-").isdigit():
            dims.append(int(part))
        elif part in env_by_name:
            dims.append(int(env_by_name[part]))
        else:
            raise IrlabError(f"shape {text!r}: {part!r} is neither a number nor a symbolic "
                             f"dimension ({', '.join(env_by_name) or 'none'})")
    return tuple(dims)


class RelaxRunPanel(StaticPicture, widgets.VBox):
    """Run ``build`` (a ``RelaxBuild``) for chosen shapes; see the module docstring."""

    def __init__(self, build, func_name=None, *, seed=0, tol=1e-4, run=False, **kwargs):
        from irlab.relax.testing.random_inputs import symbolic_dims

        self.build = build
        self.func_name = func_name or entry_function(build.input)
        self.seed, self.tol = int(seed), float(tol)
        self.results: dict = {}
        self.outputs: list = []
        func = build.input[self.func_name]
        self._params = list(func.params)
        self._vars = symbolic_dims(func)
        self.dim_boxes = {v.name_hint: widgets.BoundedIntText(
            value=DEFAULT_DIM, min=0, max=1 << 20, description=v.name_hint,
            layout=widgets.Layout(width="150px")) for v in self._vars}
        self.shape_boxes = {
            p.name_hint: widgets.Text(value=", ".join([str(DEFAULT_DIM)] * max(
                getattr(p.struct_info, "ndim", 1), 0)), description=f"{p.name_hint} shape")
            for p in self._params if getattr(p.struct_info, "dims", ()) is None}
        self.button = widgets.Button(description="Run", button_style="primary")
        self.button.on_click(lambda _: self._run_clicked())
        self.output_html = widgets.HTML("<i>pick the dimensions and press Run</i>")
        head = widgets.HTML(f"<b>Run @{esc(self.func_name)} on the VM</b> "
                            f"(one build, any shape)")
        boxes = [*self.dim_boxes.values(), *self.shape_boxes.values()]
        super().__init__(children=[head, widgets.HBox(boxes), self.button, self.output_html],
                         **kwargs)
        self.add_class("irlab-relax-run")
        if run:
            self._run_clicked()

    # -- running --------------------------------------------------------------------------------
    def inputs(self, **dims) -> list:
        """Random inputs for the dims given (others from the boxes), as numpy arrays."""
        from irlab.relax.testing.random_inputs import parameter_shape, random_array

        values = {name: box.value for name, box in self.dim_boxes.items()}
        values.update(dims)
        shapes = {name: _parse_shape(box.value, values)
                  for name, box in self.shape_boxes.items()}
        rng = np.random.default_rng(self.seed)
        return [random_array(parameter_shape(p, values, shapes),
                             getattr(p.struct_info, "dtype", "") or "float32", rng)
                for p in self._params]

    def run(self, **dims) -> list:
        """Run the VM on random inputs of the shapes ``dims`` give; the outputs (numpy)."""
        from irlab.runtime.ndarray import array as nd_array

        for name, value in dims.items():
            if name in self.dim_boxes:
                self.dim_boxes[name].value = int(value)
        arrays = self.inputs(**dims)
        vm = self.build.vm()
        start = time.perf_counter()
        out = vm[self.func_name](*[nd_array(a) for a in arrays])
        seconds = time.perf_counter() - start
        outputs = _flatten(out)
        self.outputs = outputs
        self.results = {"inputs": [list(a.shape) for a in arrays],
                        "outputs": [list(o.shape) for o in outputs],
                        "dtypes": [str(o.dtype) for o in outputs], "ms": seconds * 1e3,
                        "dims": {v.name_hint: int(self.dim_boxes[v.name_hint].value)
                                 for v in self._vars}}
        self.results.update(self._check(arrays, outputs))
        self.output_html.value = self._result_html()
        return outputs

    def _check(self, arrays, outputs) -> dict:
        """Max abs error against the reference evaluator (None when it cannot run)."""
        from irlab.relax.testing import evaluate

        try:
            expected = _flatten(evaluate(self.build.input, arrays, self.func_name))
        except Exception as err:  # noqa: BLE001 - e.g. a packed function it cannot call
            return {"error": None, "ok": None,
                    "reference": f"{type(err).__name__}: {str(err)[:200]}"}
        worst = 0.0
        for e, g in zip(expected, outputs):
            if e.shape != g.shape:
                return {"error": float("inf"), "ok": False, "reference": "shapes differ"}
            if e.size:
                worst = max(worst, float(np.nanmax(np.abs(e.astype(np.float64) -
                                                          g.astype(np.float64)))))
        return {"error": worst, "ok": worst <= self.tol, "reference": "relax.testing.evaluate"}

    def _run_clicked(self):
        try:
            self.run()
        except Exception as err:  # noqa: BLE001 - a failed run is shown, not raised
            self.results = {"failure": f"{type(err).__name__}: {err}"}
            self.output_html.value = (f"<pre style='color:#dc2626'>"
                                      f"{html.escape(self.results['failure'])}</pre>")

    # -- pictures ---------------------------------------------------------------------------------
    def _result_html(self) -> str:
        r = self.results
        if not r:
            return "<i>not run yet</i>"
        if "failure" in r:
            return f"<pre style='color:#dc2626'>{esc(r['failure'])}</pre>"
        dims = ", ".join(f"{k}={v}" for k, v in r["dims"].items()) or "static shapes"
        outs = "; ".join(f"{tuple(s)} {d}" for s, d in zip(r["outputs"], r["dtypes"]))
        if r["ok"] is None:
            check = f"not checked ({esc(r['reference'])})"
        else:
            check = (f"max abs error {r['error']:.3g} vs {esc(r['reference'])}: "
                     f"{'ok' if r['ok'] else 'MISMATCH'}")
        return (f"<p class='irlab-relax-result'>{esc(dims)} → outputs {esc(outs)} in "
                f"{r['ms']:.2f} ms; {check}</p>")

    def to_html(self) -> str:
        names = ", ".join(self.dim_boxes) or "none"
        return titled(f"Run @{self.func_name}", f"symbolic dims: {names}",
                      self._result_html())


def _flatten(value) -> list:
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _flatten(v)]
    if hasattr(value, "numpy"):
        return [value.numpy()]
    return [np.asarray(value)]
