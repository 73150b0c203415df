"""PassStepper: the step list, diffs between any two steps, filters, inspector with
provenance, numerics on a deliberately wrong pass, pipeline editing that keeps the view, and
the browser's messages (as the comm delivers them)."""

import json

import pytest

import irlab
from irlab import relay
from irlab.relay.testing import MODELS
from irlab.relay.transform import InferType, function_pass
from irlab.widgets import PassStepper
from irlab.widgets.pass_stepper import visible_steps


def _rewrite(name, src, make):
    """A function pass replacing calls to ``src`` by ``make(first argument)``."""

    @function_pass(opt_level=0, name=name)
    def rewrite(func, mod, ctx):
        class Mutator(relay.ExprMutator):
            def visit_call(self, call):
                new = super().visit_call(call)
                return make(new.args[0]) if new.op.name == src else new
        return Mutator().visit(func)
    return rewrite


def _same():  # relu(x) == maximum(x, 0): the results do not change
    return _rewrite("ReluToMax", "nn.relu", lambda x: relay.maximum(x, relay.const(0.0)))


def _wrong():  # maximum(x, 0) -> sigmoid(x): the results change
    return _rewrite("MaxToSigmoid", "maximum", lambda x: relay.sigmoid(x))


@pytest.fixture
def stepper():
    mod, params = MODELS["simplenet"]()
    seq = irlab.transform.Sequential([InferType(), _same(), _wrong()], name="seq")
    return PassStepper(mod, [seq], params=params)


def _names(st):
    return [r["name"] for r in st.steps]


def _node(st, title):
    return next(n for n in st.current["graph"]["nodes"] if n["title"] == title)


def test_step_list_with_nesting_times_and_changes(stepper):
    rows = stepper.steps
    assert [(r["name"], r["depth"], r["parent"]) for r in rows[:4]] == [
        ("input", 0, None), ("seq", 0, None), ("InferType", 1, 1), ("ReluToMax", 1, 1)]
    by_name = {r["name"]: r for r in rows}
    assert by_name["seq"]["changed"] and by_name["ReluToMax"]["changed"]
    assert not rows[2]["changed"] and rows[1]["children"] and not rows[2]["children"]
    assert all(r["ms"] >= 0 for r in rows)
    # starts on the first pass that changed the program itself, not on its Sequential
    assert _names(stepper)[stepper.step] == "ReluToMax"
    json.dumps({"steps": stepper.steps, "current": stepper.current}, allow_nan=False)


def test_diff_against_the_pass_input_colours_nodes(stepper):
    cur = stepper.current
    assert cur["base"] == -1 and cur["base_label"] == "input of this pass"
    tags = {row[0] for row in cur["rows"]}
    assert "r" in tags or {"d", "i"} <= tags
    assert "nn.relu(" in cur["text_a"] and "maximum(" in cur["text_b"]
    states = {n["title"]: n.get("state") for n in cur["graph"]["nodes"]}
    assert states["nn.relu"] == "removed" and states["maximum"] == "added"
    assert states["nn.conv2d"] is None  # untouched nodes keep id and colour
    # one layout for both panes: removed and added nodes are all in it
    assert cur["stats"]["nodes"]["added"] >= 1 and cur["stats"]["nodes"]["removed"] == 1


def test_unchanged_step_and_renumbering_show_no_difference(stepper):
    stepper.step = _names(stepper).index("InferType")
    cur = stepper.current
    assert cur["same"] and all(row[0] == "e" for row in cur["rows"])
    assert all("state" not in n for n in cur["graph"]["nodes"])


def test_diff_between_any_two_steps(stepper):
    last = len(stepper.steps) - 1
    stepper.base = 0
    stepper.step = last
    cur = stepper.current
    assert cur["base"] == 0 and cur["key"] == f"0:{last}"
    states = {n["title"]: n.get("state") for n in cur["graph"]["nodes"]}
    assert states["nn.relu"] == "removed" and states["sigmoid"] == "added"
    assert "maximum" not in states  # it lived only in between
    stepper.base = 99  # out of range: back to the pass's own input
    assert stepper.base == -1


