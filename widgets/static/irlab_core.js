// irlab_core.js: drawing and DOM helpers shared by the GraphView and PassStepper modules and
// by the static HTML export. Plain browser JavaScript with no imports: Python puts this file in
// front of each widget's module (anywidget loads one module per widget, relative imports do not
// resolve there).
//
// Safety rule: every string that comes from a model (names, attrs, types, IR text) reaches the
// DOM through textContent, Text nodes or setAttribute; nothing is ever assigned as HTML.

// The SVG namespace, spelled in pieces so the exported page holds no URL at all (offline pages
// are checked by grepping for them).
const IRLAB_SVG_NS = ["http:", "", "www.w3.org", "2000", "svg"].join("/");
let irlabUid = 0;
const IRLAB_TEXT_ZOOM = 0.4;  // below this scale, node labels are not drawn
// The smallest zoom: a deep 5,000-node graph (88,000 pt tall) still fits in a pane.
const IRLAB_MIN_ZOOM = 0.005;

/** An HTML element: props set attributes (`text` -> textContent, `on` -> listeners). */
function h(tag, props, ...children) {
  const node = document.createElement(tag);
  setProps(node, props);
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** An SVG element with attributes. */
function s(tag, attrs) {
  const node = document.createElementNS(IRLAB_SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) node.setAttribute(k, String(v));
  }
  return node;
}

const IRLAB_PROPERTIES = new Set(["value", "checked", "disabled", "selected", "open",
  "tabIndex", "min", "max", "step", "title", "placeholder", "type"]);

function setProps(node, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined) continue;
    if (k === "text") node.textContent = String(v);
    else if (k === "class") node.className = v;
    else if (k === "on") for (const [evt, fn] of Object.entries(v)) node.addEventListener(evt, fn);
    else if (k === "style") Object.assign(node.style, v);
    else if (IRLAB_PROPERTIES.has(k)) node[k] = v;
    else node.setAttribute(k, String(v));
  }
}

/** A token of the CSS class names built from model values (kind, state): letters only. */
function cssToken(value) {
  return String(value || "").toLowerCase().replace(/[^a-z0-9_-]/g, "");
}

function clamp(v, lo, hi) { return Math.max(lo, Math.min(hi, v)); }

function fmtMs(ms) {
  if (ms === null || ms === undefined) return "";
  if (ms >= 1000) return (ms / 1000).toFixed(2) + " s";
  if (ms >= 10) return ms.toFixed(0) + " ms";
  return ms.toFixed(2) + " ms";
}

function fmtErr(e) {
  if (e === null || e === undefined) return "";
  if (e < 0) return "∞";
  if (e === 0) return "0";
  return e < 1e-3 || e >= 1e4 ? e.toExponential(1) : e.toPrecision(2);
}

// ------------------------------------------------------------------------------------------------
// Search and neighbourhood: the same rules as widgets/graph_ops.py.
const SEARCH_FIELDS = ["title", "name", "op"];

function matchNodes(layout, query) {
  const q = String(query || "").trim().toLowerCase();
  if (!q || !layout) return [];
  // a node is found by its folded weights' names too (graph_ops.search_nodes does the same;
  // a collapsed group's weights are its hidden nodes')
  return layout.nodes.filter((n) => n.id.toLowerCase() === q ||
    SEARCH_FIELDS.some((f) => String(n[f] || "").toLowerCase().includes(q)) ||
    (n.kind !== "cluster" &&
     (n.folded || []).some((f) => String(f.name || "").toLowerCase().includes(q))))
    .map((n) => n.id);
}

function neighbourhood(layout, node, hops) {
  const adj = new Map();
  for (const e of layout.edges) {
    if (!adj.has(e.s)) adj.set(e.s, []);
    if (!adj.has(e.t)) adj.set(e.t, []);
    adj.get(e.s).push(e.t);
    adj.get(e.t).push(e.s);
  }
  const seen = new Set([node]);
  let frontier = [node];
  for (let k = 0; k < hops; k++) {
    const next = [];
    for (const id of frontier) {
      for (const o of adj.get(id) || []) if (!seen.has(o)) { seen.add(o); next.push(o); }
    }
    frontier = next;
  }
  return seen;
}

// ------------------------------------------------------------------------------------------------
/** Pan (drag) and zoom (wheel) shared by one or more SVG panes (before/after stay aligned). */
class PanZoom {
  constructor() {
    this.k = 1; this.x = 0; this.y = 0;
    this.panes = [];
    this.listeners = [];  // called after every change of the transform (culling panes)
    this.moved = false;
  }

  attach(svg, group) {
    this.panes.push({ svg, group });
    svg.addEventListener("wheel", (e) => {
      e.preventDefault();
      const r = svg.getBoundingClientRect();
      this.zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.0015));
    }, { passive: false });
    let start = null;
    svg.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      start = { px: e.clientX, py: e.clientY, x: this.x, y: this.y };
      this.moved = false;
    });
    svg.addEventListener("pointermove", (e) => {
      if (!start) return;
      const dx = e.clientX - start.px, dy = e.clientY - start.py;
      if (!this.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!this.moved) svg.setPointerCapture(e.pointerId);
      this.moved = true;
      this.x = start.x + dx; this.y = start.y + dy;
      this.apply();
    });
    const end = () => { start = null; };
    svg.addEventListener("pointerup", end);
    svg.addEventListener("pointercancel", end);
    this.apply();
  }

  apply() {
    const t = `translate(${this.x.toFixed(1)},${this.y.toFixed(1)}) scale(${this.k.toFixed(4)})`;
    // Zoomed far out, labels are unreadable and laying out their text is most of the cost of
    // showing a big graph: draw boxes only until the user zooms in.
    const far = this.k < IRLAB_TEXT_ZOOM;
    for (const { svg, group } of this.panes) {
      group.setAttribute("transform", t);
      if (svg.classList.contains("irlab-far") !== far) svg.classList.toggle("irlab-far", far);
    }
    for (const fn of this.listeners) fn();
  }

  zoomAt(px, py, factor) {
    const k = clamp(this.k * factor, IRLAB_MIN_ZOOM, 8);
    const f = k / this.k;
    this.x = px - (px - this.x) * f;
    this.y = py - (py - this.y) * f;
    this.k = k;
    this.apply();
  }

  fit(box, width, height) {
    if (!box || width <= 0 || height <= 0) return false;
    const pad = 16;
    this.k = clamp(Math.min((width - pad) / Math.max(box.w, 1), (height - pad) / Math.max(box.h, 1),
      1.5), IRLAB_MIN_ZOOM, 8);
    this.x = (width - box.w * this.k) / 2 - box.x * this.k;
    this.y = (height - box.h * this.k) / 2 - box.y * this.k;
    this.apply();
    return true;
  }

  center(x, y, width, height) {
    if (this.k < 0.6) this.k = 0.9;
    this.x = width / 2 - x * this.k;
    this.y = height / 2 - y * this.k;
    this.apply();
  }
}

