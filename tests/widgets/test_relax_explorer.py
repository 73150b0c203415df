"""``irlab.explore`` on a Relax IRModule: the graph (dataflow region, symbolic types), the
Relax pipeline in the pass stepper, a ``call_tir``'s kernel in the lowering tab, the VM run
for chosen symbolic dims (one build), and the static pictures."""

import numpy as np
import pytest

import irlab
from irlab.script import ir as I
from irlab.script import relax as R
from irlab.widgets.relax_build import RelaxBuild, call_sites
from irlab.widgets.relax_run_panel import RelaxRunPanel, entry_function

EVIL = "<img src=x onerror=alert(1)>"


@I.ir_module
class MLP:
    @R.function
    def main(x: R.Tensor(("n", 16), "float32"), w0: R.Tensor((16, 8), "float32"),
             b0: R.Tensor((8,), "float32"), w1: R.Tensor((8, 4), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, w0)
            lv1 = R.add(lv0, b0)
            lv2 = R.nn.relu(lv1)
            out = R.matmul(lv2, w1)
            R.output(out)
        return out


@pytest.fixture(scope="module")
def app():
    return irlab.explore(MLP)


def test_graph_tab_shows_the_relax_program(app):
    assert app.is_relax and app.graph_view.step == 0
    graph = app.graph_view._full
    titles = {d["title"]: d for _, d in graph.nodes(data=True)}
    assert titles["x"]["type"] == "(n, 16) float32"
    assert titles["nn.relu"]["type"] == "(n, 8) float32"
    kinds = {info["kind"] for info in graph.graph["clusters"].values()}
    assert kinds == {"dataflow"}
    assert "R.dataflow()" in app.graph_view.ir


def test_passes_tab_runs_the_relax_pipeline(app):
    names = [row["name"] for row in app.stepper.steps]
    assert names[:3] == ["input", "relax.zero_pipeline", "LegalizeOps"]
    assert "FuseTIR" in names and "VMShapeLower" in names
    assert app.stepper.error == ""
    assert "LegalizeOps" in app.stepper.available_passes
    fuse = names.index("FuseTIR")
    app.stepper.step = fuse
    assert app.stepper.current["changed"]
    graph = app.stepper.trace.graph(fuse)
    prim_funcs = {d["name"] for _, d in graph.nodes(data=True) if d["kind"] == "prim_func"}
    assert "fused_matmul_add_relu" in prim_funcs
    assert app.stepper.check_numerics() is None  # the reference evaluator runs every step
    assert "every step computes" in app.stepper.status and "not checked" in app.stepper.status
    errors = {s.name: s.abs_error for s in app.stepper.trace.steps}
    assert errors["FuseTIR"] is not None and errors["FuseTIR"] < 1e-4


def test_lowering_opens_the_kernel_of_a_call(app):
    graph = app.stepper.trace.graph(0)
    relu = next(n for n, d in graph.nodes(data=True) if d["title"] == "nn.relu")
    assert app.lower_call(relu) == "fused_matmul_add_relu"
    lowering = app.lowering
    assert app.tabs.selected_index == 2 and lowering.kernel == "fused_matmul_add_relu"
    assert lowering.panes["relay"]["title"] == "Relax (call sites)"
    assert "fused_matmul_add_relu" in lowering.panes["relay"]["text"]
    assert "for " in lowering.panes["lowered"]["text"]
    assert "define" in lowering.panes["llvm"]["text"]
    # selecting a call in the graph moves the lowering tab to its kernel
    second = [n for n, d in graph.nodes(data=True) if d["title"] == "matmul"][-1]
    app.graph_view.selected = second
    assert lowering.kernel == app.kernel_of(second) != "fused_matmul_add_relu"


def test_run_tab_runs_one_build_at_several_batch_sizes(app):
    panel = app.run_panel
    assert isinstance(panel, RelaxRunPanel) and list(panel.dim_boxes) == ["n"]
    assert panel.results["ok"] is True  # ran once when opened
    executable = app.factory.executable
    for n in (1, 7, 32):
        (out,) = panel.run(n=n)
        assert out.shape == (n, 4) and panel.results["ok"] is True
    assert app.factory.executable is executable
    x, w0, b0, w1 = panel.inputs(n=3)
    (out,) = panel.run(n=3)
    np.testing.assert_allclose(out, np.maximum(x @ w0 + b0, 0) @ w1, rtol=1e-4, atol=1e-4)
    html = app.to_html()
    assert "Explorer" in html and "n=3" in html and "max abs error" in html


def test_run_panel_reports_a_failed_run_and_parses_shapes():
    build = RelaxBuild(MLP)
    panel = RelaxRunPanel(build)
    panel.dim_boxes["n"].value = 2
    panel.func_name = "missing"
    panel._run_clicked()
    assert "failure" in panel.results and "missing" in panel.output_html.value
    assert entry_function(MLP) == "main"
    assert "R.matmul" in call_sites(build.input, "matmul") or \
        call_sites(build.ir_mod, "matmul1")


def test_relax_picture_escapes_names():
    from irlab import relax

    bb = relax.BlockBuilder()
    x = relax.Var(EVIL, R.Tensor(("n",), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.nn.relu(x))
        bb.emit_func_output(out)
    view = irlab.widgets.GraphView(bb.get())
    html = view.to_html()
    assert EVIL not in html and "&lt;img" in html


def test_export_html_of_a_relax_explorer(app, tmp_path):
    from irlab.widgets import export_html

    path = tmp_path / "relax.html"
    export_html(app, path)
    page = path.read_text(encoding="utf-8")  # export_html writes UTF-8
    assert "nn.relu" in page and "(n, 8) float32" in page and "LegalizeOps" in page


def test_build_fuses_hand_written_int64_tir_with_legalized_ops():
    """The seed's situation: a PrimFunc written with ``T.int64()`` shapes next to ops that
    LegalizeOps turns into (int32) TOPI kernels. The explorer builds the fused program (no
    unfused fallback) and runs it."""
    from irlab.script import tir as T

    @I.ir_module
    class Seedlike:
        @T.prim_func
        def exp_func(x: T.handle, y: T.handle):
            n = T.int64()
            X = T.match_buffer(x, (n,), "float32")
            Y = T.match_buffer(y, (n,), "float32")
            for i in range(n):
                with T.block("Y"):
                    vi = T.axis.spatial(n, i)
                    Y[vi] = T.exp(X[vi])

        @R.function
        def main(x: R.Tensor(("n", "m"), "float32")):
            n = T.int64()
            m = T.int64()
            cls = Seedlike
            with R.dataflow():
                lv = R.flatten(x)
                gv = R.call_tir(cls.exp_func, (lv,), out_sinfo=R.Tensor((n * m,), "float32"))
                R.output(gv)
            return gv

    build = RelaxBuild(Seedlike)
    assert [k.name for k in build.lowered if k.name.startswith("fused_")] == \
        ["fused_reshape_exp_func"]
    panel = RelaxRunPanel(build)
    (out,) = panel.run(n=2, m=3)
    assert out.shape == (6,) and panel.results["ok"] is True
