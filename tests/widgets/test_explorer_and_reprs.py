"""``irlab.explore``: one app whose graph view and stepper share the run, the selection and
the step; ``import irlab`` stays free of Jupyter packages; displays without widgets."""

import json
import re
import subprocess
import sys
from pathlib import Path

import irlab
from irlab import relay
from irlab.relay.testing import MODELS
from irlab.viz import build_relay_graph
from irlab.viz.pass_trace import PassTrace
from irlab.widgets.reprs import graph_svg, register, trace_html
from irlab.widgets.trace_data import first_interesting_step

ROOT = Path(__file__).resolve().parents[2]
EVIL = "<img src=x onerror=alert(1)>"


def test_import_irlab_does_not_import_jupyter_packages():
    code = ("import sys, irlab; bad = [m for m in ('ipywidgets', 'anywidget', 'traitlets', "
            "'irlab.widgets') if m in sys.modules]; print(bad); assert not bad")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_explore_links_graph_and_passes():
    mod, params = MODELS["simplenet"]()
    app = irlab.explore(mod, params=params)
    stepper, view = app.stepper, app.graph_view
    assert app.tabs.titles[:2] == ("Graph", "Passes")  # then "Lowering", "Run" (lazy)
    # the graph tab opens on the input program; the passes tab on the first step that
    # changed the program
    assert view.step == 0 and view.title == "input program" and view.graph["nodes"]
    assert stepper.step == first_interesting_step(stepper.trace) > 0
    assert view.step_names == [r["name"] for r in stepper.steps]
    fuse = [r["name"] for r in stepper.steps].index("FuseOps")
    stepper.step = fuse
    assert view.step == fuse and view.graph["clusters"]
    # (AlterOpLayout made the conv an NCHWc one for the CPU target)
    conv, title = next((n["id"], n["title"]) for n in view.graph["nodes"]
                       if n["title"] in ("nn.conv2d", "nn.contrib_conv2d_NCHWc"))
    view.set_state({"selected": conv})  # a click in the graph tab...
    assert stepper.selected == conv  # ...selects the node in the passes tab
    assert stepper.inspector["op"] == title
    assert "FuseOps" in [p["name"] for p in stepper.inspector["provenance"]]
    view.set_state({"step": 0})  # a click on a provenance entry in the graph tab
    assert stepper.step == 0 and view.title == "input program"
    stepper.disable_pass("FuseOps")  # a re-run: the graph tab follows the new run
    assert app.trace is stepper.trace and view.step == stepper.step
    app.tabs.selected_index = 1  # graph tab hidden: laid out only when shown again
    stepper.step = 1
    assert view.step != 1
    app.tabs.selected_index = 0
    assert view.step == 1 and view.title.startswith("after step 1")


def test_graph_step_control_walks_to_the_collapsed_final_program():
    mod, params = MODELS["simplenet"]()
    app = irlab.explore(mod, params=params)
    view, stepper = app.graph_view, app.stepper
    last = len(view.step_names) - 1
    # where the step control's ◀ ▶ stop: the passes that changed the program
    assert view.changed_steps[0] == stepper.step and 0 < len(view.changed_steps) < last
    assert "FuseOps" in [view.step_names[i] for i in view.changed_steps]
    view.set_state({"step": 1})  # the graph tab's step control moves both tabs
    assert view.title.startswith("after step 1") and stepper.step == 1
    view.set_state({"step": last})
    assert stepper.step == last
    # the final program: each fused function is one node, whatever the graph's size
    kinds = {n["kind"] for n in view.graph["nodes"]}
    assert "cluster" in kinds and "call" not in kinds and not view.graph["clusters"]
    assert sorted(view.collapsed) == sorted(view.graph["top_clusters"])
    view.set_state({"step": last + 5})  # out of range: clamped, nothing breaks
    assert view.step == last


def test_trace_html_escapes_and_lists_steps():
    x = relay.var("x", shape=(2,))

    @irlab.transform.module_pass(opt_level=0, name=EVIL)
    def evil(mod, ctx):
        return mod

    trace = PassTrace(relay.Function([x], relay.nn.relu(x)), [evil])
    out = trace_html(trace)
    assert EVIL not in out and "&lt;img src=x onerror=alert(1)&gt;" in out
    assert out.count("<tr>") == len(trace.steps) + 1


