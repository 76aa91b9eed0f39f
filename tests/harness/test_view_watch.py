"""`mua view --watch`: a page opened while a run is going gains the episodes that finish after it was opened
(rows appended to episodes.jsonl while the page is open, seen in headless Chromium); the server answers on
127.0.0.1 only and refuses other hosts; only new rows are packed again."""
from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request

import pytest

from mua.harness.cli import main
from mua.harness.results.store import dumps
from mua.harness.view.watch import WatchServer
from tests.helpers.browser import dump_url
from tests.helpers.view_runs import episode, write_run


class AppendingServer(WatchServer):
    """Appends one finished episode to the run each time the page asks, for the first two asks: as if
    episodes finished while the page was open."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked = 0

    def payload(self, known):
        self.asked += 1
        if self.asked <= 2:
            with (self.paths[0] / "episodes.jsonl").open("a", encoding="utf-8") as f:
                f.write(dumps(episode(f"late-{self.asked}", 1.0)) + "\n")
        return super().payload(known)


@pytest.fixture
def serving(tmp_path):
    servers = []

    def start(server_class, *args, **kwargs):
        server = server_class(*args, **kwargs)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_page_opened_during_a_run_gains_episodes_as_they_finish(tmp_path, serving):
    run = write_run(tmp_path, "run", {"1": 0.0, "2": 1.0})
    server = serving(AppendingServer, [run], tmp_path / "no-data")
    dom = dump_url(server.url)
    assert server.asked >= 3  # the page kept asking
    assert re.search(r'data-seen="2,3,4"', dom)  # opened with 2 episodes, then gained one at a time
    assert re.search(r'id="count" data-total="4">4 episodes<', dom)
    assert ">late-1<" in dom and ">late-2<" in dom
    assert "live: updated" in dom


def test_server_is_loopback_only_and_answers_204_when_nothing_changed(tmp_path, serving):
    run = write_run(tmp_path, "run", {"1": 0.0})
    server = serving(WatchServer, [run], tmp_path / "no-data")
    assert server.server_address[0] == "127.0.0.1"
    page = urllib.request.urlopen(server.url).read().decode()
    version = json.loads(re.search(r'id="mua-data">(.*?)</script>', page, re.S).group(1))["watch"]["version"]
    assert "connect-src 'self'" in page
    answer = urllib.request.urlopen(f"{server.url}payload.json?v={version}")
    assert answer.status == 204
    with (run / "episodes.jsonl").open("a") as f:
        f.write(dumps(episode("2", 1.0)) + "\n")
    packed_before = dict(server.sources[0].packed)
    fresh = json.loads(urllib.request.urlopen(f"{server.url}payload.json?v={version}").read())
    assert len(fresh["rows"]) == 2 and fresh["watch"]["version"] > version
    assert set(packed_before) < set(server.sources[0].packed)  # the old row was not packed again
    request = urllib.request.Request(server.url, headers={"Host": "evil.example:80"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    assert refused.value.code == 403


def test_watch_flags_are_checked_in_one_line(tmp_path, capsys):
    run = write_run(tmp_path, "run", {"1": 0.0})
    assert main(["view", str(run), "--watch", "--port", "70000"]) == 2
    assert main(["view", str(run), "--watch", "--out", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "--port must be between" in err[0] and "drop --out" in err[1]


def test_a_watched_training_output_gains_samples(tmp_path):
    from tests.harness.test_view_training import _sample, write_training_output

    out = write_training_output(tmp_path)
    server = WatchServer([out], port=0)
    try:
        first = json.loads(server.payload(None))
        assert len(first["rows"]) == 6 and server.payload(str(first["watch"]["version"])) is None
        (out / "samples" / "step-11.0.jsonl").write_text(json.dumps(_sample("easy/0", 1.0, True)) + "\n")
        later = json.loads(server.payload(str(first["watch"]["version"])))
        assert len(later["rows"]) == 7 and later["rows"][-1]["subset"] == 11
        assert [s["step"] for s in later["runs"][0]["steps"]] == [2, 9, 10, 11]
    finally:
        server.server_close()