// ------------------------------------------------------------------------------------------------
/** One SVG pane drawing laid-out graphs (payloads of widgets/layout.py).
 *  side: "a" hides added nodes (the before pane), "b" hides removed ones, null shows all.
 *  Built drawings are kept per layout key, so going back to a step costs no rebuilding. */
class GraphCanvas {
  constructor({ panzoom, side = null, onSelect = null, onCluster = null,
    testid = "graph-canvas", bigAbove = Infinity }) {
    this.panzoom = panzoom || new PanZoom();
    // Graphs of more than `bigAbove` nodes are drawn the cheap way (see BigDrawing): what the
    // browser styles, lays out and paints on a step switch no longer grows with the graph.
    this.bigAbove = bigAbove;
    this.marks = { selected: null, matches: null, current: null };
    this.refreshQueued = false;
    this.side = side;
    this.onSelect = onSelect;
    this.onCluster = onCluster;
    this.cache = new Map();
    this.layout = null;
    this.current = null;
    this.needsFit = true;
    this.visible = null;
    // Unique in the page: each widget's module has its own counter, and a marker id found
    // twice resolves to the first one (maybe in a hidden tab, drawing nothing).
    const uid = `irlab${Math.random().toString(36).slice(2, 8)}${++irlabUid}`;
    this.markers = { "": `${uid}-arrow`, added: `${uid}-arrow-added`,
      removed: `${uid}-arrow-removed` };
    this.el = h("div", { class: "irlab-canvas", "data-testid": testid });
    this.svg = s("svg", { class: "irlab-svg" + (side ? ` side-${side}` : ""),
      "data-testid": "graph-svg" });
    const defs = s("defs");
    for (const [state, id] of Object.entries(this.markers)) {
      const m = s("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
        markerHeight: 7, orient: "auto", class: `irlab-marker state-${state || "none"}` });
      m.append(s("path", { d: "M0 0L10 5L0 10z" }));
      defs.append(m);
    }
    this.viewport = s("g", { class: "irlab-viewport" });
    this.svg.append(defs, this.viewport);
    // The far-out drawing of graphs above IRLAB_CANVAS_ABOVE nodes (over the SVG, which
    // still takes the pointer: clicks are hit-tested against the layout).
    this.paint = h("canvas", { class: "irlab-paint", "data-testid": "graph-paint" });
    this.paint.style.display = "none";
    this.minimap = new Minimap(this);
    this.el.append(this.svg, this.paint, this.minimap.el);
    this.panzoom.attach(this.svg, this.viewport);
    this.panzoom.listeners.push(() => { this.queueRefresh(); this.minimap.queue(); });
    // Far out, a big drawing's nodes are parts of shared paths: its one tooltip follows the
    // pointer (the label of the node under it, as each node's own <title> says closer in).
    this.svg.addEventListener("pointermove", (e) => {
      const d = this.drawing;
      if (!d || !d.big || d.mode !== "far" || !d.liteTip || e.buttons) return;
      const n = this.data.get(this.hit(e.clientX, e.clientY));
      const tip = n ? (n.label || [n.title]).join("\n") : "";
      if (d.liteTip.textContent !== tip) d.liteTip.textContent = tip;
    });
    this.svg.addEventListener("click", (e) => this.click(e));
    this.svg.addEventListener("dblclick", (e) => this.click(e, true));
    // The pane's size comes from a ResizeObserver: reading clientWidth after the drawing
    // changed would force a synchronous layout of the whole SVG (hundreds of ms for big
    // graphs). A pane in a hidden tab has no size: it is fitted once it gets one.
    this.w = 0;
    this.h = 0;
    if (typeof ResizeObserver !== "undefined") {
      this.resize = new ResizeObserver((entries) => {
        const box = entries[entries.length - 1].contentRect;
        this.w = box.width;
        this.h = box.height;
        if (this.needsFit) this.fit(this.focusIds);
        else this.queueRefresh();
      });
      this.resize.observe(this.el);
    }
  }

  click(e, dbl = false) {
    if (this.panzoom.moved) { this.panzoom.moved = false; return; }
    let node = e.target.closest("[data-node-id]");
    if (!node && this.drawing && this.drawing.big) {
      const id = this.hit(e.clientX, e.clientY);
      if (id) node = { getAttribute: () => id };
    }
    // Only a cluster's label acts on the cluster: its box is where one starts dragging.
    const cluster = e.target.classList.contains("irlab-cluster-label") &&
      e.target.closest("[data-cluster-id]");
    if (node && this.onSelect) this.onSelect(node.getAttribute("data-node-id"), dbl);
    else if (cluster && this.onCluster) {
      this.onCluster(cluster.getAttribute("data-cluster-id"), dbl);
    }
  }

  /** Show `layout`; `focus`: ids to fit the view to when the drawing changes. */
  setLayout(layout, focus = null) {
    if (!layout) {
      this.viewport.replaceChildren();
      this.layout = null;
      this.drawing = null;
      this.current = null;
      this.paint.style.display = "none";
      this.minimap.setLayout(null);
      return;
    }
    const key = layout.key || "";
    let drawing = key ? this.cache.get(key) : null;
    if (!drawing) {
      drawing = layout.nodes.length > this.bigAbove ? new BigDrawing(this, layout)
        : this.build(layout);
    }
    if (key) {
      this.cache.delete(key);
      this.cache.set(key, drawing);
      while (this.cache.size > 12) this.cache.delete(this.cache.keys().next().value);
    }
    const sameSize = this.layout && this.layout.width === layout.width &&
      this.layout.height === layout.height;
    this.layout = layout;
    this.byId = drawing.byId;
    this.data = drawing.data;
    this.drawing = drawing;
    if (this.current !== drawing.root) {
      this.viewport.replaceChildren(drawing.root);
      this.current = drawing.root;
      this.paint.style.display = "none";  // until the new drawing paints there itself
      this.minimap.setLayout(layout);
      this.visible = null;
      if (drawing.big && drawing.visible) drawing.setVisible(null);
      // The union layout of a before/after pair keeps positions: keep the view as well,
      // unless there are changes to show.
      if (focus && focus.length) this.fit(focus);
      else if (!sameSize) this.fit();
      this.refresh();
    }
  }

  /** Big drawings follow the view: redraw them once per frame while panning or zooming. */
  queueRefresh() {
    if (!this.drawing || !this.drawing.big || this.refreshQueued) return;
    this.refreshQueued = true;
    requestAnimationFrame(() => { this.refreshQueued = false; this.refresh(); });
  }

  refresh() {
    if (!this.drawing || !this.drawing.big) return;
    const [w, hgt] = this.size();
    const pz = this.panzoom;
    this.drawing.update(pz.k, { x0: -pz.x / pz.k, y0: -pz.y / pz.k,
      x1: (w - pz.x) / pz.k, y1: (hgt - pz.y) / pz.k }, w > 0 && hgt > 0);
  }

  /** The id of the node under client point (cx, cy) in a big drawing, or "". */
  hit(cx, cy) {
    const r = this.svg.getBoundingClientRect();
    const pz = this.panzoom;
    const x = (cx - r.left - pz.x) / pz.k, y = (cy - r.top - pz.y) / pz.k;
    const slack = 3 / pz.k;  // tiny boxes far out: a few pixels around them count
    let best = "", bestD = Infinity;
    for (const n of this.layout.nodes) {
      if (!this.drawing.shows(n)) continue;
      const dx = Math.abs(x - n.x) - n.w / 2, dy = Math.abs(y - n.y) - n.h / 2;
      if (dx > slack || dy > slack) continue;
      const d = Math.max(dx, 0) + Math.max(dy, 0);
      if (d < bestD) { bestD = d; best = n.id; }
    }
    return best;
  }

  build(layout) {
    const root = s("g");
    const gc = s("g", { class: "irlab-clusters" });
    const ge = s("g", { class: "irlab-edges" });
    const gn = s("g", { class: "irlab-nodes" });
    const byId = new Map(), data = new Map(), clusterEls = new Map();
    for (const c of layout.clusters || []) {
      const g = makeClusterEl(c);
      gc.append(g);
      clusterEls.set(c.id, g);
    }
    for (const e of layout.edges) if (e.d) ge.append(makeEdgeEl(e, this.markers));
    for (const n of layout.nodes) {
      const g = makeNodeEl(n);
      gn.append(g);
      byId.set(n.id, g);
      data.set(n.id, n);
    }
    root.append(gc, ge, gn);
    return { root, byId, data, clusterEls, layout };
  }

  size() {
    return this.resize ? [this.w, this.h] : [this.el.clientWidth, this.el.clientHeight];
  }

  /** Fit the view to the visible nodes, or to `ids` when given (e.g. the nodes a pass
   *  changed), without zooming in past 1:1 then. */
  fit(ids = null) {
    if (!this.layout) return;
    const [w, hgt] = this.size();
    let box = { x: 0, y: 0, w: this.layout.width, h: this.layout.height };
    if (this.visible) box = this.boxOf(this.visible) || box;
    this.focusIds = ids;
    if (ids && ids.length) {
      const focus = this.boxOf(ids);
      if (focus) {
        // at least 300 pt around the changes, so their neighbours show too
        const grow = (a, len) => Math.max(0, (300 - len) / 2);
        const gx = grow(focus.x, focus.w), gy = grow(focus.y, focus.h);
        box = { x: focus.x - gx, y: focus.y - gy, w: focus.w + 2 * gx, h: focus.h + 2 * gy };
      }
    }
    this.needsFit = !this.panzoom.fit(box, w, hgt);
  }

  boxOf(ids) {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const id of ids) {
      const n = this.data.get(id);
      if (!n) continue;
      x0 = Math.min(x0, n.x - n.w / 2); y0 = Math.min(y0, n.y - n.h / 2);
      x1 = Math.max(x1, n.x + n.w / 2); y1 = Math.max(y1, n.y + n.h / 2);
    }
    return x0 === Infinity ? null : { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
  }

  centerOn(id) {
    const n = this.data && this.data.get(id);
    if (!n) return;
    const [w, hgt] = this.size();
    if (w > 0) this.panzoom.center(n.x, n.y, w, hgt);
  }

  /** Marks: `selected` id, `matches` (Set), `current` match id. */
  mark({ selected = null, matches = null, current = null } = {}) {
    this.marks = { selected, matches, current };
    if (this.drawing && this.drawing.big) { this.drawing.mark(this.marks); return; }
    if (!this.byId) return;
    for (const [id, g] of this.byId) {
      g.classList.toggle("selected", id === selected);
      g.classList.toggle("match", !!matches && matches.has(id));
      g.classList.toggle("match-current", id === current);
    }
  }

  /** Show only the nodes of `ids` (a Set) and the edges between them; null shows all. */
  showOnly(ids) {
    if (!this.byId) return;
    this.visible = ids;
    if (this.drawing && this.drawing.big) {
      this.drawing.setVisible(ids);
      this.fit();
      this.refresh();
      return;
    }
    for (const [id, g] of this.byId) g.classList.toggle("out", !!ids && !ids.has(id));
    for (const p of this.current.querySelectorAll(".irlab-edge")) {
      p.classList.toggle("out", !!ids && !(ids.has(p.getAttribute("data-s")) &&
        ids.has(p.getAttribute("data-t"))));
    }
    const inCluster = new Set();
    for (const id of ids || []) {
      const n = this.data.get(id);
      if (n && n.cluster) inCluster.add(n.cluster);
    }
    for (const g of this.current.querySelectorAll(".irlab-cluster")) {
      g.classList.toggle("out", !!ids && !inCluster.has(g.getAttribute("data-cluster-id")));
    }
    this.fit();
  }

  has(id) { return !!(this.data && this.data.get(id)); }
}