def test_graph_svg_for_relay_graphs_only():
    import networkx as nx

    x = relay.var(EVIL, shape=(2,))
    mod = relay.transform.InferType()(irlab.IRModule.from_expr(
        relay.Function([x], relay.nn.relu(x))))
    svg = graph_svg(build_relay_graph(mod))
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg
    assert EVIL not in svg and "&lt;img" in svg
    assert graph_svg(nx.DiGraph()) is None


def test_formatters_registered_in_ipython():
    class Formatter:
        def __init__(self):
            self.types = {}

        def for_type(self, cls, fn):
            self.types[cls] = fn

    class Shell:
        class display_formatter:
            formatters = {"text/html": Formatter(), "image/svg+xml": Formatter()}

    assert register(Shell())
    assert Shell.display_formatter.formatters["text/html"].types[PassTrace] is trace_html
    assert register(None) in (True, False)  # outside IPython: nothing to do, no error


def _long_floats(text):
    """Float literals with more digits than a float32 needs (9): a double's repr of a float32
    value, such as 9.999999747378752e-06 for 1e-05."""
    found = []
    for literal in re.findall(r"\d+\.\d+(?:e[-+]?\d+)?", text):
        digits = re.sub(r"e.*", "", literal).replace(".", "").lstrip("0")
        if len(digits) > 9:
            found.append(literal)
    return found


def test_explorer_prints_numbers_as_a_person_writes_them():
    mod, params = MODELS["resnet18"]()
    app = irlab.explore(mod, params=params)
    view, stepper = app.graph_view, app.stepper
    texts = [json.dumps(view.graph), view.ir, json.dumps(stepper.current), app.to_html()]
    norm = next(n for n in view.graph["nodes"] if n["op"] == "nn.batch_norm")
    view.select(norm["id"])
    # the builder's epsilon as written, not the double 1.9999999494757503e-05
    assert view.inspector["attrs"]["epsilon"] == "2e-05"
    assert "epsilon=2e-05" in view.ir
    view.set_state({"step": len(view.step_names) - 1})
    texts += [json.dumps(view.graph), view.ir, json.dumps(view.inspector)]
    assert [f for text in texts for f in _long_floats(text)] == []


def test_explore_defers_the_pipeline_of_a_big_program():
    from irlab.widgets.explorer import DEFER_PASSES_ABOVE

    mod, params = MODELS["simplenet"]()
    eager = irlab.explore(mod, params=params)
    app = irlab.explore(mod, params=params, defer_passes=True)
    view = app.graph_view
    # drawn at once: the input program with the run's node ids, no step control yet
    assert not app.passes_ran and view.title == "input program" and view.step_names == []
    assert [n["id"] for n in view.graph["nodes"]] == \
        [n["id"] for n in eager.graph_view.graph["nodes"]]
    assert "Explorer" in app.to_html()  # a picture runs nothing
    node = view.graph["nodes"][-1]["id"]
    view.set_state({"selected": node})
    status = app._passes_status
    assert "when this tab is first opened" in status.value
    app.tabs.selected_index = 1  # the passes tab runs the pipeline
    assert app.passes_ran and app.tabs.children[1] is app.stepper
    # the status line followed the passes as they ran: it names the last one
    last = app.stepper.trace[len(app.stepper.trace) - 1].name
    assert "Running the pass pipeline: pass " in status.value and last in status.value
    assert app.stepper.step == eager.stepper.step and app.stepper.selected == node
    assert view.step == 0 and view.step_names == eager.graph_view.step_names
    view.set_state({"step": 1})
    assert app.stepper.step == 1
    # a big program (ResNet-18: 193 distinct nodes) waits for the passes tab by default
    big, big_params = MODELS["resnet18"]()
    assert DEFER_PASSES_ABOVE < 193
    assert not irlab.explore(big, params=big_params).passes_ran
