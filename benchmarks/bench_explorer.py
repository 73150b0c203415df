"""The explorer's figures: time to draw simplenet, ResNet-18 and ResNet-50 with weights folded
into their users (the default) and drawn as nodes (``fold_weights=False``), render time of
ResNet-50's graph, PassStepper's step-switch time on
a ~1,000-node graph (target < 100 ms after the first render), size of the exported HTML.
Prints figures; asserts nothing.

Python side: what the kernel does (type inference, graph, Graphviz layout, diff) before the
browser gets anything. Browser side (when Debian's Chromium and pip's playwright are there):
the widgets' own JavaScript drawing the exported page, the same code as in a notebook.

Run: python benchmarks/bench_explorer.py [--repeat 5] [--no-browser]

Figures of 2026-11-26, issue 21's first bullet (weights folded into their users), on a 2-core
Xeon shared with four other jobs (noisy), dot binary, Chromium 156, --repeat 3; before = main
at d511da6, after = this script:
                                      before                 after
  simplenet graph                     10 nodes               5 nodes
  ResNet-18 graph                     183 nodes, SVG 0.18 MB 88 nodes, SVG 0.10 MB
  ResNet-50 graph                     487 nodes, SVG 0.48 MB 228 nodes, SVG 0.26 MB
    Graphviz layout + payload         275-450 ms             220-250 ms
    exported page, load to drawn      947 ms                 664 ms
  PassStepper(ResNet-50) first render 23.4 s                 4.9-8.3 s
    biggest step (SimplifyInference)  1046 nodes, union 1176 686 nodes, union 815
    prepare() (every step laid out)   10.0 s                 4.2-5.9 s
    pass report HTML                  6.91 MB                5.64 MB
    side view step switch (Chromium)  213-255 ms             84-104 ms
Where the stepper's first render goes now (cProfile, loaded machine, 13 s in all): Graphviz on
the 815-node union 5.3 s, the pipeline 3.7 s, the 11 distinct graphs 2.4 s.

Figures of 2026-11-26 (later), issue 21's layer groups and the export's shared node
descriptions, same Xeon, 2 cores shared by 8 agents (load average 14-15: very noisy), --repeat 3:
                                      before                 after
  ResNet-50 GraphView at open         228 nodes drawn        20 (4 stages collapsed), 296 ms
    expand stage3 / reveal a node     -                      84 ms / 132 ms (Python, layout)
    exported graph page               0.26 MB                0.22 MB, load to drawn 507 ms
  irlab report resnet50               5.64 MB                4.13 MB (layer groups included;
                                                             3.5 MB without them)
  PassStepper(ResNet-50) export       6.3 MB (target llvm)   4.35 MB (explore(...) export)
  side view step switch (Chromium)    84-104 ms              357-708 ms median, 10-60 ms of it
                                                             script: the rest is paint on the
                                                             overloaded host (not comparable)
  The same switches (steps 15, 16, 14, 5 rounds) on main's page and this one, interleaved in
  one Chromium under the same load: median 286 ms (main, 5.64 MB page) and 205 ms (this,
  4.15 MB), fastest 102 and 113 ms: no slowdown from the shared descriptions or the groups.

Figures of 2026-11-26 (at scale: --scale-only), same Xeon, 2 cores shared by 8 agents, load
average 14-15 (very noisy: the same run varied 2-3x), Chromium 156, --repeat 3. "view" is
GraphView(mod) in Python (graph, groups, layout); "load" is the exported page from navigation
to a drawn graph; heap is Chromium's JS heap then. Picking a model in the dashboard costs
about view + load (+ building the model: BERT-base's 85 M random weights take 4-7 s).
                 drawn at open       view     load     heap   expand a group  all expanded
  simplenet      5 (Graphviz)        60-92    167-381  2.6 MB -               -
  ResNet-18      88 (Graphviz)       217-228  894-1096 4.1 MB -               -
  ResNet-50      20 (Graphviz)       168-316  264-404  6.6 MB 101-120 ms      228 nodes, load
                                                                              394-408, 9 MB
  BERT-base      14 (12 layers,      176-426  289-1785 10-11  74-118 ms       469 nodes
  (12 layers,    Graphviz)                             MB                     (Graphviz), load
  seq 128)                                                                    671-684, 12 MB
  flat 5,000     5000 (layered,      1270-    2732-    14-21  -               -
  nodes          canvas far out)     3833     4054     MB
  (all times in ms). The flat 5,000-node graph: Graphviz would take 56 s; the layered layout
  0.2 s flat, 0.4-0.6 s hierarchical (0.22 s with every group cached).
  Step switch at 5,000 nodes (flat graph + one constant expression through FoldConstant):
  graphs view (two canvas-painted panes) median 29-31 ms (max 104-151); before batching the
  canvas shapes per colour 224 ms. The side view (the text diff of a 5,000-line program, not
  the graph) 513-1104 ms: the diff rows are not virtualized (not done).

Figures of 2026-11-26 (issue 21's two missed goals), same Xeon, 2 cores shared by 8 agents,
load average 12-23 (very noisy), Chromium 156:
  Side view step switch, the flat 5,000-node graph through FoldConstant (5,003 lines), main's
  page script and this one on the same exported data, interleaved in one Chromium, load 22:
                               main                    this (rows built by blocks near view)
    input step, first draw     4231 ms                 120 ms
    switches, median (max)     453 ms (1952), 60 of    127 ms (421), 4 of it script
                               it script
  --switch-only (relay.optimize's pipeline, input + every changed step, load 15-23),
  median to the next paint (script): simplenet 16-34 ms (2), ResNet-18 300-536 ms (106),
  ResNet-50 470-567 ms (99), BERT-base 224-415 ms (22), flat5000 (7,004 lines) 261-446 ms
  (37). Exporting flat5000's pass report took minutes before (the IR diff was quadratic, and
  FuseOps took 67 s): 120-138 s now, mostly laying out the union graphs.
  --dashboard-only, load 12-14, median of 2, picking the model to its graph drawn (the
  pipeline of a model above 150 nodes waits for the Passes tab), then the Passes tab to its
  pass list: simplenet 1.29 s (pipeline at once) / 0.11 s; ResNet-18 0.97 / 4.0 s;
  ResNet-50 1.37 / 8.0 s; BERT-base 3.21 / 13.2 s (before: explore() 10-19 s, plus the
  model); flat5000 5.96 / 22.1 s (before: explore() 197 s).
  In Python (load 13): BERT-base's weights 4.2-6.9 s -> 3.0 s (page faults of 340 MB
  dominate on this host), explore(bert_base) 8.2-13 s -> 1.0 s, explore(flat5000) 197 s ->
  4.0 s; the pipeline of flat5000 12.1 s -> 4.7 s (FuseOps 8.4 -> 1.2 s).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from irlab.relay.testing import resnet, simplenet

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic", "--no-first-run"]


def _once(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _median(fn, repeat):
    times = []
    result = None
    for _ in range(repeat):
        seconds, result = _once(fn)
        times.append(seconds)
    return statistics.median(times), result


def _ms(seconds) -> str:
    return f"{seconds * 1e3:8.1f} ms"


def _mb(size) -> str:
    return f"{size / 1e6:6.2f} MB"


def bench_draw(repeat):
    """Per model, weights folded and drawn: nodes, graph building, Graphviz layout (the JSON
    the widgets draw from) and the size of Graphviz's own SVG."""
    from irlab.relay.testing import MODELS
    from irlab.relay.transform import InferType
    from irlab.viz import build_relay_graph, render_svg
    from irlab.widgets.layout import layout_payload

    print(f"\nTime to draw, median of {repeat} (weights folded / drawn as nodes)")
    for name in ("simplenet", "resnet18", "resnet50"):
        mod, params = MODELS[name]()
        typed = InferType()(mod)
        for fold in (True, False):
            t_graph, graph = _median(
                lambda f=fold: build_relay_graph(typed, params, fold_weights=f), repeat)
            t_layout, _ = _median(lambda g=graph: layout_payload(g), repeat)
            svg = render_svg(graph, timeout=120)
            label = "folded" if fold else "as nodes"
            print(f"  {name:10s} {label:9s} {graph.number_of_nodes():5d} nodes "
                  f"{graph.number_of_edges():5d} edges  graph {_ms(t_graph)}  "
                  f"layout {_ms(t_layout)}  SVG {_mb(len(svg.encode()))}")


