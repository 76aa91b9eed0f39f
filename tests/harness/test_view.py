"""`mua view`: the payload (rows, flips, explanations), safe embedding of hostile text, CLI errors."""
from __future__ import annotations

import base64
import gzip
import json
import re

from mua.harness.cli import main
from mua.harness.interfaces import Benchmark
from mua.harness.view.page import build_payload, load_source, render_page, safe_json
from tests.helpers.view_runs import HOSTILE, write_run


def _unpack(b64: str) -> dict:
    return json.loads(gzip.decompress(base64.b64decode(b64)).decode("utf-8"))


def _embedded(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="mua-data">(.*?)</script>', page, re.S)
    assert match
    return json.loads(match.group(1))


def test_safe_json_escapes_what_could_end_a_script_or_break_utf8():
    text = safe_json({"m": "</script><!-- \u2028\u2029 \ud800 & >"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    text.encode("utf-8")  # a lone surrogate shows as U+FFFD, so the page stays valid UTF-8
    assert json.loads(text)["m"] == "</script><!-- \u2028\u2029 \ufffd & >"


def test_page_embeds_hostile_text_only_as_escaped_json(tmp_path):
    run = write_run(tmp_path, "run", {"1": 0.0, "2": 1.0})
    page = render_page([load_source(run)])
    page.encode("utf-8")
    assert page.count("<script") == 2  # the payload and the page's own script, nothing a model wrote
    assert "pwned" not in page  # the episode text lives only inside the gzipped details
    detail = _unpack(_embedded(page)["runs"][0]["details"][0])
    assert HOSTILE.replace("\ud800", "\ufffd") in [m["content"] for m in detail["messages"]]


def test_rows_summaries_and_adapter_explanation(tmp_path):
    run = write_run(tmp_path, "run", {"1": 0.0, "2": 1.0, "3": None, "4": "error"})
    payload = build_payload([load_source(run)])
    rows = {r["task"]: r["runs"][0] for r in payload["rows"]}
    assert rows["1"]["pass"] is False and rows["2"]["pass"] is True
    assert rows["3"]["reward"] is None and rows["3"]["pass"] is None  # unknown stays unknown, never 0
    assert rows["4"]["error"] == "model error: timeout" and rows["1"]["tokens"] == 120
    detail = _unpack(payload["runs"][0]["details"][0])
    assert "gold action not matched: cancel_EHGLP3_refund" in detail["why"]  # the tau2 adapter's explain
    unknown = _unpack(payload["runs"][0]["details"][2])
    assert "nl_assertion: not computed (unknown)" in unknown["why"]


def test_default_explain_names_failed_and_skipped_components():
    found = Benchmark.explain({"a": 1.0, "b": 0.0, "c": None}, {})
    assert [(f.component, str(f)) for f in found] == [("b", "b: 0"), ("c", "c: not computed (unknown)")]


def test_unknown_benchmark_falls_back_to_the_default_explanation(tmp_path):
    run = write_run(tmp_path, "run", {"1": 0.0})
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**config, "benchmark": "not-installed"}))
    detail = _unpack(build_payload([load_source(run)])["runs"][0]["details"][0])
    assert detail["why"] == ["db: 0", "action: 0"]


def test_two_runs_pair_tasks_and_mark_flips(tmp_path):
    a = write_run(tmp_path, "a", {"1": 1.0, "2": 0.0, "3": 1.0})
    b = write_run(tmp_path, "b", {"1": 0.0, "2": 1.0, "4": 1.0})
    payload = build_payload([load_source(a), load_source(b)])
    at = {r["task"]: r["at"] for r in payload["rows"]}
    assert at == {"1": [0, 0], "2": [1, 1], "3": [2, None], "4": [None, 2]}


def test_cli_writes_the_page_and_rejects_a_non_run(tmp_path, capsys):
    run = write_run(tmp_path, "run", {"1": 0.0})
    assert main(["view", str(run)]) == 0
    assert (run / "view.html").is_file()
    assert main(["view", str(tmp_path / "nothing"), "--out", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "neither a run directory" in err and len(err.strip().splitlines()) == 1