def test_slider_and_keys_land_on_valid_steps(stepper):
    stepper.set_state({"step": 10 ** 6})
    assert stepper.step == len(stepper.steps) - 1
    stepper.set_state({"step": -5})
    assert stepper.step == 0 and stepper.current["step"] == 0


def test_hide_unchanged_and_pass_search(stepper):
    everything = list(range(len(stepper.steps)))
    assert stepper.visible == everything
    stepper.set_state({"hide_unchanged": True})
    assert [stepper.steps[i]["name"] for i in stepper.visible] == [
        "input", "seq", "ReluToMax", "MaxToSigmoid"]
    stepper.set_state({"hide_unchanged": False, "pass_search": "sigm"})
    assert [stepper.steps[i]["name"] for i in stepper.visible] == ["input", "MaxToSigmoid"]
    assert visible_steps(stepper.steps, True, "infer") == [0]


def test_inspector_lists_provenance(stepper):
    stepper.step = _names(stepper).index("MaxToSigmoid")
    sig = _node(stepper, "sigmoid")["id"]
    stepper.set_state({"selected": sig})
    info = stepper.inspector
    assert info["op"] == "sigmoid" and info["state"] == "added"
    assert [p["name"] for p in info["provenance"]] == ["MaxToSigmoid"]
    assert _node(stepper, "sigmoid")["prov"] == [[info["provenance"][0]["step"], "MaxToSigmoid"]]
    assert "sigmoid(" in info["ir"]


def test_numerics_marks_the_first_wrong_pass(stepper):
    first = stepper.check_numerics()
    assert first is not None and first.name == "MaxToSigmoid"
    assert stepper.first_bad == first.index
    rows = {r["name"]: r for r in stepper.steps}
    assert rows["ReluToMax"]["error"] < 1e-6 and rows["MaxToSigmoid"]["error"] > 1e-2
    assert rows["MaxToSigmoid"]["abs_error"] > 1e-2
    assert "MaxToSigmoid" in stepper.status and "max abs error" in stepper.status


def test_numerics_button_message(stepper):
    stepper._on_msg(stepper, {"action": "numerics"}, [])
    assert stepper.steps[stepper.first_bad]["name"] == "MaxToSigmoid"


def test_disable_pass_reruns_and_keeps_step_and_node(stepper):
    conv = _node(stepper, "nn.conv2d")["id"]
    stepper.selected = conv
    runs = stepper.runs
    stepper.disable_pass("MaxToSigmoid")
    assert stepper.runs == runs + 1
    assert "MaxToSigmoid" not in _names(stepper)
    assert _names(stepper)[stepper.step] == "ReluToMax"  # same step, found by name
    assert stepper.selected == conv and stepper.inspector["op"] == "nn.conv2d"
    assert [e["enabled"] for e in stepper.pipeline] == [True, True, False]
    assert stepper.check_numerics() is None
    stepper.enable_pass(2)
    assert "MaxToSigmoid" in _names(stepper)


def test_reorder_and_add_a_pass_from_a_cell(stepper):
    @irlab.transform.module_pass(opt_level=0, name="MyPass")
    def my_pass(mod, ctx):
        return mod

    stepper.add_pass(my_pass, after="ReluToMax")
    entries = [(e["name"], e["group"], e["custom"]) for e in stepper.pipeline]
    assert entries[2] == ("MyPass", "seq", True)  # joined the Sequential it was put in
    names = _names(stepper)
    assert names.index("ReluToMax") < names.index("MyPass") < names.index("MaxToSigmoid")
    assert stepper.steps[names.index("MyPass")]["depth"] == 1
    stepper.move_pass("MaxToSigmoid", 0)
    assert [e["name"] for e in stepper.pipeline][0] == "MaxToSigmoid"
    stepper.remove_pass("MyPass")
    assert "MyPass" not in _names(stepper)