/** The SVG group of one laid-out node (shape, label lines as text, tooltip). */
function makeNodeEl(n) {
  const state = cssToken(n.state);
  const cls = `irlab-node kind-${cssToken(n.kind)}${state ? " state-" + state : ""}`;
  const g = s("g", { class: cls,
    transform: `translate(${n.x},${n.y})`, "data-testid": "graph-node", "data-node-id": n.id,
    "data-kind": cssToken(n.kind), "data-state": state || "same" });
  if (n.shape === "ellipse") g.append(s("ellipse", { rx: n.w / 2, ry: n.h / 2 }));
  else if (n.shape === "diamond") {
    g.append(s("polygon", { points: `0,${-n.h / 2} ${n.w / 2},0 0,${n.h / 2} ${-n.w / 2},0` }));
  } else g.append(s("rect", { x: -n.w / 2, y: -n.h / 2, width: n.w, height: n.h, rx: 4 }));
  if (n.compiler) {  // a collapsed external (BYOC) region, in its compiler's colours
    g.setAttribute("data-compiler", n.compiler);
    compilerStyle(g.firstChild, n);
  }
  const text = s("text", { "text-anchor": "middle" });
  const lines = n.label || [n.title];
  lines.forEach((line, i) => {
    const span = s("tspan", { x: 0, y: (i - (lines.length - 1) / 2) * 12 + 3.5,
      class: i === 0 ? "irlab-label-title" : "irlab-label-rest" });
    span.textContent = line;
    text.append(span);
  });
  const tip = s("title");
  tip.textContent = lines.join("\n");
  g.append(text, tip);
  return g;
}

