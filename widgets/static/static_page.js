// static_page.js: runs the widgets' render functions in a page with no kernel. A small model
// with anywidget's interface (get / set / save_changes / on / off / send) is backed by the JSON
// embedded in the page; where Python would answer a change (another step or base), it looks
// the answer up in that JSON instead.

class StaticModel {
  constructor(state, derive) {
    this.state = Object.assign({}, state, { _static: true });
    this.derive = derive || (() => {});
    this.handlers = new Map();
    this.pending = new Set();
  }

  get(key) { return this.state[key]; }

  set(key, value) {
    this.state[key] = value;
    this.pending.add(key);
    this.fire(key);
  }

  save_changes() {
    const keys = [...this.pending];
    this.pending.clear();
    this.derive(this, keys);
  }

  on(name, fn) {
    if (!this.handlers.has(name)) this.handlers.set(name, []);
    this.handlers.get(name).push(fn);
  }

  off(name, fn) {
    const list = this.handlers.get(name) || [];
    const i = list.indexOf(fn);
    if (i >= 0) list.splice(i, 1);
  }

  send() {
    this.set("status", "this page has no kernel: re-run in a notebook to use this");
  }

  fire(key) { for (const fn of [...(this.handlers.get(`change:${key}`) || [])]) fn(); }
}

/** A layout whose nodes refer to their shared description (``{r, x, y, w, h, state}``, see
 * export.py's shared_records) with the descriptions put back; made once per layout. */
function expandLayout(app, key) {
  const layout = app.layouts[key];
  if (!layout || !app.records) return layout;
  app.expanded = app.expanded || {};
  if (!app.expanded[key]) {
    const nodes = layout.nodes.map((n) => {
      const { r, ...geometry } = n;
      return Object.assign({}, app.records[r], geometry);
    });
    app.expanded[key] = Object.assign({}, layout, { nodes });
  }
  return app.expanded[key];
}

/** The stepper's pair (base, step) with its text and layout references resolved. */
function resolvePair(app, base, step) {
  const key = `${base}:${step}`;
  const pair = app.pairs[key];
  if (!pair) return { missing: true, key, step, base };
  return Object.assign({}, pair, { text_a: app.texts[pair.text_a], text_b: app.texts[pair.text_b],
    graph: expandLayout(app, pair.graph) });
}

function stepperDerive(app) {
  return (model, keys) => {
    if (keys.includes("step") || keys.includes("base")) {
      let base = model.get("base");
      const step = model.get("step");
      if (base !== -1 && !app.pairs[`${base}:${step}`]) {
        model.state.status = `the diff against step ${base} is not in this export`;
        base = -1;
      }
      model.state.current = resolvePair(app, base, step);
      model.fire("current");
      model.fire("status");
    }
  };
}

function bootIrlabPage() {
  const data = JSON.parse(document.getElementById("irlab-data").textContent);
  const host = document.getElementById("irlab-apps");
  for (const app of data.apps) {
    const el = document.createElement("div");
    el.className = "irlab-app";
    el.setAttribute("data-testid", `app-${app.kind}`);
    host.append(el);
    if (app.kind === "stepper") {
      const model = new StaticModel(app.state, stepperDerive(app));
      model.state.current = resolvePair(app, model.get("base"), model.get("step"));
      renderPassStepper({ model, el });
    } else {
      renderGraphView({ model: new StaticModel(app.state), el });
    }
  }
}

bootIrlabPage();
