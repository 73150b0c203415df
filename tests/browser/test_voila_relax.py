"""``tvm.explore`` on a Relax module in a real browser (Voila + Chromium): the graph draws the
bindings with their symbolic shapes inside a dataflow region, a click fills the inspector with
the struct info, the passes tab lists the Relax pipeline and shows LegalizeOps' diff, the
lowering tab opens on a kernel, the run tab runs the VM for a batch typed in, and a parameter
named like an HTML payload stays text."""

from __future__ import annotations

from voila_support import ARTIFACTS, XSS_NAME, open_notebook

GRAPH_READY = "[data-testid=graph-view] [data-testid=graph-node]"


def _node(page, title):
    return page.locator("[data-testid=graph-view] [data-testid=graph-node]").filter(
        has=page.locator("tspan.irlab-label-title", has_text=title))


def _tab(page, name):
    page.locator(".irlab-explorer .lm-TabBar-tab, .irlab-explorer .p-TabBar-tab").filter(
        has_text=name).first.click()


def test_explore_relax_module(page, voila_url):
    open_notebook(page, voila_url, "explore_relax", GRAPH_READY)
    view = page.locator(".irlab-explorer [data-testid=graph-view]")
    # x, w, matmul, relu: the two bindings inside the dataflow region
    assert page.locator(GRAPH_READY).count() == 4
    assert view.locator("[data-testid=graph-cluster]").count() == 1
    relu = _node(page, "nn.relu")
    assert "(n, 8) float32" in relu.text_content()
    relu.click()
    inspector = view.get_by_test_id("inspector")
    assert inspector.get_by_test_id("inspector-title").inner_text() == "nn.relu"
    attrs = inspector.get_by_test_id("inspector-attrs").inner_text()
    assert 'R.Tensor((n, 8), dtype="float32")' in attrs
    payload = _node(page, XSS_NAME)
    assert payload.count() == 1  # the name shows as text
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "test_explore_relax_graph.png"))
    # Passes: the Relax pipeline; LegalizeOps turns the ops into call_tir
    _tab(page, "Passes")
    legalize = page.locator("[data-testid=pass-item][data-name=LegalizeOps]").first
    legalize.wait_for(timeout=30_000)
    legalize.click()
    page.get_by_test_id("diff-view").filter(has_text="R.call_tir").wait_for(timeout=30_000)
    # Lowering: relax.build of the last step, a kernel at every level
    _tab(page, "Lowering")
    page.locator(".irlab-explorer").get_by_text("Relax (call sites)").first.wait_for(
        timeout=90_000)
    # Run: the VM, for a batch typed into the n box
    _tab(page, "Run")
    result = page.locator(".irlab-relax-result")
    result.first.wait_for(timeout=90_000)
    assert "n=4" in result.first.inner_text() and "ok" in result.first.inner_text()
    box = page.locator(".irlab-relax-run input[type=number]").first
    box.fill("7")
    box.press("Enter")
    page.locator(".irlab-relax-run button", has_text="Run").click()
    page.locator(".irlab-relax-result", has_text="n=7").wait_for(timeout=30_000)
    assert "(7, 8) float32" in page.locator(".irlab-relax-result").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "test_explore_relax_module.png"))
    page.wait_for_timeout(300)
    assert page.log.dialogs == [] and page.log.page_errors == []