def bench_graph(mod, params, repeat):
    """ResNet-50's graph: each stage of a GraphView's first render, then the whole."""
    from irlab.relay.transform import InferType
    from irlab.viz import build_relay_graph, layout_engine
    from irlab.widgets import GraphView
    from irlab.widgets.layout import layout_payload

    print(f"\nResNet-50 graph (ImageNet shapes), median of {repeat}; "
          f"layout engine: {layout_engine() or 'none (layered fallback)'}")
    t_infer, typed = _median(lambda: InferType()(mod), repeat)
    t_graph, graph = _median(lambda: build_relay_graph(typed, params), repeat)
    t_layout, payload = _median(lambda: layout_payload(graph), repeat)
    t_view, view = _median(lambda: GraphView(mod, params=params), repeat)
    size = len(json.dumps(view.graph))
    print(f"  {graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges")
    print(f"  type inference            {_ms(t_infer)}")
    print(f"  networkx graph            {_ms(t_graph)}")
    print(f"  layout + payload          {_ms(t_layout)}   ({_mb(size)} of JSON to the browser)")
    print(f"  GraphView(mod) in total   {_ms(t_view)}")
    if payload.get("warning"):
        print(f"  note: {payload['warning']}")
    bench_groups(view)
    return view


def bench_groups(view):
    """Layer groups (issue 21): what the graph view draws at open, and the Python side of
    expanding one stage (a new layout) and of revealing a node hidden two groups deep."""
    groups = [n for n in view.graph["nodes"] if n["kind"] == "cluster"]
    stages = [n["id"] for n in groups]
    print(f"  drawn at open: {len(view.graph['nodes'])} nodes ({len(groups)} collapsed "
          f"groups: {', '.join(n['title'] for n in groups)})")
    stage = next(i for i in stages if i.endswith("stage3"))
    t_expand, _ = _once(lambda: view.expand(stage))
    print(f"  expand stage3 (layout)    {_ms(t_expand)}   -> {len(view.graph['nodes'])} nodes")
    view.collapse_all()
    full = view._full
    conv = next(n for n, d in full.nodes(data=True) if d.get("title") == "nn.conv2d" and
                "stage4_unit3" in str(d.get("cluster")))
    t_reveal, _ = _once(lambda: view.reveal(conv))
    print(f"  reveal a stage4_unit3 conv {_ms(t_reveal)}   -> {len(view.graph['nodes'])} nodes")
    view.collapse_all()


