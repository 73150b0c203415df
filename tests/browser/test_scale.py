"""The explorer at the scale of real models (issue 21) in a real browser, through the static
HTML export (file:// pages, no Voila): a flat 5,000-node graph takes the layered layout (not a
fallback), is painted on a canvas far out, has a minimap, and search still finds, centres and
selects its nodes; BERT-base (12 layers, seq 128) draws with Graphviz, layers collapsed at
open and all expanded."""

from __future__ import annotations

import pytest

# The node nearest the middle of the pane, and where it is on the screen: its layout position
# through the pane's transform.
_MIDDLE_NODE = """() => {
  const app = JSON.parse(document.getElementById('irlab-data').textContent).apps[0];
  const svg = document.querySelector('[data-testid=graph-canvas] svg');
  const t = svg.querySelector('.irlab-viewport').getAttribute('transform');
  const [x, y, k] = t.match(/-?[\\d.]+/g).map(Number);
  const r = svg.getBoundingClientRect();
  const mx = r.left + r.width / 2, my = r.top + r.height / 2;
  let best = null, bestD = Infinity;
  for (const n of app.state.graph.nodes) {
    const p = { x: r.left + x + n.x * k, y: r.top + y + n.y * k, k, title: n.title };
    const d = Math.abs(p.x - mx) + Math.abs(p.y - my);
    if (d < bestD) { bestD = d; best = p; }
  }
  return best;
}"""


@pytest.fixture(scope="module")
def flat_page_path(tmp_path_factory):
    from irlab.relay.testing import synthetic
    from irlab.widgets import GraphView, export_html

    mod, params = synthetic.get_workload(num_nodes=5000)
    view = GraphView(mod, params=params)
    assert view.graph["engine"] == "layered" and view.graph["warning"] == ""
    return export_html(view, tmp_path_factory.mktemp("scale") / "flat5000.html")


def test_flat_5000_nodes_painted_with_minimap_and_search(page, flat_page_path):
    page.goto(flat_page_path.as_uri())
    paint = page.get_by_test_id("graph-paint")
    paint.wait_for(state="visible")  # fitted far out: painted on the canvas
    assert page.get_by_test_id("graph-node").count() == 0  # no SVG element per node
    assert "layered layout" in page.get_by_test_id("status").inner_text()
    assert "simple layout" not in page.get_by_test_id("status").inner_text()
    minimap = page.get_by_test_id("minimap")
    assert minimap.is_visible()
    painted = page.evaluate("""() => {
      const c = document.querySelector('[data-testid=graph-paint]');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let ink = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) ink++;
      return ink;
    }""")
    assert painted > 1000  # the graph is on the canvas
    # The inspector: a click far out is hit-tested against the layout's boxes.
    # Fitted, the whole graph is ~1 px per node: zoom in (still far out, painted) first.
    box = page.get_by_test_id("graph-canvas").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    for _ in range(9):
        page.mouse.wheel(0, -200)
        page.wait_for_timeout(30)
    where = page.evaluate(_MIDDLE_NODE)
    assert 0.05 < where["k"] < 0.4 and paint.is_visible()
    page.mouse.click(where["x"], where["y"])
    assert page.get_by_test_id("inspector-title").inner_text() == where["title"]
    # Search: a hit is centred (zoomed in: real node groups again) and selected.
    page.get_by_test_id("search-box").fill("negative")
    page.get_by_test_id("search-box").press("Enter")
    count = page.get_by_test_id("search-count")
    assert count.inner_text().endswith("/ 2")
    hit = page.locator("[data-testid=graph-node].selected")
    hit.wait_for()
    assert page.get_by_test_id("inspector-title").inner_text() == "negative"
    assert not paint.is_visible()  # near: the SVG draws the nodes in view
    assert 0 < page.get_by_test_id("graph-node").count() < 5000
    # The minimap moves the view: a click at its bottom shows the graph's last nodes.
    box = minimap.bounding_box()
    before = page.evaluate("() => document.querySelector('.irlab-viewport')"
                           ".getAttribute('transform')")
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] - 2)
    page.wait_for_timeout(100)
    after = page.evaluate("() => document.querySelector('.irlab-viewport')"
                          ".getAttribute('transform')")
    assert after != before
    assert page.log.page_errors == []


