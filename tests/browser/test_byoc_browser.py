"""The explorer's BYOC views in a real browser (Voila + Chromium, see conftest.py), on a model
partitioned for ``ccompiler`` (add+relu and multiply as C source, exp native), its input
named like an HTML payload.

Checks: the graph view draws the partitioned region as a cluster in the compiler's colours;
the LoweringExplorer lists the external kernel beside the native one and shows its Relay
function and generated C source (``#include <math.h>`` as text) with the TIR/LLVM panes
hidden; the RunPanel tags and colours the external kernel's bar and sums time per compiler;
nothing from the payload becomes markup. Screenshots: ``tests/browser/artifacts/<test>.png``.
"""

from __future__ import annotations

from voila_support import XSS_NAME, open_notebook

from irlab.viz.dot import compiler_color

LX = "[data-testid=lowering-explorer]"
RUN = "[data-testid=run-panel]"
SYMBOL = "tvmgen_default_ccompiler_main_0"
READY = f"{RUN} [data-testid=output-row]"


def _no_injection(page):
    page.wait_for_timeout(300)  # an <img onerror> would fire right after insertion
    assert page.log.dialogs == [], page.log.dialogs
    injected = page.evaluate(
        "() => [...document.querySelectorAll('img')].filter("
        "i => i.getAttribute('src') === 'x' || i.hasAttribute('onerror')).length")
    assert injected == 0


def _pane_text(page, key):
    return page.evaluate("""(k) => [...document.querySelectorAll(
      `[data-testid=lowering-explorer] [data-testid=pane-${k}] .irlab-irline .code`)]
      .map((c) => c.textContent).join('\\n')""", key)


def test_byoc_region_source_and_times(page, voila_url):
    open_notebook(page, voila_url, "byoc", READY)
    page.locator("[data-testid=graph-view] [data-testid=graph-node]").first.wait_for()

    # Graph: the region is a cluster labelled with its compiler, in the compiler's colours.
    region = page.locator("[data-testid=graph-cluster][data-compiler=ccompiler]")
    assert region.count() == 1
    assert region.locator(".irlab-cluster-label").text_content() == f"ccompiler: {SYMBOL}"
    fill, stroke = compiler_color("ccompiler")
    style = region.locator("rect").first.evaluate(
        "(r) => [getComputedStyle(r).fill, getComputedStyle(r).stroke]")
    rgb = ["rgb(%d, %d, %d)" % tuple(int(c[i:i + 2], 16) for i in (1, 3, 5))
           for c in (fill, stroke)]
    assert style == rgb
    # the input (the payload) is a node label, as text
    assert page.locator("[data-testid=graph-view] tspan.irlab-label-title",
                        has_text=XSS_NAME).count() >= 1

    # Lowering: the external kernel beside the native one; its source beside its Relay.
    options = page.locator(f"{LX} [data-testid=kernel-select] option").all_text_contents()
    assert any(o.startswith(SYMBOL) and "external: ccompiler" in o for o in options)
    assert len(options) == 2
    page.locator(f"{LX} [data-testid=kernel-select]").select_option(SYMBOL)
    source = page.locator(f"{LX} [data-testid=pane-source]")
    source.locator(".irlab-irline").first.wait_for()
    text = _pane_text(page, "source")
    assert "#include <math.h>" in text and f"int32_t {SYMBOL}(int64_t* args)" in text
    assert 'Compiler="ccompiler"' in _pane_text(page, "relay")
    assert page.locator(f"{LX} [data-testid=pane-title-source]").text_content() == \
        "ccompiler source (c)"
    for hidden in ("te", "scheduled", "lowered", "llvm", "asm"):
        assert not page.locator(f"{LX} .irlab-lx-pane[data-pane={hidden}]").is_visible()
    assert page.locator(f"{LX} .irlab-lx-grid.irlab-lx-external").count() == 1

    # Run: the external kernel's bar is tagged and coloured; time per compiler.
    run = page.locator(RUN)
    bar = run.locator("[data-testid=node-bar][data-compiler=ccompiler]")
    assert bar.count() == 1
    assert bar.locator("title").text_content().startswith(f"[ccompiler] {SYMBOL}")
    split = run.get_by_test_id("compiler-split").text_content()
    assert split.startswith("per compiler: ") and "ccompiler" in split and "irlab" in split
    assert "pass" in run.get_by_test_id("output-row").first.inner_text()
    assert page.log.page_errors == []
    _no_injection(page)
