"""RunPanel: the built module against the interpreter, latency, time per kernel node."""

import numpy as np
import pytest

import irlab
import irlab.relay.testing
from irlab import relay

pytest.importorskip("anywidget")

from irlab.widgets import RunPanel  # noqa: E402

EVIL = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def mlp():
    return relay.testing.MODELS["mlp"]()


def test_random_inputs_match_the_interpreter(mlp):
    mod, params = mlp
    panel = RunPanel(mod, params, number=2, repeat=1)
    r = panel.results
    assert r["ok"] and r["source"].startswith("random")
    assert [i["name"] for i in r["inputs"]] == ["data"]
    (out,) = r["outputs"]
    assert out["shape"] == [1, 10] and out["ok"]
    assert out["max_abs"] < 1e-4 and out["max_rel"] < 1e-4
    assert r["latency_ms"] > 0
    times = panel.node_times
    assert times and all(v > 0 for v in times.values())
    assert list(times.values()) == sorted(times.values(), reverse=True)
    assert set(panel.kernel_times) <= {low.name for low in panel.factory.lowered}
    # seeded: the same seed, the same inputs
    first = panel.inputs["data"].copy()
    panel.run(seed=0)
    assert np.array_equal(first, panel.inputs["data"])
    panel.run(seed=1)
    assert not np.array_equal(first, panel.inputs["data"]) and panel.results["ok"]


def test_user_arrays_and_a_built_factory(mlp):
    mod, params = mlp
    factory = relay.build(mod, "llvm", params=params)
    data = np.linspace(-1, 1, 784, dtype="float32").reshape(1, 1, 28, 28)
    panel = RunPanel(factory, inputs={"data": data}, number=1, repeat=1)
    assert panel.results["source"] == "user" and panel.results["ok"]
    assert np.array_equal(panel.inputs["data"], data)
    panel.run(inputs=[data * 2])
    assert panel.results["ok"]
    with pytest.raises(ValueError):
        panel.run(inputs={"nope": data})


def test_two_op_function_and_escaping():
    x = relay.var(EVIL, shape=(4, 8))
    w = relay.var("w", shape=(16, 8))
    func = relay.Function([x, w], relay.nn.relu(relay.nn.dense(x, w)))
    panel = RunPanel(irlab.IRModule.from_expr(func), number=1, repeat=1)
    r = panel.results
    assert r["ok"] and r["outputs"][0]["max_abs"] < 1e-4
    assert {i["name"] for i in r["inputs"]} == {EVIL, "w"}
    panel.node_times = {EVIL: 2e-6, **panel.node_times}
    page = panel.to_html()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<img" not in panel.chart_svg() and "<svg" in panel.chart_svg()
    assert "pass" in str(panel)


def test_explore_builds_the_new_tabs_lazily(mlp):
    mod, params = mlp
    app = irlab.explore(mod, params=params)
    assert app.tabs.titles == ("Graph", "Passes", "Lowering", "Run")
    assert app._factory is None  # nothing built until a new tab is opened
    app.tabs.selected_index = 3
    assert app._factory is not None and app._run_box.children == (app.run_panel,)
    assert app.run_panel.results["ok"]
    app.tabs.selected_index = 2
    assert app._lowering_box.children == (app.lowering,)
    timed = [k for k in app.lowering.kernels if k["ms"] is not None]
    assert timed and all(k["ms"] > 0 for k in timed)
    assert app.lowering.factory is app.run_panel.factory