/** Fill and stroke of an external compiler's region (colours from Python: CSS-safe hex). */
function compilerStyle(shape, spec) {
  const hex = (v) => (/^#[0-9a-fA-F]{3,8}$/.test(String(v)) ? v : null);
  const fill = hex(spec.fill), stroke = hex(spec.stroke);
  if (fill) shape.style.fill = fill;
  if (stroke) { shape.style.stroke = stroke; shape.style.strokeWidth = "2px"; }
}

/** The SVG group of one cluster (a cluster only one side has, as FuseOps creates them, is
 *  hidden in the other pane by its state class). */
function makeClusterEl(c) {
  const state = c.state ? ` state-${cssToken(c.state)}` : "";
  const g = s("g", { class: `irlab-cluster kind-${cssToken(c.kind)}${state}`,
    "data-testid": "graph-cluster", "data-cluster-id": c.id });
  const box = s("rect", { x: c.x, y: c.y, width: c.w, height: c.h, rx: 6 });
  g.append(box);
  if (c.compiler) {  // an external (BYOC) region, in its compiler's colours
    g.setAttribute("data-compiler", c.compiler);
    compilerStyle(box, c);
  }
  const t = s("text", { x: c.lx, y: c.ly, class: "irlab-cluster-label",
    "text-anchor": "middle" });
  t.textContent = c.label;
  const tip = s("title");
  tip.textContent = `${c.label} (click to collapse)`;
  g.append(t, tip);
  return g;
}

function makeEdgeEl(e, markers) {
  const state = cssToken(e.state);
  return s("path", { d: e.d, class: `irlab-edge${state ? " state-" + state : ""}`,
    "data-s": e.s, "data-t": e.t, "marker-end": `url(#${markers[state] || markers[""]})` });
}

/** Bounding box of absolute SVG path data (M/L/C with numbers only, as layout.py writes). */
function pathBox(d) {
  const v = String(d).match(/-?\d+(?:\.\d+)?(?:e[-+]?\d+)?/gi) || [];
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (let i = 0; i + 1 < v.length; i += 2) {
    const x = +v[i], y = +v[i + 1];
    if (x < x0) x0 = x; if (x > x1) x1 = x;
    if (y < y0) y0 = y; if (y > y1) y1 = y;
  }
  return x0 === Infinity ? { x0: 0, y0: 0, x1: 0, y1: 0 } : { x0, y0, x1, y1 };
}

function shapePath(n) {
  const x = n.x, y = n.y, rx = n.w / 2, ry = n.h / 2;
  if (n.shape === "ellipse") {
    return `M${x - rx} ${y}a${rx} ${ry} 0 1 0 ${2 * rx} 0a${rx} ${ry} 0 1 0 ${-2 * rx} 0z`;
  }
  if (n.shape === "diamond") return `M${x} ${y - ry}L${x + rx} ${y}L${x} ${y + ry}L${x - rx} ${y}z`;
  return `M${x - rx} ${y - ry}h${n.w}v${n.h}h${-n.w}z`;
}

const LITE_CELL = 600;  // layout units: the side of the regions BigDrawing's paths cover
// Above this many nodes a BigDrawing far out is painted on a <canvas> (GraphCanvas.paint)
// instead of SVG paths: the browser then keeps no element per node at all.
const IRLAB_CANVAS_ABOVE = 2000;

/** The drawing of a big graph in a GraphCanvas. Far out (labels not drawn anyway), each kind
 *  of node, edge and cluster is one <path> holding all of them: a step switch restyles and
 *  repaints a few dozen elements instead of thousands (no arrowheads, square corners: too
 *  small to see there). Closer in, the usual node groups, but only those within half a view
 *  of the visible part (made on first use, kept); panning and zooming redraw once a frame.
 *  Clicks far out are hit-tested against the layout's boxes. */
class BigDrawing {
  constructor(canvas, layout) {
    this.big = true;
    this.canvas = canvas;
    this.layout = layout;
    this.data = new Map(layout.nodes.map((n) => [n.id, n]));
    this.byId = new Map();  // the node groups made so far
    this.root = s("g");
    this.gc = s("g", { class: "irlab-clusters" });
    this.ge = s("g", { class: "irlab-edges" });
    this.gn = s("g", { class: "irlab-nodes" });
    this.full = s("g");
    this.full.append(this.gc, this.ge, this.gn);
    this.lite = null;
    this.liteMarks = null;
    this.mode = "";
    this.visible = null;
    this.marks = canvas.marks;
    this.nodes = layout.nodes.map((n) => ({ n, el: null, on: false, box: { x0: n.x - n.w / 2,
      y0: n.y - n.h / 2, x1: n.x + n.w / 2, y1: n.y + n.h / 2 } }));
    this.edges = layout.edges.filter((e) => e.d).map((e) => ({ e, el: null, on: false,
      box: pathBox(e.d) }));
  }

  /** Whether node `n` is drawn in this pane (its side, the neighbourhood shown). */
  shows(n) {
    const side = this.canvas.side;
    if (side === "a" && n.state === "added") return false;
    if (side === "b" && n.state === "removed") return false;
    return !this.visible || this.visible.has(n.id);
  }

  setVisible(ids) {
    this.visible = ids;
    this.lite = null;  // rebuilt without the hidden nodes
    this.batches = null;  // the same for the canvas's shapes
    if (this.mode === "far") this.mode = "";
    const out = (el, yes) => el && el.classList.toggle("out", yes);
    for (const it of this.nodes) out(it.el, !!ids && !ids.has(it.n.id));
    for (const it of this.edges) out(it.el, !!ids && !(ids.has(it.e.s) && ids.has(it.e.t)));
    if (this.clusterEls) this.markClusters();
  }

  markClusters() {
    const ids = this.visible;
    const inCluster = new Set();
    for (const id of ids || []) {
      const n = this.data.get(id);
      if (n && n.cluster) inCluster.add(n.cluster);
    }
    for (const [cid, g] of this.clusterEls) g.classList.toggle("out", !!ids && !inCluster.has(cid));
  }

  /** Draw for zoom `k` and the visible part `view` (layout coordinates). */
  update(k, view, sized) {
    if (!sized) return;  // a pane without a size yet (hidden tab): drawn once it has one
    const paint = this.canvas.paint;
    if (k < IRLAB_TEXT_ZOOM && this.layout.nodes.length > IRLAB_CANVAS_ABOVE) {
      if (this.mode !== "far") { this.root.replaceChildren(); this.mode = "far"; }
      paint.style.display = "";
      paintGraph(paint, this, this.canvas.panzoom, view);
      return;
    }
    paint.style.display = "none";
    if (k < IRLAB_TEXT_ZOOM) {
      if (!this.lite) { this.lite = this.buildLite(); this.mode = ""; }
      if (this.mode !== "far") { this.root.replaceChildren(this.lite); this.mode = "far"; }
      return;
    }
    if (this.mode !== "near") {
      if (!this.clusterEls) {
        this.clusterEls = new Map();
        for (const c of this.layout.clusters || []) {
          const g = makeClusterEl(c);
          this.gc.append(g);
          this.clusterEls.set(c.id, g);
        }
        this.markClusters();
      }
      this.root.replaceChildren(this.full);
      this.mode = "near";
    }
    const mx = (view.x1 - view.x0) / 2, my = (view.y1 - view.y0) / 2;
    const v = { x0: view.x0 - mx, y0: view.y0 - my, x1: view.x1 + mx, y1: view.y1 + my };
    this.cull(this.edges, this.ge, v, (it) => {
      const el = makeEdgeEl(it.e, this.canvas.markers);
      if (this.visible && !(this.visible.has(it.e.s) && this.visible.has(it.e.t))) {
        el.classList.add("out");
      }
      return el;
    });
    this.cull(this.nodes, this.gn, v, (it) => {
      const el = makeNodeEl(it.n);
      this.byId.set(it.n.id, el);
      this.markNode(it.n.id, el, this.marks);
      if (this.visible && !this.visible.has(it.n.id)) el.classList.add("out");
      return el;
    });
  }

  cull(items, parent, v, make) {
    const frag = document.createDocumentFragment();
    for (const it of items) {
      const b = it.box;
      const inside = b.x1 >= v.x0 && b.x0 <= v.x1 && b.y1 >= v.y0 && b.y0 <= v.y1;
      if (inside === it.on) continue;
      it.on = inside;
      if (inside) {
        if (!it.el) it.el = make(it);
        frag.append(it.el);
      } else it.el.remove();
    }
    parent.append(frag);
  }

  buildLite() {
    const root = s("g", { class: "irlab-lite" });
    this.liteTip = s("title");
    root.append(this.liteTip);
    const groups = new Map();
    // Paths of a few dozen shapes each, from one region: the rasterizer skips the paths
    // outside a tile by their bounds, whereas one path of everything costs every tile the
    // whole geometry (several times the time of separate elements).
    const add = (key, make, d, x, y) => {
      const cell = `${Math.floor(x / LITE_CELL)},${Math.floor(y / LITE_CELL)}`;
      let g = groups.get(key + "@" + cell);
      if (!g) { g = { make, d: [] }; groups.set(key + "@" + cell, g); }
      g.d.push(d);
    };
    const vis = this.visible;
    for (const c of this.layout.clusters || []) {
      const state = c.state ? ` state-${cssToken(c.state)}` : "";
      const cls = `irlab-cluster kind-${cssToken(c.kind)}${state}`;
      add("c" + cls, () => s("g", { class: cls }), `M${c.x} ${c.y}h${c.w}v${c.h}h${-c.w}z`,
        c.x, c.y);
    }
    for (const e of this.layout.edges) {
      if (!e.d || (vis && !(vis.has(e.s) && vis.has(e.t)))) continue;
      const state = cssToken(e.state);
      const n = this.data.get(e.t) || { x: 0, y: 0 };
      add("e" + state, () => s("path", { class: `irlab-edge${state ? " state-" + state : ""}` }),
        e.d, n.x, n.y);
    }
    for (const n of this.layout.nodes) {
      if (vis && !vis.has(n.id)) continue;
      const state = cssToken(n.state);
      const cls = `irlab-node kind-${cssToken(n.kind)}${state ? " state-" + state : ""}`;
      add("n" + cls, () => s("g", { class: cls }), shapePath(n), n.x, n.y);
    }
    for (const { make, d } of groups.values()) {
      const el = make();
      const path = el.tagName === "path" ? el : el.appendChild(s("path"));
      path.setAttribute("d", d.join(""));
      root.append(el);
    }
    this.liteMarks = s("g", { class: "irlab-lite-marks" });
    root.append(this.liteMarks);
    this.markLite(this.marks);
    return root;
  }

  markNode(id, el, { selected, matches, current }) {
    el.classList.toggle("selected", id === selected);
    el.classList.toggle("match", !!matches && matches.has(id));
    el.classList.toggle("match-current", id === current);
  }

  /** The marked nodes far out: real node groups drawn over the paths. */
  markLite(marks) {
    if (!this.liteMarks) return;
    const ids = new Set(marks.matches || []);
    for (const id of [marks.selected, marks.current]) if (id) ids.add(id);
    const els = [];
    for (const id of ids) {
      const n = this.data.get(id);
      if (!n || (this.visible && !this.visible.has(id))) continue;
      const el = makeNodeEl(n);
      el.removeAttribute("data-testid");  // the node's own group (near) is the graph node
      this.markNode(id, el, marks);
      els.push(el);
    }
    this.liteMarks.replaceChildren(...els);
  }

  mark(marks) {
    this.marks = marks;
    for (const [id, el] of this.byId) this.markNode(id, el, marks);
    this.markLite(marks);
    if (this.mode === "far" && !this.lite) this.canvas.refresh();  // painted: paint again
  }
}

/** Paint `drawing` (a BigDrawing, far out) on the <canvas> `paint`, which covers the pane:
 *  cluster boxes, straight-from-the-layout edges and node shapes, coloured as the SVG's CSS
 *  colours them; marked nodes (search hits, selection) drawn over the rest, at least a few
 *  pixels wide, so they show even far out. The shapes are batched into one Path2D per
 *  colour (paintBatches, kept until the visible set changes): a frame is a few strokes. */
function paintGraph(paint, drawing, pz, view) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.round(paint.clientWidth * dpr), hgt = Math.round(paint.clientHeight * dpr);
  if (paint.width !== w) paint.width = w;
  if (paint.height !== hgt) paint.height = hgt;
  const ctx = paint.getContext("2d");
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, w, hgt);
  ctx.setTransform(pz.k * dpr, 0, 0, pz.k * dpr, pz.x * dpr, pz.y * dpr);
  const css = getComputedStyle(paint);
  const colour = (state, plain) => (state && css.getPropertyValue(`--irlab-${state}`).trim()) ||
    plain;
  const px = 1 / pz.k;  // one screen pixel in layout units
  if (!drawing.batches) drawing.batches = paintBatches(drawing);
  const b = drawing.batches;
  ctx.lineWidth = px;
  ctx.fillStyle = "rgba(148, 163, 184, 0.12)";
  ctx.strokeStyle = "#94a3b8";
  ctx.fill(b.clusters);
  ctx.stroke(b.clusters);
  for (const [state, path] of b.edges) {
    ctx.strokeStyle = colour(state, "#6b7280");
    ctx.stroke(path);
  }
  for (const [key, path] of b.nodes) {
    const [kind, state] = key.split("|");
    ctx.fillStyle = kind === "cluster" ? "#e0e7ff" : "#ffffff";
    ctx.fill(path);
    ctx.strokeStyle = colour(state, "#374151");
    ctx.lineWidth = state ? 2.5 * px : px;
    ctx.stroke(path);
  }
  const { selected, matches, current } = drawing.marks;
  const marked = new Set(matches || []);
  for (const id of [selected, current]) if (id) marked.add(id);
  for (const id of marked) {
    const n = drawing.data.get(id);
    if (!n || !drawing.shows(n)) continue;
    const r = Math.max(n.w / 2, 4 * px), q = Math.max(n.h / 2, 4 * px);
    if (n.x + r < view.x0 || n.x - r > view.x1 || n.y + q < view.y0 || n.y - q > view.y1) {
      continue;
    }
    ctx.fillStyle = id === current ? "#facc15" : "#fef08a";
    ctx.fillRect(n.x - r, n.y - q, 2 * r, 2 * q);
    ctx.lineWidth = (id === selected ? 3.5 : 1.5) * px;
    ctx.strokeStyle = id === selected ? colour("accent", "#2563eb") : "#a16207";
    ctx.strokeRect(n.x - r, n.y - q, 2 * r, 2 * q);
  }
}

