"""TuningMonitor in a real browser (Voila + Chromium, see conftest.py): the per-task table,
the best-so-far curves, the network curve and the rank-correlation dots are drawn from the
synced state; a round fed from the kernel (a button, as a tuning run does while its cell
runs) redraws them; a task named like an HTML payload is shown as text and runs nothing.
Screenshot: ``tests/browser/artifacts/test_tuning_monitor.png``."""

from __future__ import annotations

from voila_support import ARTIFACTS, XSS_NAME, open_notebook

MON = "[data-testid=tuning-monitor]"


def test_tuning_monitor_draws_and_updates(page, voila_url):
    open_notebook(page, voila_url, "tuning", f"{MON} [data-testid=task-row]")
    mon = page.locator(MON)
    rows = mon.get_by_test_id("task-row")
    assert rows.count() == 2
    assert XSS_NAME in rows.nth(1).inner_text()  # the payload is text
    assert mon.locator("[data-testid=task-curves] [data-testid=curve]").count() == 2
    assert mon.locator("[data-testid=network-curve] [data-testid=curve]").count() == 1
    assert mon.locator("[data-testid=rho-dot]").count() == 2
    assert "8 / 12 trials" in mon.get_by_test_id("status").inner_text()

    page.locator(".more-round").first.click()  # the kernel sends the new state
    page.locator(f"{MON} [data-testid=rho-dot]").nth(2).wait_for(state="attached")
    assert "12 / 12 trials" in mon.get_by_test_id("status").inner_text()
    assert "250.0000" in rows.nth(0).inner_text()  # the new best of task 0, in ms
    # the task curves were redrawn: the chart's x axis now ends at trial 12
    assert "12" in mon.get_by_test_id("task-curves").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "test_tuning_monitor.png"), full_page=True)
    assert page.log.dialogs == [] and page.log.page_errors == []
    assert page.locator("img[src=x]").count() == 0
