"""The explorer's views of BYOC (issue 17, item 6): partitioned regions drawn as clusters
coloured by compiler, external kernels' generated source in the LoweringExplorer beside the
native kernels, per-kernel (and per-compiler) time of external kernels in the RunPanel.
Checked with ``ccompiler`` (needs only a C compiler) and, when installed, oneDNN."""

import numpy as np
import pytest

from irlab import relay
from irlab.ir.module import IRModule
from irlab.relay.op.contrib import partition_for_ccompiler, partition_for_dnnl
from irlab.runtime.module import find_c_compiler
from irlab.viz.dot import compiler_color, to_dot
from irlab.viz.relay_graph import build_relay_graph

pytestmark = pytest.mark.skipif(find_c_compiler() is None, reason="needs a C compiler")
SYMBOL = "tvmgen_default_ccompiler_main_0"
NAME = "<img src=x onerror=alert(1)>"


def _partitioned():
    """add+relu composite and a multiply for ccompiler; exp stays native."""
    x, y = relay.var(NAME, shape=(4, 5)), relay.var("y", shape=(4, 5))
    out = relay.exp(relay.multiply(relay.nn.relu(relay.add(x, y)), y))
    return partition_for_ccompiler(IRModule.from_expr(relay.Function([x, y], out)))


@pytest.fixture(scope="module")
def built():
    return relay.build(_partitioned(), "llvm")


def _external_clusters(graph):
    return {cid: info for cid, info in graph.graph["clusters"].items()
            if info["kind"] == "external"}


def test_partitioned_regions_are_clusters_coloured_by_compiler():
    mod = _partitioned()
    graph = build_relay_graph(mod)
    clusters = _external_clusters(graph)
    assert [(c["compiler"], c["label"]) for c in clusters.values()] == [
        ("ccompiler", f"ccompiler: {SYMBOL}")]
    cid = next(iter(clusters))
    inner = {d["title"] for _, d in graph.nodes(data=True) if d.get("cluster") is not None
             and (d["cluster"] == cid or graph.graph["clusters"][d["cluster"]]["parent"] == cid)}
    assert {"add", "nn.relu", "multiply"} <= inner
    # the region is drawn where main calls it, not a second time as its own function
    assert not any(d["title"] == f"@{SYMBOL}" for _, d in graph.nodes(data=True))
    dot = to_dot(graph)
    fill, border = compiler_color("ccompiler")
    assert f'label="ccompiler: {SYMBOL}"' in dot
    assert f'color="{border}"; fillcolor="{fill}"; penwidth=2' in dot
    # nested composite keeps its own cluster inside the region
    assert any(info["kind"] == "composite" and info["parent"] == cid
               for info in graph.graph["clusters"].values())


def test_built_module_shows_the_region_too(built):
    graph = build_relay_graph(built.ir_mod)
    assert [c["label"] for c in _external_clusters(graph).values()] == [f"ccompiler: {SYMBOL}"]


def test_each_compiler_has_its_own_colour():
    colours = {compiler_color(c) for c in ("dnnl", "ccompiler", "mine")}
    assert len(colours) == 3 and compiler_color("mine") == compiler_color("mine")


def test_lowering_explorer_lists_external_kernels_with_their_source(built):
    from irlab.widgets.lowering_explorer import LoweringExplorer

    lx = LoweringExplorer(built)
    rows = {k["name"]: k for k in lx.kernels}
    assert rows[SYMBOL]["op"] == "ccompiler" and rows[SYMBOL]["compiler"] == "ccompiler"
    assert rows[SYMBOL]["impl"] == "relay.ext.ccompiler"
    native = [k for k in rows.values() if not k["compiler"]]
    assert len(native) == 1 and native[0]["op"] == "exp"
    lx.select(SYMBOL)
    shown = {k for k, pane in lx.panes.items() if not pane.get("hidden")}
    assert shown == {"relay", "source"}
    assert lx.panes["source"]["title"] == "ccompiler source (c)"
    source = lx.panes["source"]["text"]
    assert f"int32_t {SYMBOL}(int64_t* args)" in source and "#include <math.h>" in source
    assert 'Compiler="ccompiler"' in lx.panes["relay"]["text"]
    assert set(lx.texts) == {"relay", "source", "trace"}
    assert "made by relay.ext.ccompiler" in lx.status and lx.loops == []
    page = lx.to_html()
    assert "#include &lt;math.h&gt;" in page and "<math.h>" not in page
    assert "Lowered TIR" not in page and "ccompiler source (c)" in page
    # a native kernel has its six levels and no source pane
    lx.select(native[0]["name"])
    assert {k for k, pane in lx.panes.items() if not pane.get("hidden")} == {
        "relay", "te", "scheduled", "lowered", "llvm", "asm"}


def test_run_panel_times_external_kernels_per_compiler(built):
    from irlab.widgets.run_panel import RunPanel

    panel = RunPanel(built, number=2, repeat=1)
    assert panel.results["ok"]
    assert set(panel.compiler_of.values()) == {"ccompiler"}
    assert panel.compiler_colors == {"ccompiler": compiler_color("ccompiler")[1]}
    assert SYMBOL in panel.kernel_times
    assert set(panel.compiler_times) == {"ccompiler", "irlab"}
    assert sum(panel.compiler_times.values()) == pytest.approx(sum(panel.node_times.values()))
    text = str(panel)
    assert "[ccompiler] " in text and "per compiler: " in text
    page = panel.to_html()
    assert f'fill="{compiler_color("ccompiler")[1]}"' in page and "[ccompiler] " in page
    assert NAME not in page  # the input's name never reaches the page unescaped


def test_dnnl_regions_in_the_three_views():
    from irlab.relay.backend.contrib.dnnl import find_dnnl, missing_reason
    from irlab.widgets.lowering_explorer import LoweringExplorer
    from irlab.widgets.run_panel import RunPanel

    if find_dnnl() is None:
        pytest.skip(missing_reason())
    x = relay.var("x", shape=(1, 4, 8, 8))
    w = relay.const(np.random.default_rng(0).normal(size=(8, 4, 3, 3)).astype("float32"))
    out = relay.nn.softmax(relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))))
    mod = partition_for_dnnl(IRModule.from_expr(relay.Function([x], out)))
    labels = [c["label"] for c in _external_clusters(build_relay_graph(mod)).values()]
    assert labels == ["dnnl: tvmgen_default_dnnl_main_0"]
    factory = relay.build(mod, "llvm")
    lx = LoweringExplorer(factory, kernel="tvmgen_default_dnnl_main_0")
    assert "irlab_dnnl_conv(" in lx.panes["source"]["text"]
    assert lx.panes["source"]["title"] == "dnnl source (c)"
    panel = RunPanel(factory, number=2, repeat=1)
    assert panel.results["ok"] and set(panel.compiler_times) == {"dnnl", "irlab"}