/** The shapes of a BigDrawing's shown nodes, edges and clusters, one Path2D per colour. */
function paintBatches(drawing) {
  const clusters = new Path2D(), edges = new Map(), nodes = new Map();
  const add = (map, key, d) => {
    if (!map.has(key)) map.set(key, new Path2D());
    map.get(key).addPath(new Path2D(d));
  };
  for (const c of drawing.layout.clusters || []) clusters.rect(c.x, c.y, c.w, c.h);
  const shows = (id) => { const n = drawing.data.get(id); return n && drawing.shows(n); };
  for (const it of drawing.edges) {
    if (shows(it.e.s) && shows(it.e.t)) add(edges, it.e.state || "", it.e.d);
  }
  for (const it of drawing.nodes) {
    const n = it.n;
    if (drawing.shows(n)) add(nodes, `${n.kind === "cluster" ? "cluster" : ""}|${n.state || ""}`,
      shapePath(n));
  }
  return { clusters, edges, nodes };
}

/** The minimap of a GraphCanvas: every node as a dot in a small canvas (drawn once per
 *  layout), the part of the graph in view as a rectangle over it; a click or drag there
 *  moves the view to that point. Shown for graphs of MINIMAP_ABOVE nodes or more. */
const MINIMAP_ABOVE = 60;