def bench_stepper_unfolded(mod, params):
    """The PassStepper's first render with every constant drawn as a node (before issue 21)."""
    from irlab.widgets import PassStepper

    t_first, stepper = _once(lambda: PassStepper(mod, params=params, fold_weights=False))
    trace = stepper.trace
    sizes = [trace.graph(i).number_of_nodes() for i in range(len(trace.steps))]
    print(f"\nPassStepper on ResNet-50, constants drawn as nodes (fold_weights=False): "
          f"first render {_ms(t_first).strip()}; biggest graph {max(sizes)} nodes")


def bench_stepper(mod, params, repeat):
    """Step switches in a PassStepper over relay.optimize's pipeline: to the biggest graph
    (SimplifyInference turns each batch_norm into several ops: ~1,000 nodes) and its
    neighbours, the first time (layout on demand) and again (cached)."""
    from irlab.widgets import PassStepper

    t_first, stepper = _once(lambda: PassStepper(mod, params=params))
    trace = stepper.trace
    shown = stepper.step  # laid out by the first render already
    sizes = {i: trace.graph(i).number_of_nodes() for i, s in enumerate(trace.steps)
             if i == 0 or s.changed}
    big = max(sizes, key=sizes.get)
    targets = [i for i in (big, big + 1, big - 1) if 0 <= i < len(trace.steps)]
    union = len(stepper.data.union(big))
    print(f"\nPassStepper on ResNet-50: {len(trace.steps) - 1} pass runs; "
          f"first render {_ms(t_first).strip()} (pipeline {trace.seconds * 1e3:.0f} ms)")
    print(f"  biggest graph: step {big} ({trace.steps[big].name}), {sizes[big]} nodes; "
          f"its before/after union {union} nodes")
    cold = {}
    for i in targets:
        cold[i], _ = _once(lambda i=i: setattr(stepper, "step", i))
    warm = {i: [] for i in targets}
    for _ in range(repeat):
        for i in targets:
            seconds, _ = _once(lambda i=i: setattr(stepper, "step", i))
            warm[i].append(seconds)
    for i in targets:
        first = "  (shown first)" if i == shown else f"first {_ms(cold[i])}"
        print(f"  switch to step {i:3d} {trace.steps[i].name:18s} {first:>16s}   "
              f"again {_ms(statistics.median(warm[i]))} (median)")
    stepper.step = big
    print(f"  message for one step: {_mb(len(json.dumps(stepper.current)))}")
    t_prepare, _ = _once(stepper.prepare)
    print(f"  prepare() (lay out every step up front) {_ms(t_prepare)}")
    return stepper, big, targets