def test_bert_base_draws_with_graphviz(page, tmp_path):
    from irlab.relay.testing import MODELS
    from irlab.widgets import GraphView, export_html

    mod, params = MODELS["bert_base"]()
    view = GraphView(mod, params=params)
    groups = [n for n in view.graph["nodes"] if n["kind"] == "cluster"]
    assert len(groups) == 12 and view.graph["warning"] == ""  # one box per encoder layer
    view.expand_all()
    assert view.graph["engine"] == "graphviz" and view.graph["warning"] == ""
    drawn = len(view.graph["nodes"])
    assert drawn > 400
    page.goto(export_html(view, tmp_path / "bert.html").as_uri())
    page.wait_for_function(
        f"document.querySelectorAll('[data-testid=graph-node]').length >= {drawn}")
    assert page.get_by_test_id("minimap").is_visible()
    assert "simple layout" not in page.get_by_test_id("status").inner_text()
    assert page.log.page_errors == []


@pytest.fixture(scope="module")
def flat_stepper_path(tmp_path_factory):
    """The flat 5,000-node graph plus one constant expression through FoldConstant: two
    steps of ~5,000 lines each (the input: no change, every line shown; FoldConstant: one
    line changed), as the pass stepper's static page."""
    from irlab import relay
    from irlab.relay.testing import synthetic
    from irlab.widgets import export_html

    func = synthetic.get_net(num_nodes=5000)
    folded = relay.add(relay.const(1.0), relay.const(2.0))
    func = relay.Function(func.params, relay.add(func.body, folded))
    return export_html(func, tmp_path_factory.mktemp("scale") / "flat5000_passes.html",
                       passes=[relay.transform.FoldConstant()])


def test_flat_5000_nodes_step_switch_updates_the_side_view(page, flat_stepper_path):
    page.goto(flat_stepper_path.as_uri())
    page.wait_for_selector("[data-testid=pass-item]")
    page.click("[data-testid=view-side]")
    diff = page.get_by_test_id("diff-view")
    page.click("[data-testid=pass-item][data-step='0']")
    diff.get_by_test_id("diff-nochange").wait_for()
    assert page.get_by_test_id("step-title").inner_text().startswith("0:")
    # 5,000 lines: rows built by blocks, the first at once, the others near the view
    blocks = diff.get_by_test_id("diff-block")
    assert blocks.count() >= 40
    assert diff.locator("[data-testid=diff-row]").first.inner_text().startswith("1")
    last = page.evaluate("() => JSON.parse(document.getElementById('irlab-data').textContent)"
                         ".apps[0].pairs['-1:0'].rows.at(-1)[1]")
    assert last > 4000
    diff.evaluate("(el) => { el.scrollTop = el.scrollHeight; }")
    page.wait_for_function(
        "(n) => [...document.querySelectorAll('[data-testid=diff-row] .no')]"
        ".some((e) => e.textContent === String(n))", arg=last)
    # the next step: FoldConstant's one changed line replaces the whole program
    page.click("[data-testid=pass-item][data-step='1']")
    page.get_by_test_id("step-title").filter(has_text="FoldConstant").wait_for()
    assert diff.get_by_test_id("diff-nochange").count() == 0
    changed = diff.locator("[data-testid=diff-row]:not([data-tag=e])")
    changed.first.wait_for()
    assert "3f" in changed.first.inner_text()
    # back: the drawn diff is reused, scrolled rows and all
    page.click("[data-testid=pass-item][data-step='0']")
    diff.get_by_test_id("diff-nochange").wait_for()
    assert page.log.page_errors == []
