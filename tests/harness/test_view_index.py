"""`mua view FOLDER` (harness/view/index.py): one page listing every run below a folder, with its benchmark,
model, headline cells, episodes, date and flags, each linked to its own page; in plain HTML/JSON and in a
real browser (headless Chromium)."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

from mua.harness.cli import main
from tests.helpers.browser import dump_dom
from tests.helpers.view_runs import write_run


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    write_run(root / "retail", "good", {"1": 1.0, "2": 1.0})
    write_run(root / "deep" / "er", "<b>hostile</b>", {"1": 0.0, "2": None, "3": "error"})
    broken = root / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"benchmark": "tau2", "tasks": {"airline": ["1"]}, "trials": "x"}')
    (broken / "episodes.jsonl").write_text("")
    return root


def _data(page: str) -> list[dict]:
    blob = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert blob is not None
    return json.loads(blob.group(1))


def test_index_lists_every_run_with_scores_flags_and_links(tmp_path, capsys):
    root = _folder(tmp_path)
    assert main(["view", str(root), "--no-ground-truth"]) == 0
    assert "listing 3 runs" in capsys.readouterr().out
    text = (root / "index.html").read_text(encoding="utf-8")
    rows = {r["path"]: r for r in _data(text)}
    assert list(rows) == ["broken", "deep/er/<b>hostile</b>", "retail/good"]
    good, bad = rows["retail/good"], rows["deep/er/<b>hostile</b>"]
    assert (good["benchmark"], good["model"], good["split"], good["finished"], good["expected"]) == (
        "tau2", "model-a", "base", 2, 2)
    assert good["scores"]["tau2/airline pass^1"].startswith("100.0 [")
    assert bad["scores"]["tau2/airline pass^1"].startswith("0.0 [")  # the one scored task; null/error not 0
    assert any("1 episode errors" in f for f in bad["flags"]) and any("unknown reward" in f for f in bad["flags"])
    assert any(f.startswith("protocol departs:") for f in good["flags"])
    assert rows["broken"]["flags"][0].startswith("unreadable: ") and "'trials'" in rows["broken"]["flags"][0]
    for r in rows.values():  # each run's own page was written (a damaged run's too) and the link reaches it
        assert (root / r["page"]).is_file() and r["page"].endswith("/view.html")
    assert "<b>hostile</b>" not in text.split('id="data"')[0] and "&lt;b&gt;hostile&lt;/b&gt;" in text
    assert "script-src" not in text  # CSP default-src 'none': the page runs no script


def test_index_elsewhere_links_back_and_bad_uses_are_one_line(tmp_path, capsys):
    root = _folder(tmp_path)
    out = tmp_path / "pages" / "all.html"
    out.parent.mkdir()
    assert main(["view", str(root), "--out", str(out), "--no-ground-truth"]) == 0
    for row in _data(out.read_text(encoding="utf-8")):
        assert row["page"] is None or (out.parent / row["page"]).resolve().is_file()
    assert main(["view", str(root), str(root), "--no-ground-truth"]) == 2
    assert "neither RUN2 nor --watch" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["view", str(tmp_path / "empty")]) == 2
    assert "holds no run directory" in capsys.readouterr().err


def test_index_in_a_browser_shows_the_runs_and_opens_a_run(tmp_path):
    root = _folder(tmp_path)
    assert main(["view", str(root), "--no-ground-truth"]) == 0
    dom = dump_dom(root / "index.html")
    assert 'data-total="3">3 runs below' in dom
    assert len(re.findall(r'<tr class="run">', dom)) == 3
    hrefs = [html.unescape(h) for h in re.findall(r'<a href="([^"]+)">', dom)]
    assert len(hrefs) == 3 and all((root / h).is_file() for h in hrefs)
    assert "&lt;b&gt;hostile&lt;/b&gt;" in dom  # a run named like markup shows as text
    run_dom = dump_dom(root / hrefs[2])  # the linked page is a working `mua view` page
    assert 'data-ready="1"' in run_dom