class Minimap {
  constructor(graphCanvas) {
    this.gc = graphCanvas;
    this.el = h("canvas", { class: "irlab-minimap", "data-testid": "minimap",
      title: "overview: click or drag to move the view" });
    this.el.style.display = "none";
    this.base = null;
    this.layout = null;
    this.queued = false;
    let dragging = false;
    const go = (e) => this.moveTo(e.offsetX, e.offsetY);
    this.el.addEventListener("pointerdown", (e) => {
      dragging = true; this.el.setPointerCapture(e.pointerId); go(e); e.stopPropagation();
    });
    this.el.addEventListener("pointermove", (e) => { if (dragging) go(e); });
    this.el.addEventListener("pointerup", () => { dragging = false; });
    this.el.addEventListener("wheel", (e) => e.stopPropagation());
  }

  /** Fit `layout` into at most 160 x 160 CSS pixels and draw its nodes once. */
  setLayout(layout) {
    this.layout = layout && layout.nodes.length >= MINIMAP_ABOVE ? layout : null;
    this.el.style.display = this.layout ? "" : "none";
    if (!this.layout) return;
    const lw = Math.max(layout.width, 1), lh = Math.max(layout.height, 1);
    this.scale = Math.min(160 / lw, 160 / lh);
    const w = Math.max(24, Math.ceil(lw * this.scale));
    const hgt = Math.max(24, Math.ceil(lh * this.scale));
    this.el.width = w; this.el.height = hgt;
    this.el.style.width = `${w}px`; this.el.style.height = `${hgt}px`;
    const base = document.createElement("canvas");
    base.width = w; base.height = hgt;
    const ctx = base.getContext("2d");
    ctx.fillStyle = "rgba(255, 255, 255, 0.92)";
    ctx.fillRect(0, 0, w, hgt);
    ctx.fillStyle = "#64748b";
    for (const n of layout.nodes) {
      const nw = Math.max(1, n.w * this.scale), nh = Math.max(1, n.h * this.scale);
      ctx.fillRect(n.x * this.scale - nw / 2, n.y * this.scale - nh / 2, nw, nh);
    }
    this.base = base;
    this.draw();
  }

  queue() {
    if (!this.layout || this.queued) return;
    this.queued = true;
    requestAnimationFrame(() => { this.queued = false; this.draw(); });
  }

  draw() {
    if (!this.layout || !this.base) return;
    const ctx = this.el.getContext("2d");
    ctx.clearRect(0, 0, this.el.width, this.el.height);
    ctx.drawImage(this.base, 0, 0);
    const pz = this.gc.panzoom, [w, hgt] = this.gc.size(), f = this.scale;
    ctx.strokeStyle = "#2563eb";
    ctx.lineWidth = 1.5;
    ctx.strokeRect(-pz.x / pz.k * f, -pz.y / pz.k * f, w / pz.k * f, hgt / pz.k * f);
  }

  /** Centre the view on the layout point under minimap pixel (mx, my). */
  moveTo(mx, my) {
    const [w, hgt] = this.gc.size();
    const pz = this.gc.panzoom;
    pz.x = w / 2 - (mx / this.scale) * pz.k;
    pz.y = hgt / 2 - (my / this.scale) * pz.k;
    pz.apply();
  }
}

// ------------------------------------------------------------------------------------------------
// The inspector: what is known about one node of a laid-out graph.
function nodeInputs(layout, id) {
  return layout.edges.filter((e) => e.t === id).sort((a, b) => (a.i || 0) - (b.i || 0))
    .map((e) => e.s);
}

function nodeUsers(layout, id) {
  return layout.edges.filter((e) => e.s === id).map((e) => e.t);
}

/** Fill `box` with node `id` of `layout`. ctx: {onSelect(id), onStep(i), irText, stateNames}. */
function renderInspector(box, layout, id, ctx = {}) {
  box.replaceChildren();
  const node = layout && id ? layout.nodes.find((n) => n.id === id) : null;
  if (!node) {
    box.append(h("div", { class: "irlab-muted", "data-testid": "inspector-empty",
      text: id ? `Node ${id} is not in this view.` : "Click a node to inspect it." }));
    return;
  }
  const byId = new Map(layout.nodes.map((n) => [n.id, n]));
  const link = (other) => {
    const o = byId.get(other);
    return h("button", { class: "irlab-link", "data-testid": "inspector-link",
      "data-node-id": other,
      text: o ? `${o.title}${o.name && o.name !== o.title ? " " + o.name : ""}` : other,
      title: o && o.type ? o.type : other,
      on: { click: () => ctx.onSelect && ctx.onSelect(other) } });
  };
  const rows = [];
  const row = (label, value, testid) => rows.push(h("tr", { "data-testid": testid || null },
    h("th", { text: label }), h("td", {}, value)));
  row("op", node.op || node.title, "inspector-op");
  row("kind", node.kind, "inspector-kind");
  if (node.name) row("name", node.name, "inspector-name");
  if (node.type) row("type", h("code", { text: node.type }), "inspector-type");
  if (node.state) row("change", h("span", { class: `irlab-badge state-${cssToken(node.state)}`,
    text: node.state }), "inspector-state");
  if (node.cluster) {
    const c = (layout.clusters || []).find((x) => x.id === node.cluster);
    row(c && c.kind === "layer" ? "layer" : "function", c ? c.label : node.cluster,
      "inspector-cluster");
  }
  const attrs = Object.entries(node.attrs || {});
  if (attrs.length) {
    row("attrs", h("table", { class: "irlab-attrs", "data-testid": "inspector-attrs" },
      attrs.map(([k, v]) => h("tr", {}, h("th", { text: k }),
        h("td", {}, h("code", { text: v }))))));
  }
  if (node.line !== null && node.line !== undefined) {
    const lines = ctx.irText ? ctx.irText.split("\n") : [];
    row("IR line", h("div", {}, h("span", { class: "irlab-muted", text: `line ${node.line + 1}` }),
      lines[node.line] !== undefined ? h("pre", { class: "irlab-irline-inline" },
        irHighlight(lines[node.line].trim(), [])) : null), "inspector-line");
  }
  const ins = nodeInputs(layout, id), users = nodeUsers(layout, id);
  const links = (ids) => h("div", { class: "irlab-links" }, ids.map(link));
  if (ins.length) row("inputs", links(ins), "inspector-inputs");
  if (users.length) row("users", links(users), "inspector-users");
  if (node.members && node.members.length) {
    row("ops", h("code", { text: node.members.join(", ") }), "inspector-members");
  }
  if (node.folded && node.folded.length) {
    // weights folded into this node (not drawn as nodes): shape, dtype and first values
    row("weights", h("table", { class: "irlab-attrs", "data-testid": "inspector-folded" },
      node.folded.map((f) => h("tr", { "data-testid": "folded-weight" },
        h("th", { text: f.name || `arg ${f.index} (${f.kind})` }),
        h("td", {}, h("code", { text: `${f.shape} ${f.dtype}`.trim() }),
          f.values ? h("div", { class: "irlab-muted", text: f.values }) : null)))),
    "inspector-weights");
  }
  if (node.prov) {
    const steps = node.prov.map(([i, name]) => h("button", { class: "irlab-link",
      "data-testid": "provenance-item", "data-step": i, text: `${i}: ${name}`,
      on: { click: () => ctx.onStep && ctx.onStep(i) } }));
    row("made by", steps.length
      ? h("div", { class: "irlab-links", "data-testid": "provenance" }, steps)
      : h("span", { class: "irlab-muted", "data-testid": "provenance",
        text: "unchanged since the input" }), "inspector-provenance");
  }
  box.append(h("div", { class: "irlab-inspector-title" },
    h("span", { class: `irlab-kind kind-${cssToken(node.kind)}`, text: node.kind }),
    h("strong", { "data-testid": "inspector-title", text: node.title }),
    h("span", { class: "irlab-muted", text: node.id })),
  h("table", { class: "irlab-props" }, rows));
  const more = ctx.extra ? ctx.extra(node) : null;
  if (more) box.append(more);
}