def bench_export(view, stepper, out_dir: Path):
    from irlab.cli import main as cli

    from irlab.widgets import export_html

    small, small_params = simplenet.get_workload(image_shape=(3, 32, 32))
    files = {
        "graph": export_html(view, out_dir / "resnet50_graph.html"),
        "stepper": export_html(stepper, out_dir / "resnet50_passes.html"),
        "simplenet": export_html(small, out_dir / "simplenet_passes.html", params=small_params),
    }
    t_report, _ = _once(lambda: cli(["report", "resnet50", "-o",
                                     str(out_dir / "resnet50_report.html")]))
    files["report"] = out_dir / "resnet50_report.html"
    print(f"\nExported HTML (one self-contained file each); irlab report resnet50 took "
          f"{t_report:.1f} s")
    labels = {"graph": "ResNet-50 graph", "stepper": "ResNet-50 pass report",
              "simplenet": "simplenet pass report",
              "report": "irlab report resnet50"}
    for key, path in files.items():
        print(f"  {labels[key]:24s} {_mb(path.stat().st_size)}")
    return files


_CLICK = """async (sel) => {
  const el = document.querySelector(sel);
  const t0 = performance.now();
  el.click();
  const t1 = performance.now();
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return [t1 - t0, performance.now() - t0];
}"""