def test_pipeline_messages_from_the_browser(stepper):
    stepper._on_msg(stepper, {"action": "pipeline", "op": "toggle", "index": 1}, [])
    assert not stepper.pipeline[1]["enabled"] and "ReluToMax" not in _names(stepper)
    stepper._on_msg(stepper, {"action": "pipeline", "op": "down", "index": 0}, [])
    assert [e["name"] for e in stepper.pipeline][:2] == ["ReluToMax", "InferType"]
    stepper._on_msg(stepper, {"action": "pipeline", "op": "add", "name": "NoSuchPass"}, [])
    assert "failed" in stepper.status and "NoSuchPass" in stepper.status


def test_a_failing_pass_is_shown_not_raised():
    @irlab.transform.module_pass(opt_level=0, name="Boom")
    def boom(mod, ctx):
        raise RuntimeError("broken pass")

    mod, _ = MODELS["mlp"]()
    st = PassStepper(mod, [_rewrite("Soft", "nn.softmax", relay.nn.log_softmax), boom])
    assert "broken pass" in st.error and "stopped" in st.status
    assert _names(st)[:2] == ["input", "Soft"]


def test_default_pipeline_reaches_fuse_ops():
    mod, params = MODELS["simplenet"]()
    st = PassStepper(mod, params=params)
    names = _names(st)
    assert "FuseOps" in names and names[1] == "sequential"
    st.step = names.index("FuseOps")
    cur = st.current
    assert any(row[0] != "e" for row in cur["rows"])
    assert cur["graph"]["clusters"], "FuseOps draws fused functions as clusters"
    # ops moved into a fused function keep their ids: changed, not removed and re-added
    states = {n["title"]: n.get("state") for n in cur["graph"]["nodes"]}
    assert states["nn.conv2d"] == "changed"


def test_consumers_of_a_rewritten_node_keep_their_ids():
    x = relay.var("x", shape=(2, 2))
    program = relay.Function([x], relay.negative(relay.nn.relu(relay.exp(x))))
    st = PassStepper(program, [_rewrite("ExpToSigmoid", "exp", relay.sigmoid)])
    states = {n["title"]: n.get("state") for n in st.current["graph"]["nodes"]}
    assert states["exp"] == "removed" and states["sigmoid"] == "added"
    # relu and negative are new objects (their input changed) but the same nodes
    assert states["nn.relu"] == "changed" and states["negative"] is None


def test_clusters_created_by_a_pass_are_marked_added():
    mod, params = MODELS["simplenet"]()
    st = PassStepper(mod, [InferType(), relay.transform.FuseOps(fuse_opt_level=2)],
                     params=params)
    fuse = next(r["i"] for r in st.steps if r["name"] == "FuseOps")
    st.step = fuse
    clusters = st.current["graph"]["clusters"]
    assert clusters and all(c.get("state") == "added" for c in clusters)
    # the before pane hides what only the after side has
    from irlab.widgets import assets

    assert ".side-a .state-added" in assets.css()


def test_hide_types_diffs_the_programs_without_annotations():
    from irlab.widgets.trace_data import without_types

    x = relay.var("x", shape=(2, 3))
    stepper = PassStepper(relay.Function([x], relay.nn.relu(relay.add(x, x))))
    assert "/* ty=" in stepper.current["text_b"]
    lines = stepper.current["text_b"].count("\n")
    stepper.hide_types = True
    assert "/* ty=" not in stepper.current["text_a"] + stepper.current["text_b"]
    assert stepper.current["text_b"].count("\n") == lines  # line numbers kept for the graph
    assert "/* ty=" not in stepper.to_html()
    stepper.hide_types = False
    assert "/* ty=" in stepper.current["text_b"]
    assert without_types("  %0 = f(%x) /* ty=T */;\ndef @main(%x: T) {") == \
        "  %0 = f(%x);\ndef @main(%x: T) {"
