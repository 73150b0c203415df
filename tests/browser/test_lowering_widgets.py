"""LoweringExplorer and RunPanel in a real browser (Voila + Chromium, see conftest.py), on a small
model built with relay.build: dense + bias_add + relu (one kernel) then softmax (another), its
input variable named like an HTML payload.

Checks: the kernel select lists every kernel and refills the six panes; a click on a ``for`` line
of the scheduled TIR highlights that loop in the scheduled, lowered, LLVM and (once loaded)
assembly panes and sets the loop select; the optimized toggle redraws the LLVM pane; RunPanel's
buttons redraw the outputs and the latency, its chart has a bar per kernel node; explore()'s
Lowering and Run tabs render once opened; the payload name is text, runs nothing; the console
shows no error besides Voila's two offline icon-font ones.
Screenshots: ``tests/browser/artifacts/<test>.png``."""

from __future__ import annotations

from voila_support import ARTIFACTS, XSS_NAME, open_notebook

LX = "[data-testid=lowering-explorer]"
RUN = "[data-testid=run-panel]"
LX_READY = f"{LX} [data-testid=pane-scheduled] .irlab-irline"
RUN_READY = f"{RUN} [data-testid=output-row]"
PANES = ("relay", "te", "scheduled", "lowered", "llvm", "asm")
DENSE = "tvmgen_default_fused_nn_dense_nn_bias_add_nn_relu"
SOFTMAX = "tvmgen_default_fused_nn_softmax"

# Text of each pane (its code lines; "" when it shows no code, e.g. the assembly not loaded).
_PANE_TEXTS = """(panes) => Object.fromEntries(panes.map((k) => {
  const box = document.querySelector(`[data-testid=lowering-explorer] [data-testid=pane-${k}]`);
  const lines = [...box.querySelectorAll('.irlab-irline .code')].map((c) => c.textContent);
  return [k, lines.join('\\n')];
}))"""
# True once every pane named in ``before`` shows other text than ``before`` gave.
_ALL_CHANGED = """([panes, before]) => {
  const now = (%s)(panes);
  return panes.every((k) => now[k] !== before[k] && now[k] !== '');
}""" % _PANE_TEXTS


# Whether pane ``k``'s first highlighted loop head is inside the pane's scrolled view.
_HEAD_IN_VIEW = """(k) => {
  const box = document.querySelector(`[data-testid=lowering-explorer] [data-testid=pane-${k}]`);
  const line = box.querySelector('.irlab-irline.loop-head');
  if (!line) return false;
  const b = box.getBoundingClientRect(), r = line.getBoundingClientRect();
  return r.top >= b.top && r.bottom <= b.bottom;
}"""
_SCROLL_TOPS = """(panes) => panes.map((k) => document.querySelector(
  `[data-testid=lowering-explorer] [data-testid=pane-${k}]`).scrollTop)"""


def _watch_console(page):
    """Record the page's console errors (call before loading it)."""
    errors = []
    page.on("console", lambda msg: errors.append(f"{msg.text} @ {msg.location.get('url', '')}")
            if msg.type == "error" else None)
    return errors


def _unexpected(errors):
    """Console errors other than the known offline ones: Voila's template asks a public CDN
    for its icon font's style sheets (see platform_notes.md); how many failures the browser
    logs for them depends on the network (refused, unresolved, retried)."""
    known = [e for e in errors if e.startswith("Failed to load resource")
             and "fontawesome-free" in e.split(" @ ")[-1]]
    return [e for e in errors if e not in known]


def _no_injection(page):
    """Nothing from the payload became markup or ran."""
    page.wait_for_timeout(300)  # an <img onerror> would fire right after insertion
    assert page.log.dialogs == [], page.log.dialogs
    injected = page.evaluate(
        "() => [...document.querySelectorAll('img')].filter("
        "i => i.getAttribute('src') === 'x' || i.hasAttribute('onerror')).length")
    assert injected == 0