def bench_browser(files, view, big, targets, repeat):
    """The exported pages in Chromium: graph drawn after load; step switches in the page."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("\nBrowser: skipped (pip install playwright)")
        return
    if not os.access(CHROMIUM, os.X_OK):
        print(f"\nBrowser: skipped ({CHROMIUM} missing: apt-get install chromium)")
        return
    nodes = len(view.graph["nodes"])
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        print(f"\nBrowser: Chromium {browser.version}, median of {repeat}")
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        loads = []
        for _ in range(repeat):
            start = time.perf_counter()
            page.goto(files["graph"].resolve().as_uri())
            page.wait_for_function(
                f"document.querySelectorAll('[data-testid=graph-node]').length >= {nodes}")
            loads.append(time.perf_counter() - start)
        print(f"  ResNet-50 graph page: load to {nodes} nodes drawn "
              f"{_ms(statistics.median(loads))}")
        page.goto(files["stepper"].resolve().as_uri())
        page.wait_for_selector("[data-testid=pass-item]")
        for view_name in ("side", "graphs"):
            page.click(f"[data-testid=view-{view_name}]")
            sync, painted = {i: [] for i in targets}, {i: [] for i in targets}
            for _ in range(repeat + 1):  # the first round builds each drawing once
                for i in targets:
                    a, b = page.evaluate(_CLICK, f"[data-testid=pass-item][data-step='{i}']")
                    sync[i].append(a)
                    painted[i].append(b)
            for i in targets:
                first, again = painted[i][0], statistics.median(painted[i][1:])
                script = statistics.median(sync[i][1:])
                print(f"  {view_name:6s} view, switch to step {i:3d}: first {first:7.1f} ms, "
                      f"again {again:7.1f} ms (max {max(painted[i][1:]):7.1f}) to the next "
                      f"paint ({script:.1f} ms of it script)")
        browser.close()


_HEAP = """async () => {
  if (window.gc) window.gc();
  return performance.memory ? performance.memory.usedJSHeapSize : 0;
}"""
_DRAWN = """() => {
  const paint = document.querySelector('[data-testid=graph-paint]');
  return document.querySelectorAll('[data-testid=graph-node]').length > 0 ||
    (paint && paint.style.display !== 'none' && paint.width > 0);
}"""


def _scale_models():
    """The models of the side-by-side figures: name -> (mod, params)."""
    from irlab.relay.testing import MODELS, synthetic

    models = {name: MODELS[name] for name in ("simplenet", "resnet18", "resnet50", "bert_base")}
    models["flat5000"] = lambda: synthetic.get_workload(num_nodes=5000)
    return models


def _first_group(view):
    return next((n["id"] for n in view.graph["nodes"] if n["kind"] == "cluster"), None)


def bench_scale(out_dir: Path, browser: bool, repeat: int):
    """Side by side (issue 21): per model, the Python side of a GraphView (graph, grouping,
    layout), a group expanded, the exported page loaded to a drawn graph in Chromium and
    the browser's JS heap then; for BERT-base and flat5000 all groups expanded too."""
    from irlab.widgets import GraphView, export_html

    print(f"\nAt scale (issue 21), load average {os.getloadavg()[0]:.1f}, median of {repeat}")
    rows = []
    for name, build in _scale_models().items():
        mod, params = build()
        t_view, view = _median(lambda: GraphView(mod, params=params), repeat)
        row = {"name": name, "view": t_view, "open": len(view.graph["nodes"]),
               "engine": view.graph["engine"], "warning": view.graph["warning"]}
        group = _first_group(view)
        if group:
            row["expand"], _ = _once(lambda: view.expand(group))
            view.collapse_all()
        pages = [("open", export_html(view, out_dir / f"{name}_open.html"))]
        if group:
            view.expand_all()
            t_all, _ = _once(lambda: view._redraw())
            row["all"] = len(view.graph["nodes"])
            row["all_engine"] = view.graph["engine"] + (" (warning!)" if view.graph["warning"]
                                                        else "")
            pages.append(("all", export_html(view, out_dir / f"{name}_all.html")))
        row["pages"] = pages
        rows.append(row)
    if browser:
        _scale_browser(rows, repeat)
    for row in rows:
        expand = _ms(row["expand"]) if "expand" in row else "       -   "
        print(f"  {row['name']:10s} GraphView {_ms(row['view'])}  at open {row['open']:5d} "
              f"nodes ({row['engine']}{', WARNING ' + row['warning'] if row['warning'] else ''})"
              f"  expand a group {expand}")
        for label, _ in row["pages"]:
            drawn = row.get(f"load_{label}")
            nodes = row["open"] if label == "open" else row.get("all")
            engine = row["engine"] if label == "open" else row.get("all_engine")
            if drawn is None:
                print(f"      {label:4s} {nodes:5d} nodes ({engine})")
                continue
            print(f"      {label:4s} {nodes:5d} nodes ({engine}): page load to drawn "
                  f"{_ms(drawn)}, JS heap {_mb(row[f'heap_{label}'])}")


