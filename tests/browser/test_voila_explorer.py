"""The widgets in a real browser: Voila serves small notebooks on 127.0.0.1, Chromium (driven by
Playwright) loads them. Checks that the graph renders, that a click fills the inspector (in the
page and, through the kernel, in Python), that stepping to FuseOps shows a diff, and that a
variable named like an HTML payload is shown as text and runs nothing.
Screenshots: ``tests/browser/artifacts/<test>.png``."""

from __future__ import annotations

import re

from voila_support import ARTIFACTS, XSS_NAME, open_notebook

GRAPH_READY = "[data-testid=graph-view] [data-testid=graph-node]"
STEPPER_READY = "[data-testid=pass-stepper] [data-testid=pass-item]"


def _node(page, title, scope="[data-testid=graph-view]"):
    """The graph node whose first label line contains ``title``."""
    return page.locator(f"{scope} [data-testid=graph-node]").filter(
        has=page.locator("tspan.irlab-label-title", has_text=title))


def _no_injection(page):
    """Nothing from the payload became markup or ran."""
    page.wait_for_timeout(300)  # an <img onerror> would fire right after insertion
    assert page.log.dialogs == [], page.log.dialogs
    injected = page.evaluate(
        "() => [...document.querySelectorAll('img')].filter("
        "i => i.getAttribute('src') === 'x' || i.hasAttribute('onerror')).length")
    assert injected == 0


def test_graph_renders(page, voila_url):
    open_notebook(page, voila_url, "graph", GRAPH_READY)
    nodes = page.locator(GRAPH_READY)
    # input, conv2d, relu: drawn as SVG groups inside the widget's <svg>; the weight is
    # folded into the conv2d (its label and inspector name it)
    assert nodes.count() == 3
    assert page.locator("[data-testid=graph-view] svg [data-testid=graph-node]").count() == 3
    assert page.locator("[data-testid=graph-view] .irlab-edge").count() == 2
    box = _node(page, "nn.conv2d").bounding_box()
    assert box and box["width"] > 10 and box["height"] > 5  # laid out and visible
    kinds = sorted(nodes.evaluate_all("els => els.map(e => e.getAttribute('data-kind'))"))
    assert kinds == ["call", "call", "input"]
    _node(page, "nn.conv2d").click()
    weights = page.locator("[data-testid=graph-view] [data-testid=inspector-folded]")
    assert "weight" in weights.inner_text() and "[4, 3, 3, 3]" in weights.inner_text()
    # The "weights" checkbox draws the weight as a node again (the kernel rebuilds the graph).
    page.locator("[data-testid=graph-view] [data-testid=weights-toggle]").check()
    page.wait_for_function(
        "document.querySelectorAll('[data-testid=graph-view] [data-testid=graph-node]')"
        ".length === 4")
    kinds = sorted(nodes.evaluate_all("els => els.map(e => e.getAttribute('data-kind'))"))
    assert kinds == ["call", "call", "input", "param"]
    assert page.locator("[data-testid=graph-view] .irlab-edge").count() == 3
    assert page.log.page_errors == []


def test_click_fills_inspector(page, voila_url):
    open_notebook(page, voila_url, "graph", GRAPH_READY)
    inspector = page.locator("[data-testid=graph-view] [data-testid=inspector]")
    assert inspector.get_by_test_id("inspector-empty").is_visible()
    _node(page, "nn.conv2d").click()
    assert inspector.get_by_test_id("inspector-title").inner_text() == "nn.conv2d"
    ty = inspector.get_by_test_id("inspector-type").inner_text()
    assert "Tensor[(1, 4, 8, 8), float32]" in ty
    attrs = inspector.get_by_test_id("inspector-attrs").inner_text()
    assert "padding" in attrs and "kernel_size" in attrs
    assert "nn.conv2d(" in inspector.get_by_test_id("inspector-line").inner_text()
    # The click reached the kernel: the notebook's observer echoes GraphView.inspector.
    echo = page.locator(".py-echo")
    echo.filter(has_text="nn.conv2d").wait_for(timeout=15_000)
    assert echo.inner_text().startswith("python: n")
    assert page.log.page_errors == []


