"""Dead, hung and stalling endpoints end a run quickly with one clear line naming the URL; bad model flags fail
before anything starts."""
import asyncio
import socket
import threading
import time

import pytest
from mock_openai import Faults, MockOpenAI, text_reply

from mua.harness.cli import main


def _eval(data_dir, out, url, *extra) -> int:
    return main(["eval", "--benchmark", "tau2", "--subset", "retail", "--limit", "2", "--no-progress",
                 "--agent-model", "agent", "--agent-base-url", url, "--user-model", "user", "--user-base-url", url,
                 "--data-dir", str(data_dir), "--out", str(out), *extra])


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    return lines[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SilentServer:
    """Accepts connections and never answers (a hung server)."""

    def __enter__(self) -> str:
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        async def serve():
            async def hold(reader, writer):
                await reader.read()  # until the client gives up
            self.server = await asyncio.start_server(hold, "127.0.0.1", 0)
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()

        self.thread = threading.Thread(target=lambda: (self.loop.run_until_complete(serve()),
                                                       self.loop.run_forever()), daemon=True)
        self.thread.start()
        ready.wait(5)
        return f"http://127.0.0.1:{self.port}/v1"

    def __exit__(self, *exc) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def test_nothing_listening_fails_at_once(tmp_path, data_dir, capsys):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    start = time.monotonic()
    assert _eval(data_dir, tmp_path / "run", url) == 2
    assert time.monotonic() - start < 10
    line = _one_line(capsys)
    assert f"127.0.0.1:{url.split(':')[2].split('/')[0]}" in line and "cannot be reached" in line


def test_a_server_that_never_answers_fails_within_seconds(tmp_path, data_dir, capsys):
    with SilentServer() as url:
        start = time.monotonic()
        assert _eval(data_dir, tmp_path / "run", url, "--request-timeout", "2") == 2
        assert time.monotonic() - start < 15
    line = _one_line(capsys)
    assert url.removesuffix("/v1") in line and "did not answer within 2 s" in line


def test_an_endpoint_that_stops_answering_ends_the_run_resumably(tmp_path, data_dir, capsys):
    # Every chat request hangs; the server still answers the preflight.
    with MockOpenAI(lambda r: text_reply("###STOP###"), faults=Faults(sequence=("hang",) * 100, hang_s=60)) as url:
        start = time.monotonic()
        assert _eval(data_dir, tmp_path / "run", url, "--stall-timeout", "2", "--request-timeout", "50") == 2
        assert time.monotonic() - start < 20
    line = _one_line(capsys)
    assert "has not answered" in line and url in line and "re-run the same command to resume" in line
    assert (tmp_path / "run" / "config.json").is_file()


@pytest.mark.parametrize("flags, says", [
    (["--agent-temperature", "nan"], "--agent-temperature must be a finite number"),
    (["--agent-temperature", "inf"], "--agent-temperature must be a finite number"),
    (["--agent-params", '{"top_p": NaN}'], "--agent-params is not valid JSON: NaN"),
    (["--agent-params", '{"timeout_s": "abc"}'], "timeout_s must be a positive number"),
    (["--request-timeout", "0"], "--request-timeout must be a finite positive number"),
    (["--agent-base-url", "http://[::1"], "is malformed"),
    (["--agent-base-url", "127.0.0.1:8000/v1"], "is not an http(s) URL"),
])
def test_bad_model_flags_fail_up_front(tmp_path, data_dir, capsys, flags, says):
    argv = ["eval", "--benchmark", "tau2", "--subset", "retail", "--limit", "1", "--no-progress",
            "--agent-model", "agent", "--user-model", "user", "--data-dir", str(data_dir),
            "--out", str(tmp_path / "run"), *flags]
    assert main(argv) == 2
    assert says in _one_line(capsys)
    assert not (tmp_path / "run").exists()  # nothing started


def test_a_checkpoint_path_that_does_not_exist_is_not_sent_as_a_model_name(tmp_path, data_dir, capsys):
    argv = ["eval", "--benchmark", "tau2", "--subset", "retail", "--limit", "1", "--no-progress",
            "--agent-model", str(tmp_path / "no-such-ckpt"), "--user-model", "user", "--data-dir", str(data_dir),
            "--out", str(tmp_path / "run")]
    assert main(argv) == 2
    assert "no such checkpoint directory" in _one_line(capsys)