def _scale_browser(rows, repeat):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("  browser: skipped (pip install playwright)")
        return
    if not os.access(CHROMIUM, os.X_OK):
        print(f"  browser: skipped ({CHROMIUM} missing)")
        return
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS +
                                     ["--enable-precise-memory-info", "--js-flags=--expose-gc"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        for row in rows:
            for label, path in row["pages"]:
                loads = []
                for _ in range(repeat):
                    start = time.perf_counter()
                    page.goto(path.resolve().as_uri())
                    page.wait_for_function(_DRAWN, timeout=120_000)
                    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => "
                                  "setTimeout(r, 0)))")
                    loads.append(time.perf_counter() - start)
                row[f"load_{label}"] = statistics.median(loads)
                row[f"heap_{label}"] = page.evaluate(_HEAP)
        browser.close()


def bench_flat_stepper(out_dir: Path, browser: bool, repeat: int):
    """Step switches at 5,000 nodes: the flat graph plus one constant expression, through
    FoldConstant (two steps, both ~5,000 nodes), exported; switches in Chromium's side view."""
    from irlab import relay
    from irlab.relay.testing import synthetic
    from irlab.widgets import export_html

    func = synthetic.get_net(num_nodes=5000)
    folded = relay.add(relay.const(1.0), relay.const(2.0))
    func = relay.Function(func.params, relay.add(func.body, folded))
    t_export, path = _once(lambda: export_html(func, out_dir / "flat5000_passes.html",
                                               passes=[relay.transform.FoldConstant()]))
    print(f"\nflat5000 through FoldConstant: exported in {t_export:.1f} s, "
          f"{_mb(path.stat().st_size)}")
    if not browser or not os.access(CHROMIUM, os.X_OK):
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        start = time.perf_counter()
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("[data-testid=pass-item]")
        print(f"  page load to the pass list {_ms(time.perf_counter() - start)}")
        steps = page.evaluate("() => [...document.querySelectorAll("
                              "'[data-testid=pass-item]')].map((e) => e.dataset.step)")
        for view_name in ("side", "graphs"):
            page.click(f"[data-testid=view-{view_name}]")
            times = []
            for _ in range(repeat + 1):
                for i in steps:
                    _, painted = page.evaluate(
                        _CLICK, f"[data-testid=pass-item][data-step='{i}']")
                    times.append(painted)
            print(f"  {view_name:6s} view step switch: first {times[0]:7.1f} ms, then median "
                  f"{statistics.median(times[len(steps):]):7.1f} ms (max "
                  f"{max(times[len(steps):]):7.1f})")
        browser.close()