// ------------------------------------------------------------------------------------------------
// IR text: light syntax colouring plus marks on the changed characters.
const IR_KEYWORDS = "fn|def|let|if|else|free_var|meta|Tensor|Primitive";
const IR_TOKEN = new RegExp([
  String.raw`\/\*.*?\*\/`,  // /* ty=... */ comments
  String.raw`%[\w.]+`, String.raw`@[\w.]+`,  // locals, globals
  String.raw`"(?:[^"\\]|\\.)*"`,  // strings
  String.raw`[A-Za-z_][\w.]*(?=\()`,  // ops (a name before "(")
  String.raw`-?\d+(?:\.\d+)?(?:e[-+]?\d+)?f?\b`,  // numbers
  String.raw`\b(?:${IR_KEYWORDS})\b`,
].join("|"), "g");
const IR_KEYWORD = new RegExp(`^(?:${IR_KEYWORDS})$`);

function tokenClass(tok) {
  const c = tok[0];
  if (c === "/") return "tk-comment";
  if (c === "%") return "tk-local";
  if (c === "@") return "tk-global";
  if (c === '"') return "tk-string";
  if (c === "-" || (c >= "0" && c <= "9")) return "tk-number";
  if (IR_KEYWORD.test(tok)) return "tk-keyword";
  return "tk-op";
}

/** A fragment of spans for `line`; `changes`: [start, end) ranges marked as changed. */
function irHighlight(line, changes) {
  const frag = document.createDocumentFragment();
  const bounds = new Set([0, line.length]);
  const tokens = [];
  IR_TOKEN.lastIndex = 0;
  let m;
  while ((m = IR_TOKEN.exec(line)) !== null) {
    if (m[0].length === 0) { IR_TOKEN.lastIndex++; continue; }
    tokens.push([m.index, m.index + m[0].length, tokenClass(m[0])]);
    bounds.add(m.index); bounds.add(m.index + m[0].length);
  }
  for (const [a, b] of changes || []) {
    bounds.add(clamp(a, 0, line.length));
    bounds.add(clamp(b, 0, line.length));
  }
  const cuts = [...bounds].sort((a, b) => a - b);
  let t = 0;
  for (let i = 0; i + 1 < cuts.length; i++) {
    const a = cuts[i], b = cuts[i + 1];
    if (a === b) continue;
    while (t < tokens.length && tokens[t][1] <= a) t++;
    const cls = [];
    if (t < tokens.length && tokens[t][0] <= a && tokens[t][1] >= b) cls.push(tokens[t][2]);
    if ((changes || []).some(([x, y]) => x <= a && b <= y)) cls.push("chg");
    const piece = line.slice(a, b);
    frag.append(cls.length ? h("span", { class: cls.join(" "), text: piece }) : piece);
  }
  return frag;
}

// ------------------------------------------------------------------------------------------------
// Diffs: rows of widgets/text_rows.py, drawn side by side or unified, long runs of unchanged
// lines folded (click to unfold).
const DIFF_CONTEXT = 3;

function diffLines(cur) {
  const a = (cur.text_a || "").split("\n"), b = (cur.text_b || "").split("\n");
  return { a, b };
}

function foldRuns(items, isEqual, expanded, makeFold) {
  const out = [];
  let i = 0;
  while (i < items.length) {
    if (!isEqual(items[i])) { out.push(items[i]); i++; continue; }
    let j = i;
    while (j < items.length && isEqual(items[j])) j++;
    const head = i === 0 ? 0 : DIFF_CONTEXT, tail = j === items.length ? 0 : DIFF_CONTEXT;
    if (j - i > head + tail + 1 && !expanded.has(i)) {
      out.push(...items.slice(i, i + head));
      out.push(makeFold(i, j - i - head - tail));
      out.push(...items.slice(j - tail, j));
    } else out.push(...items.slice(i, j));
    i = j;
  }
  return out;
}

/** Draw `cur` (a resolved pair) into `box`; mode "side" or "unified". `scroller`: the
 *  scrolling element the diff is shown in (rows of a long diff are built when they come near
 *  its visible part; see diffBody). */
