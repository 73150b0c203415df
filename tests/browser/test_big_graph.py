"""A graph above PassStepper's "big" size (irlab_core.js's BigDrawing) in a real browser: far
out it is drawn as a few paths (no node groups), a click there still finds the node under the
pointer; zoomed in, the node groups near the view are drawn and clickable. Uses the static
HTML export (a file:// page, no Voila)."""

from __future__ import annotations

from voila_support import XSS_NAME

# The node under the pointer far out: its layout position through the pane's transform.
_NODE_POINT = """([testid, name]) => {
  const app = JSON.parse(document.getElementById('irlab-data').textContent).apps[0];
  const step = app.state.step;
  const lay = app.layouts[app.pairs[`-1:${step}`].graph];
  // a node's description is shared between layouts (export.py's shared_records)
  const n = lay.nodes.map((m) => Object.assign({}, app.records[m.r], m))
    .find((m) => m.name === name);
  const user = lay.edges.find((e) => e.s === n.id).t;
  const svg = document.querySelector(`[data-testid=${testid}] svg`);
  const t = svg.querySelector('.irlab-viewport').getAttribute('transform');
  const [x, y, k] = t.match(/-?[\\d.]+/g).map(Number);
  const r = svg.getBoundingClientRect();
  return { x: r.left + x + n.x * k, y: r.top + y + n.y * k, k, nodes: lay.nodes.length,
    user };
}"""


def _export_chain(path):
    from irlab import relay
    from irlab.widgets import export_html

    x = relay.var(XSS_NAME, shape=(1, 8))
    y = x
    # ~600 nodes (the constants are folded into their adds): above the stepper's 400
    for i in range(600):
        y = relay.nn.relu(y) if i % 2 else relay.add(y, relay.const(float(i)))
    return export_html(relay.Function([x], y), path, passes=[relay.transform.FoldConstant()])


def test_big_graph_far_and_near(page, tmp_path):
    page.goto(_export_chain(tmp_path / "chain.html").as_uri())
    page.get_by_test_id("view-graphs").click()
    after = page.locator("[data-testid=graph-after]")
    after.locator(".irlab-lite path").first.wait_for(state="attached")
    nodes = after.locator("[data-testid=graph-node]")
    assert nodes.count() == 0  # far out: shared paths, no group per node
    where = page.evaluate(_NODE_POINT, ["graph-after", XSS_NAME])
    assert where["nodes"] > 400 and where["k"] < 0.4
    page.mouse.click(where["x"], where["y"])  # hit-tested against the layout's boxes
    inspector = page.get_by_test_id("inspector")
    assert inspector.get_by_test_id("inspector-title").inner_text() == XSS_NAME
    # Zoom in around that node: its neighbours are drawn as node groups, not all the graph.
    page.mouse.move(where["x"], where["y"])
    for _ in range(12):
        page.mouse.wheel(0, -200)
        page.wait_for_timeout(30)
    after.locator(f"[data-testid=graph-node][data-node-id={where['user']}]").wait_for()
    assert 0 < nodes.count() < where["nodes"]
    after.locator(f"[data-testid=graph-node][data-node-id={where['user']}]").click()
    assert inspector.get_by_test_id("inspector-title").inner_text() == "add"
    label = after.locator("tspan.irlab-label-title", has_text=XSS_NAME)
    assert label.count() == 1  # the payload drawn as text
    page.wait_for_timeout(300)
    assert page.log.dialogs == [] and page.log.page_errors == []
    assert page.evaluate("() => document.querySelectorAll('img').length") == 0