def test_step_to_fuseops_shows_diff(page, voila_url):
    open_notebook(page, voila_url, "stepper", STEPPER_READY)
    fuse = page.locator("[data-testid=pass-item][data-name=FuseOps]")
    assert fuse.count() == 1 and fuse.get_attribute("data-changed") == "true"
    fuse.click()
    title = page.get_by_test_id("step-title")
    title.filter(has_text="FuseOps").wait_for()
    diff = page.get_by_test_id("diff-view")
    assert diff.get_by_test_id("diff-nochange").count() == 0
    changed = diff.locator("[data-testid=diff-row]:not([data-tag=e])")
    assert changed.count() > 0
    assert "Primitive=1" in diff.inner_text()  # the fused function appears in the new IR
    # The graph after the pass draws the fused group as a cluster; its ops are marked changed.
    page.get_by_test_id("view-graphs").click()
    after = page.locator("[data-testid=graph-after]")
    after.locator("[data-testid=graph-cluster]").first.wait_for()
    marked = after.locator("[data-testid=graph-node]:not([data-state=same])")
    assert marked.count() >= 3  # conv2d, add, relu now inside fused_conv2d_add_relu
    # Keyboard navigation: k goes one step back, j forward again.
    step = int(fuse.get_attribute("data-step"))
    page.get_by_test_id("pass-list").focus()
    page.keyboard.press("k")
    title.filter(has_text=f"{step - 1}:").wait_for()
    page.keyboard.press("j")
    title.filter(has_text=f"{step}:").wait_for()
    assert page.log.page_errors == []


def test_hide_types_checkbox_drops_annotations(page, voila_url):
    open_notebook(page, voila_url, "stepper", STEPPER_READY)
    page.locator("[data-testid=pass-item][data-name=FuseOps]").click()
    diff = page.get_by_test_id("diff-view")
    diff.filter(has_text="Primitive=1").wait_for()
    assert "ty=" in diff.inner_text()
    page.get_by_test_id("hide-types").check()  # Python recomputes the pair without them
    # the new pair drawn: while the view re-renders its text is briefly empty, which has no
    # 'ty=' either (a clean-clone CI read it then)
    page.wait_for_function("() => { const t = document.querySelector("
                           "'[data-testid=diff-view]').innerText;"
                           " return t.includes('Primitive=1') && !t.includes('ty='); }")
    assert "Primitive=1" in diff.inner_text() and page.log.page_errors == []


def test_html_in_a_name_is_text(page, voila_url):
    open_notebook(page, voila_url, "graph", GRAPH_READY)
    node = _node(page, XSS_NAME)
    assert node.count() == 1  # the label's text is the payload, literally
    node.click()
    inspector = page.locator("[data-testid=graph-view] [data-testid=inspector]")
    assert inspector.get_by_test_id("inspector-title").inner_text() == XSS_NAME
    assert XSS_NAME in page.get_by_test_id("ir-pane").inner_text()
    _no_injection(page)
    # The same name through the pass stepper: pass graphs, IR diffs, inspector.
    open_notebook(page, voila_url, "stepper", STEPPER_READY)
    page.locator("[data-testid=pass-item][data-name=FuseOps]").click()
    page.get_by_test_id("step-title").filter(has_text="FuseOps").wait_for()
    # the diff is drawn after the title: wait for it rather than read it at once
    page.get_by_test_id("diff-view").filter(has_text=XSS_NAME).wait_for()
    assert XSS_NAME in page.get_by_test_id("diff-view").inner_text()
    _no_injection(page)


def test_dashboard_switches_model(page, voila_url):
    open_notebook(page, voila_url, "explorer", GRAPH_READY)
    tabs = page.locator(".irlab-explorer")
    assert tabs.get_by_text("Passes").count() > 0
    # The graph tab draws the trace's graphs: their weights are folded by the PassTrace.
    assert page.locator("[data-testid=graph-view] [data-testid=weights-toggle]").is_disabled()
    before = page.locator(GRAPH_READY).count()
    page.select_option(".widget-dropdown select", "mlp")
    status = page.locator(".widget-label", has_text="mlp:")
    status.wait_for(timeout=60_000)  # the new model went through the pipeline
    ops = page.locator("[data-testid=graph-view] tspan.irlab-label-title", has_text="nn.dense")
    assert ops.count() > 0 and page.locator(GRAPH_READY).count() != before
    assert page.log.page_errors == []