function renderDiff(box, cur, mode, expanded, redraw, scroller = null) {
  box.replaceChildren();
  box.setAttribute("data-mode", mode);
  const { a, b } = diffLines(cur);
  const rows = cur.rows || [];
  const changed = rows.some((r) => r[0] !== "e");
  if (!changed) {
    box.append(h("div", { class: "irlab-banner", "data-testid": "diff-nochange",
      text: "No change: this pass left the program as it was (renumbering ignored)." }));
  }
  const fold = (start, count) => ({ fold: true, start, count });
  const foldRow = (item) => h("div", { class: "irlab-fold", "data-testid": "diff-fold",
    text: `⋯ ${item.count} unchanged lines (click to show)`,
    on: { click: () => { expanded.add(item.start); redraw(); } } });
  // Rows are grid lines, not table rows: off-screen ones skip style, layout and paint
  // (content-visibility), which keeps a step switch fast on a 1,000-line program.
  const table = h("div", { class: `irlab-diff irlab-diff-${mode}`, "data-testid": "diff-table" });
  let items, rowOf;
  if (mode === "side") {
    items = changed ? foldRuns(rows, (r) => r[0] === "e", expanded, fold) : rows;
    rowOf = (r) => {
      if (r.fold) return foldRow(r);
      const [tag, ln, rn, lc, rc] = r;
      return h("div", { class: `irlab-row tag-${tag}`, "data-testid": "diff-row",
        "data-tag": tag },
      h("span", { class: "no", text: ln || "" }),
      h("span", { class: "code left" }, ln ? irHighlight(a[ln - 1] || "", lc) : ""),
      h("span", { class: "no", text: rn || "" }),
      h("span", { class: "code right" }, rn ? irHighlight(b[rn - 1] || "", rc) : ""));
    };
  } else {
    // Unified: each run of changed rows as all its old lines, then all its new lines.
    const lines = [];
    for (let i = 0; i < rows.length;) {
      if (rows[i][0] === "e") {
        lines.push([" ", rows[i][1], rows[i][2], b[rows[i][2] - 1], []]);
        i++;
        continue;
      }
      let j = i;
      while (j < rows.length && rows[j][0] !== "e") j++;
      for (const r of rows.slice(i, j)) if (r[1]) lines.push(["-", r[1], 0, a[r[1] - 1], r[3]]);
      for (const r of rows.slice(i, j)) if (r[2]) lines.push(["+", 0, r[2], b[r[2] - 1], r[4]]);
      i = j;
    }
    items = changed ? foldRuns(lines, (l) => l[0] === " ", expanded, fold) : lines;
    rowOf = (l) => {
      if (l.fold) return foldRow(l);
      const [sign, ln, rn, text, chg] = l;
      const tag = sign === "-" ? "d" : sign === "+" ? "i" : "e";
      return h("div", { class: `irlab-row tag-${tag}`, "data-testid": "diff-row",
        "data-tag": tag },
      h("span", { class: "no", text: ln || "" }), h("span", { class: "no", text: rn || "" }),
      h("span", { class: "sign", text: sign }),
      h("span", { class: "code" }, irHighlight(text || "", chg)));
    };
  }
  diffBody(table, items, rowOf, scroller);
  box.append(table);
}

// A long diff (a 5,000-line program: 5,000 rows of highlighted spans, 0.5-1 s to build) is
// cut into blocks of DIFF_BLOCK_ROWS rows. A block holds its rows' items and the height they
// will take; its rows are built when it comes within DIFF_MARGIN of the visible part of the
// pane (an IntersectionObserver), or in idle time (so that the browser's find sees them).
// A step switch then builds only what is in view.
const DIFF_EAGER_ROWS = 300, DIFF_BLOCK_ROWS = 100, DIFF_ROW_PX = 15, DIFF_MARGIN = "1000px";

function diffBody(table, items, rowOf, scroller) {
  if (items.length <= DIFF_EAGER_ROWS || typeof IntersectionObserver === "undefined") {
    for (const item of items) table.append(rowOf(item));
    return;
  }
  const blocks = [];
  for (let i = 0; i < items.length; i += DIFF_BLOCK_ROWS) {
    const block = h("div", { class: "irlab-diff-block", "data-testid": "diff-block",
      "data-first": i });
    block.pending = items.slice(i, i + DIFF_BLOCK_ROWS);
    block.style.height = `${block.pending.length * DIFF_ROW_PX}px`;
    blocks.push(block);
  }
  const observer = new IntersectionObserver((entries) => {
    for (const e of entries) if (e.isIntersecting) fill(e.target);
  }, { root: scroller, rootMargin: `${DIFF_MARGIN} 0px` });
  function fill(block) {
    if (!block.pending) return;
    const frag = document.createDocumentFragment();
    for (const item of block.pending) frag.append(rowOf(item));
    block.pending = null;
    block.style.height = "";
    block.append(frag);
    block.setAttribute("data-built", "");
    observer.unobserve(block);
  }
  table.append(...blocks);
  fill(blocks[0]);
  for (const block of blocks) if (block.pending) observer.observe(block);
  // The rest in idle time, while the diff is shown (drawn again: `table.resumeFill()`).
  const idle = window.requestIdleCallback ||
    ((fn) => setTimeout(() => fn({ timeRemaining: () => 10 }), 50));
  let next = 1, waiting = false;
  const work = (deadline) => {
    waiting = false;
    if (!table.isConnected) return;
    while (next < blocks.length && (!blocks[next].pending || deadline.timeRemaining() > 5)) {
      fill(blocks[next++]);
    }
    if (next < blocks.length) { waiting = true; idle(work); }
    else observer.disconnect();
  };
  table.resumeFill = () => {
    if (!waiting && next < blocks.length) { waiting = true; idle(work); }
  };
  table.resumeFill();
}

/** The printed program as numbered lines; `onLine(n)` when a line is clicked. */
/** The printed IR in `box`, one clickable row per line. A long program (a 5,000-node graph
 *  prints 5,000 lines) is drawn IR_FIRST_LINES at once and the rest in chunks after the next
 *  frames, so the graph is drawn first; a row asked for earlier is drawn on demand. */
const IR_FIRST_LINES = 400, IR_CHUNK = 1500;

function renderIR(box, text, onLine) {
  box.replaceChildren();
  const job = { lines: (text || "").split("\n"), done: 0, onLine };
  box.irJob = job;
  irRowsUpTo(box, IR_FIRST_LINES);
  const more = () => {
    if (box.irJob !== job || job.done >= job.lines.length) return;
    irRowsUpTo(box, job.done + IR_CHUNK);
    setTimeout(more, 16);
  };
  if (job.done < job.lines.length) setTimeout(more, 50);
}

/** Draw the rows of `box`'s IR up to line `end` (exclusive). */
function irRowsUpTo(box, end) {
  const job = box.irJob;
  if (!job) return;
  const stop = Math.min(end, job.lines.length);
  const frag = document.createDocumentFragment();
  for (let i = job.done; i < stop; i++) {
    frag.append(h("div", { class: "irlab-irline", "data-line": i, "data-testid": "ir-line",
      on: { click: () => job.onLine && job.onLine(i) } },
    h("span", { class: "no", text: i + 1 }),
    h("span", { class: "code" }, irHighlight(job.lines[i], []))));
  }
  job.done = Math.max(job.done, stop);
  box.append(frag);
}

function markIRLine(box, line, scroll = true) {
  for (const el of box.querySelectorAll(".irlab-irline.current")) el.classList.remove("current");
  if (line === null || line === undefined) return;
  if (box.irJob && box.irJob.done <= Number(line)) irRowsUpTo(box, Number(line) + 1);
  const el = box.querySelector(`.irlab-irline[data-line="${Number(line)}"]`);
  if (!el) return;
  el.classList.add("current");
  if (scroll) {
    // Scroll the pane only (scrollIntoView would scroll the whole notebook too), in the next
    // frame: reading offsetTop now would force a layout of everything just changed.
    requestAnimationFrame(() => { box.scrollTop = el.offsetTop - box.clientHeight / 3; });
  }
}