def _lines(page, pane, cls):
    return page.locator(f"{LX} [data-testid=pane-{pane}] .irlab-irline.{cls}")


def _texts(page):
    return page.evaluate(_PANE_TEXTS, list(PANES))


def test_lowering_explorer_links_loops(page, voila_url):
    console = _watch_console(page)
    open_notebook(page, voila_url, "lowering", LX_READY)
    lx = page.locator(LX)
    kernel = lx.get_by_test_id("kernel-select")
    options = kernel.locator("option")
    assert options.count() == 2  # one per fused function
    assert sorted(options.evaluate_all("os => os.map(o => o.value)")) == [DENSE, SOFTMAX]
    assert kernel.input_value() == DENSE
    texts = _texts(page)
    for key in PANES[:-1]:
        assert texts[key], f"pane {key} is empty"
    assert "nn.dense" in texts["relay"] and "define" in texts["llvm"]
    assert lx.get_by_test_id("load-asm").is_visible()  # the assembly waits for the button

    # A `for` line of the scheduled TIR: that loop, in every level that still has it.
    head = lx.locator("[data-testid=pane-scheduled] .irlab-irline", has_text="for ax2 in")
    assert head.count() == 1
    head.click()
    _lines(page, "scheduled", "loop-head").first.wait_for()
    assert head.evaluate("e => e.classList.contains('loop-head')")
    assert _lines(page, "scheduled", "loop-body").count() > 0
    for key in ("lowered", "llvm"):
        assert _lines(page, key, "loop-head").count() > 0, key
    assert "for.ax2" in _lines(page, "llvm", "loop-head").first.inner_text()
    assert lx.get_by_test_id("loop-select").input_value() == "ax2"
    assert _lines(page, "relay", "loop-head").count() == 0  # Relay has no loops
    for key in ("scheduled", "lowered", "llvm"):  # each pane scrolls to the loop
        page.wait_for_function(_HEAD_IN_VIEW, arg=key, timeout=5_000)

    # The assembly: made on demand, then linked like the other panes.
    lx.get_by_test_id("load-asm").click()
    _lines(page, "asm", "loop-head").first.wait_for()
    page.wait_for_function(_HEAD_IN_VIEW, arg="asm", timeout=5_000)
    assert lx.get_by_test_id("load-asm").count() == 0
    asm = _texts(page)["asm"]
    assert DENSE in asm and asm.count("\n") > 20

    # LLVM's optimizer: the LLVM pane is drawn again with the optimized IR.
    before = _texts(page)
    lx.get_by_test_id("optimized-toggle").check()
    page.wait_for_function(_ALL_CHANGED, arg=[["llvm"], before])
    after = _texts(page)
    assert after["llvm"] != before["llvm"] and "define" in after["llvm"]
    assert after["scheduled"] == before["scheduled"]  # the TIR is the same
    assert lx.get_by_test_id("loop-select").input_value() == "ax2"  # the loop stays selected

    # Another kernel: all six panes refilled.
    before = after
    kernel.select_option(SOFTMAX)
    page.wait_for_function(_ALL_CHANGED, arg=[list(PANES), before])
    after = _texts(page)
    assert "nn.softmax" in after["relay"] and "nn.dense" not in after["relay"]
    assert SOFTMAX in after["llvm"] and SOFTMAX in after["asm"]
    assert lx.get_by_test_id("status").inner_text().startswith(SOFTMAX)
    assert kernel.input_value() == SOFTMAX
    # No loop of the new kernel is selected: its panes are shown from the top, not at the
    # old kernel's scroll positions.
    assert lx.get_by_test_id("loop-select").input_value() == ""
    assert page.evaluate(_SCROLL_TOPS, list(PANES)) == [0] * len(PANES)

    assert page.log.page_errors == []
    _no_injection(page)
    assert _unexpected(console) == [], console