def test_served_pages_load_nothing_remote(page, voila_url):
    # Voila's own "lab" template asks a CDN for Font Awesome: irlab's template leaves it out.
    open_notebook(page, voila_url, "explorer", GRAPH_READY)
    page.wait_for_load_state("networkidle")
    assert page.log.remote_requests == []


def test_explore_opens_on_the_input_program_and_steps(page, voila_url):
    """``tvm.explore``'s graph tab opens on the input program; its step control moves it
    along the pipeline (through the kernel), and at the end each fused function is one node."""
    open_notebook(page, voila_url, "explore_small", GRAPH_READY)
    view = page.locator(".irlab-explorer [data-testid=graph-view]")
    title = view.get_by_test_id("graph-title")
    assert title.inner_text() == "input program"
    control = view.get_by_test_id("graph-step-control")
    assert control.is_visible()
    assert view.get_by_test_id("graph-step-label").inner_text().startswith("step 0 / ")
    # ▶ skips the passes that changed nothing: the first stop is the first change
    view.get_by_test_id("graph-step-next").click()
    title.filter(has_text="after step").wait_for()
    first = int(title.inner_text().split()[2].rstrip(":"))
    assert first > 1 and view.get_by_test_id("graph-step-label").inner_text().startswith(
        f"step {first} / ")
    view.get_by_test_id("graph-step-prev").click()
    title.filter(has_text="input program").wait_for()
    # the slider's end: the final program, fused functions collapsed into one node each
    slider = view.get_by_test_id("graph-step-slider")
    last = int(slider.get_attribute("max"))
    slider.evaluate("(el, v) => { el.value = String(v); "
                    "el.dispatchEvent(new Event('change')); }", last)
    title.filter(has_text=f"after step {last}:").wait_for()
    view.locator("[data-testid=graph-node][data-kind=cluster]").first.wait_for()
    assert view.locator("[data-testid=graph-node][data-kind=call]").count() == 0
    assert view.get_by_test_id("graph-step-next").is_disabled()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "test_explore_graph_steps.png"), full_page=True)
    assert page.log.page_errors == []


def test_search_hit_inside_a_collapsed_layer_opens_it(page, voila_url):
    """ResNet-18 above the "big" size opens as its layers (the model builder's stage names),
    each collapsed; a search for a weight inside one finds it, and Enter expands its stage and
    unit and selects the conv."""
    open_notebook(page, voila_url, "layers", GRAPH_READY)
    view = page.locator("[data-testid=graph-view]")
    groups = view.locator("[data-testid=graph-node][data-kind=cluster]")
    for stage in ("stage1", "stage2", "stage3", "stage4"):
        assert _node(page, stage).count() == 1
    before = view.locator("[data-testid=graph-node]").count()
    assert groups.count() >= 4 and before < 20
    box = view.get_by_test_id("search-box")
    box.fill("stage3_unit1_conv1_weight")
    assert view.get_by_test_id("search-count").inner_text() == "1 / 1"
    box.press("Enter")
    inspector = view.get_by_test_id("inspector")
    inspector.filter(has_text="stage3_unit1_conv1_weight").wait_for()
    assert "nn.conv2d" in inspector.inner_text()
    assert view.locator("[data-testid=graph-node]").count() > before  # stage3 expanded
    assert view.locator("[data-testid=graph-node].selected").count() == 1
    # stage3 is a box now (its units inside, unit1 open); stage2 is still one node
    assert _node(page, re.compile(r"^stage3$")).count() == 0
    assert _node(page, re.compile(r"^stage2$")).count() == 1
    assert _node(page, re.compile(r"^stage3_unit2$")).count() == 1
    assert view.get_by_test_id("search-count").inner_text() == "1 / 1"  # found where drawn
    assert "layer" in inspector.inner_text()  # the conv's layer group: stage3_unit1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "test_search_opens_layer.png"), full_page=True)
    assert page.log.page_errors == []