def bench_side_switch(out_dir: Path, browser: bool, repeat: int):
    """Pass step switches in the side view (the IR text diff), per model: the exported pass
    report of relay.optimize's pipeline, switched in Chromium between the input (every line
    of the program shown: "no change") and each step that changed the program."""
    from irlab.widgets import export_html

    print(f"\nSide view step switch (issue 21), load average {os.getloadavg()[0]:.1f}, "
          f"median of {repeat} rounds")
    pages = []
    for name, build in _scale_models().items():
        mod, params = build()
        t_export, path = _once(lambda: export_html(mod, out_dir / f"{name}_passes.html",
                                                   params=params))
        app = json.loads(_page_data(path))["apps"][0]
        lines = max(len(text.split("\n")) for text in app["texts"].values())
        pages.append((name, path, lines, t_export))
    if not browser or not os.access(CHROMIUM, os.X_OK):
        for name, path, lines, t_export in pages:
            print(f"  {name:10s} {lines:5d} lines, exported in {t_export:.1f} s "
                  f"({_mb(path.stat().st_size)})")
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = chromium.new_page(viewport={"width": 1600, "height": 1000})
        for name, path, lines, t_export in pages:
            page.goto(path.resolve().as_uri())
            page.wait_for_selector("[data-testid=pass-item]")
            page.click("[data-testid=view-side]")
            steps = page.evaluate("() => [...document.querySelectorAll("
                                  "'[data-testid=pass-item][data-changed=true]')]"
                                  ".map((e) => e.dataset.step)")
            steps = ["0", *steps]
            times, scripts = [], []
            for _ in range(repeat + 1):  # the first round draws each diff once
                for i in steps:
                    script, painted = page.evaluate(
                        _CLICK, f"[data-testid=pass-item][data-step='{i}']")
                    times.append(painted)
                    scripts.append(script)
            first, again = times[:len(steps)], times[len(steps):]
            print(f"  {name:10s} {lines:5d} lines, {len(steps)} steps: first {max(first):7.1f}"
                  f" ms (slowest; script {max(scripts[:len(steps)]):.1f}), then median "
                  f"{statistics.median(again):6.1f} ms (script "
                  f"{statistics.median(scripts[len(steps):]):.1f}), max {max(again):6.1f} ms "
                  f"to the next paint (exported in {t_export:.1f} s)")
        chromium.close()


