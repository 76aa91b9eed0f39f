"""`mua view` pages in a real browser (headless Chromium): the DOM after the page's script ran shows the
episode count, a tool call, a failure explanation and injected markup as text, never run; a screenshot is
saved (docs/view.png is made by test_view_ground.py)."""
from __future__ import annotations

import re

from mua.harness.view.page import write_view
from tests.helpers.browser import dump_dom, screenshot
from tests.helpers.view_runs import write_run


def _detail(dom: str) -> str:
    start = dom.index('id="detail"')
    return dom[start:dom.index("</main>", start)]


def test_page_renders_episodes_explanations_and_hostile_text_as_text(tmp_path):
    run = write_run(tmp_path, "run", {"cancel-1": 0.0, "2": 1.0, "3": None, "4": "error"})
    page = write_view([run], tmp_path / "view.html")
    dom = dump_dom(page, "ep=0")
    assert re.search(r'id="count" data-total="4">4 episodes<', dom)
    assert 'data-ready="1"' in dom  # the page's own script ran to the end
    assert "unknown/incomplete" in dom and ">error<" in dom  # a null reward is never shown as 0
    detail = _detail(dom)
    assert 'data-loaded="0"' in detail
    assert 'data-call="cancel_reservation"' in detail and "EHGLP3" in detail  # a tool call with its arguments
    assert "gold action not matched: cancel_EHGLP3_refund" in detail  # the scorer's finding
    assert "user's own tool call" in detail and "user's device" in detail  # telecom-style user device calls
    assert "pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]  # no injected handler or script ran
    assert "&lt;script&gt;document.body.dataset.pwned" in detail  # ...and it is shown as text
    assert "<img src=" not in detail and "<script>document" not in detail
    assert "مرحبا بالعالم 你好世界" in detail
    assert "<details" in detail  # the long tool result is folded
    shot = screenshot(page, tmp_path / "view.png", "ep=0")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5000


def test_compare_page_lists_flipped_tasks_first_side_by_side(tmp_path):
    a = write_run(tmp_path, "a", {"same": 1.0, "fixed": 0.0, "regressed": 1.0})
    b = write_run(tmp_path, "b", {"same": 1.0, "fixed": 1.0, "regressed": 0.0})
    page = write_view([a, b], tmp_path / "compare.html")
    dom = dump_dom(page, "ep=2")
    body = dom[dom.index('id="tbody"'):]
    first_rows = [m.group(1) for m in re.finditer(r'<tr class="ep[^"]*flip-(\w+)', body)]
    assert first_rows == ["regressed", "fixed"]  # flipped first, regressions before fixes
    assert body.index("flip-fixed") < body.index(">same<")
    detail = _detail(dom)
    assert detail.count('class="col"') == 2 and "A: a" in detail and "B: b" in detail