def test_run_panel_buttons_and_chart(page, voila_url):
    console = _watch_console(page)
    open_notebook(page, voila_url, "lowering", RUN_READY)
    run = page.locator(RUN)
    rows = run.get_by_test_id("output-row")
    assert rows.count() == 1
    assert "pass" in rows.first.inner_text()
    latency = run.get_by_test_id("latency")
    assert latency.inner_text().startswith("latency ") and " ms" in latency.inner_text()
    summary = run.get_by_test_id("run-summary")
    assert "random (seed 0)" in summary.inner_text()
    # The input's name, an HTML payload, is shown as text.
    assert XSS_NAME in summary.inner_text()
    assert "null" not in summary.inner_text()  # no stray text for the absent problem line

    # One bar per kernel node of the graph executor (dense+relu, softmax).
    bars = run.locator("[data-testid=node-chart] [data-testid=node-bar]")
    assert bars.count() == 2
    kernels = page.locator(f"{LX} [data-testid=kernel-select] option")
    assert bars.count() == kernels.count()
    tips = sorted(bars.locator("title").all_text_contents())
    assert tips[0].startswith(DENSE) and tips[1].startswith(SOFTMAX)

    # Each button runs again: the table and the latency are drawn anew (marks on the old
    # elements are gone), with the seed typed in.
    for button, seed in (("run-button", 7), ("random-button", 3)):
        page.evaluate("""(sel) => { for (const e of document.querySelectorAll(sel))
          e.setAttribute('data-old', '1'); }""",
                      f"{RUN} [data-testid=output-row], {RUN} [data-testid=latency]")
        run.get_by_test_id("seed-input").fill(str(seed))
        run.get_by_test_id(button).click()
        summary.filter(has_text=f"random (seed {seed})").wait_for(timeout=15_000)
        run.locator("[data-testid=latency]:not([data-old])").wait_for()
        assert run.locator("[data-testid=output-row][data-old]").count() == 0
        assert rows.count() == 1 and "pass" in rows.first.inner_text()
        assert run.get_by_test_id("latency").inner_text().startswith("latency ")
        run.get_by_test_id("status").filter(has_text="match the interpreter").wait_for()
    assert bars.count() == 2
    assert page.log.page_errors == []
    _no_injection(page)
    assert _unexpected(console) == [], console


def test_explore_lowering_and_run_tabs(page, voila_url):
    console = _watch_console(page)
    open_notebook(page, voila_url, "explore_small",
                  "[data-testid=graph-view] [data-testid=graph-node]")
    tab = page.locator(".irlab-explorer .lm-TabBar-tab")
    # Graph tab first; the payload is a node label, as text.
    assert page.locator("[data-testid=graph-view] tspan.irlab-label-title",
                        has_text=XSS_NAME).count() >= 1
    tab.filter(has_text="Lowering").click()
    page.locator(LX_READY).first.wait_for(timeout=30_000)  # relay.build ran in the kernel
    assert page.locator(f"{LX} [data-testid=kernel-select] option").count() == 2
    assert "nn.dense" in _texts(page)["relay"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "test_explore_lowering_tab.png"), full_page=True)

    tab.filter(has_text="Run").click()
    page.locator(RUN_READY).first.wait_for(timeout=30_000)
    run = page.locator(RUN)
    assert "pass" in run.get_by_test_id("output-row").first.inner_text()
    assert run.locator("[data-testid=node-bar]").count() == 2
    assert XSS_NAME in run.get_by_test_id("run-summary").inner_text()

    # The run's time per kernel reaches the lowering tab's kernel list.
    tab.filter(has_text="Lowering").click()
    page.locator(f"{LX} [data-testid=kernel-select] option", has_text="ms").first.wait_for(
        state="attached")
    tab.filter(has_text="Run").click()
    assert page.log.page_errors == []
    _no_injection(page)
    assert _unexpected(console) == [], console