def _page_data(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index('id="irlab-data">') + len('id="irlab-data">')
    return text[start:text.index("</script>", start)]


# The dashboard (notebooks/explorer.ipynb) with the 5,000-node graph among its models.
_DASHBOARD_MODELS = ("import irlab.relay.testing as _testing\n"
                     "from irlab.relay.testing import synthetic as _synthetic\n"
                     "_testing.MODELS['flat5000'] = "
                     "lambda: _synthetic.get_workload(num_nodes=5000)\n")


def _dashboard(root: Path) -> Path:
    """A copy of the dashboard whose first code cell adds flat5000 to MODELS."""
    import nbformat

    repo = Path(__file__).resolve().parents[1]
    nb = nbformat.read(repo / "notebooks" / "explorer.ipynb", as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.source = _DASHBOARD_MODELS + code.source
    path = root / "dashboard.ipynb"
    nbformat.write(nb, path)
    return path


def _start_voila(root: Path):
    """Voila serving ``root`` on a free local port (irlab's template): (process, URL)."""
    import socket
    import subprocess
    import sys

    from irlab.widgets.assets import JUPYTER_DATA, VOILA_TEMPLATE

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = dict(os.environ)
    repo = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (repo, env.get("PYTHONPATH")) if p)
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(JUPYTER_DATA),
                                                      env.get("JUPYTER_PATH")) if p)
    proc = subprocess.Popen(
        [sys.executable, "-m", "voila", str(root), "--no-browser", "--Voila.ip=127.0.0.1",
         f"--port={port}", f"--template={VOILA_TEMPLATE}"],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    for line in proc.stdout:
        if "running at" in line.lower():
            break
    return proc, f"http://127.0.0.1:{port}"


# A graph view other than the ones marked old, drawn (SVG nodes or the painted canvas).
_NEW_DRAWN = """() => [...document.querySelectorAll('[data-testid=graph-view]')]
  .filter((v) => !v.dataset.old).some((v) => {
    const paint = v.querySelector('[data-testid=graph-paint]');
    return v.querySelectorAll('[data-testid=graph-node]').length > 0 ||
      (paint && paint.style.display !== 'none' && paint.width > 0);
  })"""


def bench_dashboard(repeat: int):
    """Picking a model in the Voila dashboard (notebooks/explorer.ipynb) to its graph drawn
    in Chromium: building the model, explore() (the pipeline of a big model waits for the
    Passes tab), sending the graph, drawing it. Then opening the Passes tab: the pipeline
    runs, to the pass list drawn."""
    import signal

    if not os.access(CHROMIUM, os.X_OK):
        print("\nDashboard: skipped (no Chromium)")
        return
    from playwright.sync_api import sync_playwright

    print(f"\nDashboard (Voila + Chromium), load average {os.getloadavg()[0]:.1f}, "
          f"median of {repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        _dashboard(Path(tmp))
        proc, url = _start_voila(Path(tmp))
        try:
            with sync_playwright() as pw:
                chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = chromium.new_page(viewport={"width": 1600, "height": 1000})
                page.set_default_timeout(600_000)
                page.goto(f"{url}/voila/render/dashboard.ipynb")
                page.wait_for_function(_NEW_DRAWN)
                names = ["resnet18", "resnet50", "bert_base", "flat5000", "simplenet"]
                picked = {n: [] for n in names}
                passes = {}
                for _ in range(repeat):
                    for name in names:
                        page.evaluate("() => document.querySelectorAll("
                                      "'[data-testid=graph-view]').forEach("
                                      "(v) => { v.dataset.old = '1'; })")
                        start = time.perf_counter()
                        page.select_option(".widget-dropdown select", name)
                        page.wait_for_function(_NEW_DRAWN)
                        picked[name].append(time.perf_counter() - start)
                        if name not in passes:
                            page.wait_for_selector(f".widget-label:has-text('{name}:')")
                            start = time.perf_counter()
                            page.locator(".irlab-explorer .lm-TabBar-tab, "
                                         ".irlab-explorer .p-TabBar-tab").nth(1).click()
                            page.wait_for_selector("[data-testid=pass-stepper] "
                                                   "[data-testid=pass-item]")
                            passes[name] = time.perf_counter() - start
                chromium.close()
        finally:
            proc.terminate()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for name in names:
        print(f"  {name:10s} picked to graph drawn {_ms(statistics.median(picked[name]))} "
              f"(max {_ms(max(picked[name])).strip()}); Passes tab opened to the pass list "
              f"{_ms(passes[name])}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--unfolded", action="store_true",
                        help="also time the PassStepper with constants drawn as nodes (slow)")
    parser.add_argument("--out", help="keep the exported HTML files in this directory")
    parser.add_argument("--scale-only", action="store_true",
                        help="only the side-by-side figures at scale (BERT-base, flat5000)")
    parser.add_argument("--switch-only", action="store_true",
                        help="only the side view's step switch per model")
    parser.add_argument("--dashboard-only", action="store_true",
                        help="only picking each model in the Voila dashboard")
    args = parser.parse_args()
    print(f"bench_explorer: {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{v:.1f}' for v in os.getloadavg())}")
    if args.dashboard_only:
        bench_dashboard(args.repeat)
        return
    if args.switch_only:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(args.out) if args.out else Path(tmp)
            out.mkdir(parents=True, exist_ok=True)
            bench_side_switch(out, not args.no_browser, args.repeat)
        return
    if args.scale_only:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(args.out) if args.out else Path(tmp)
            out.mkdir(parents=True, exist_ok=True)
            bench_scale(out, not args.no_browser, args.repeat)
            bench_flat_stepper(out, not args.no_browser, args.repeat)
            bench_side_switch(out, not args.no_browser, args.repeat)
        if not args.no_browser:
            bench_dashboard(args.repeat)
        return
    bench_draw(args.repeat)
    mod, params = resnet.get_workload(num_layers=50)
    view = bench_graph(mod, params, args.repeat)
    if args.unfolded:
        bench_stepper_unfolded(mod, params)
    stepper, big, targets = bench_stepper(mod, params, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out) if args.out else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        files = bench_export(view, stepper, out)
        if not args.no_browser:
            bench_browser(files, view, big, targets, args.repeat)


if __name__ == "__main__":
    main()
