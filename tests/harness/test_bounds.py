"""Every wait has a visible bound: every numeric flag of every command is checked as it is parsed (one line,
exit 2, before any work); a judge that stops answering in `mua score` stops the command after --stall-timeout;
`mua train` reports a dead user endpoint before loading its policy, within the bound `mua eval` has (< 30 s)."""
import argparse
import asyncio
import json
import socket
import subprocess
import sys
import threading
import time

import pytest

from mua.harness.cli import build_parser
from mua.harness.errors import ModelError
from mua.harness.run.build import Models
from mua.harness.run.endpoints import watched

BAD_FLAGS = [
    ["score", "--trajectories", "t.jsonl", "--out", "o.jsonl", "--concurrency", "0"],
    ["score", "--trajectories", "t.jsonl", "--out", "o.jsonl", "--concurrency", "-3"],
    ["score", "--trajectories", "t.jsonl", "--out", "o.jsonl", "--stall-timeout", "nan"],
    ["score", "--trajectories", "t.jsonl", "--out", "o.jsonl", "--request-timeout", "0"],
    ["sft", "--policy", "p", "--dataset", "d", "--output-dir", "o", "--epochs", "-1"],
    ["sft", "--policy", "p", "--dataset", "d", "--output-dir", "o", "--max-steps", "0"],
    ["sft", "--policy", "p", "--dataset", "d", "--output-dir", "o", "--learning-rate", "inf"],
    ["sft", "--policy", "p", "--dataset", "d", "--output-dir", "o", "--batch-size", "0"],
    ["eval", "--benchmark", "tau2", "--agent", "gold", "--concurrency", "0"],
    ["eval", "--benchmark", "tau2", "--agent", "gold", "--limit", "abc"],
    ["eval", "--benchmark", "tau2", "--agent-model", "a", "--agent-temperature", "-1"],
    ["eval", "--benchmark", "tau2", "--agent", "gold", "--max-error-streak", "-1"],
    ["gate", "--power", "--simulations", "0"],
    ["gate", "--power", "--tasks", "10", "--trials", "1", "--pass-rate", "nan"],
    ["gate", "--power", "--tasks", "10", "--trials", "1", "--pass-rate", "0.5", "--target-power", "inf"],
    ["gate", "--power", "--tasks", "1e3"],
    ["leaderboard", "run", "--resamples", "-5"],
    ["export", "run", "--out", "o", "--min-reward", "nan"],
    ["model", "tiny", "out", "--seed", "-1"],
]


def mua(argv, timeout=60, cwd=None) -> tuple[int, str, float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", "import sys; from mua.harness.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", *argv], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done.returncode, done.stderr, time.monotonic() - started


# fractions checked after parsing, with their fellow settings, before any work, each with its own range (one
# line, exit 2): a model's flags (common.model_spec), the gate's and power's (gate.py, power.py), the
# leaderboard's confidence
CHECKED_AFTER_PARSING = ("-temperature", "--request-timeout", "--margin", "--confidence", "--max-error-rate",
                         "--pass-rate", "--target-power", "--port")


def test_every_numeric_flag_is_checked():
    """No command takes a bare int or float: each numeric flag names the values it accepts (or is one of the
    model flags that model_spec checks before any work)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    bare = []
    for name, command in sub.choices.items():
        for group in [command, *[a for a in command._actions if isinstance(a, argparse._SubParsersAction)]]:
            for action in getattr(group, "_actions", []):
                if action.type in (int, float) and not any(o.endswith(CHECKED_AFTER_PARSING)
                                                           for o in action.option_strings):
                    bare.append(f"mua {name} {'/'.join(action.option_strings) or action.dest}")
    assert not bare, bare


@pytest.mark.parametrize("argv", BAD_FLAGS, ids=[" ".join(a[:1] + a[-2:]) for a in BAD_FLAGS])
def test_a_bad_number_is_one_line(argv, tmp_path):
    (tmp_path / "t.jsonl").write_text("")  # the one input file a case names exists: only the number is wrong
    rc, err, seconds = mua(argv, cwd=tmp_path)
    # the flag as typed, or (sft and train read settings through TRL's parser) its config key
    named = argv[-2] in err or argv[-2].lstrip("-").replace("-", "_") in err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "error:" in err and named, err
    assert seconds < 30


class _Silent:
    def __init__(self):
        self.started = time.monotonic()

    def silent_for(self):
        return time.monotonic() - self.started


def test_watched_stops_a_silent_endpoint():
    async def forever():
        await asyncio.sleep(3600)

    started = time.monotonic()
    with pytest.raises(ModelError, match="has not answered for .* s while requests wait; stopping. Fix it"):
        asyncio.run(watched(forever(), Models(judge=_Silent()), 0.4, "Fix it"))
    assert time.monotonic() - started < 3

    async def quick():
        return 7
    assert asyncio.run(watched(quick(), Models(judge=_Silent()), 0.4, "")) == 7


def _half_alive_server() -> tuple[str, callable]:
    """Answers GET /models (so the preflight passes), never answers a chat request."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    stop = threading.Event()

    def serve(conn):
        data = conn.recv(65536)
        if data.startswith(b"GET"):
            body = b'{"data": []}'
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)
            conn.close()
        else:
            stop.wait(60)  # hangs, as a stuck server does
            conn.close()

    def accept():
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{sock.getsockname()[1]}/v1", stop.set


def test_score_stops_when_the_judge_hangs(tmp_path, data_dir):
    # retail task 2 has NL assertions: scoring it calls the judge
    line = {"benchmark": "tau2", "subset": "retail", "task_id": "2",
            "messages": [{"role": "assistant", "content": "Hi! How can I help you today?"},
                         {"role": "user", "content": "###STOP###"}]}
    (tmp_path / "t.jsonl").write_text(json.dumps(line) + "\n")
    url, stop = _half_alive_server()
    try:
        rc, err, seconds = mua(["score", "--trajectories", str(tmp_path / "t.jsonl"), "--out",
                                str(tmp_path / "o.jsonl"), "--data-dir", str(data_dir), "--judge-model", "judge",
                                "--judge-base-url", url, "--stall-timeout", "2"])
    finally:
        stop()
    assert rc == 2 and "has not answered for" in err and len(err.strip().splitlines()) == 1, err
    assert seconds < 15, seconds  # without the stall bound: the 600 s request timeout, then retries
    assert not (tmp_path / "o.jsonl").exists()


def test_train_reports_a_dead_user_endpoint_before_loading(tmp_path, data_dir):
    policy = tmp_path / "policy"  # never loaded: the endpoint is checked first
    policy.mkdir()
    (policy / "config.json").write_text("{}")
    (policy / "tokenizer.json").write_text("{}")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    rc, err, seconds = mua(["train", "--benchmark", "tau2", "--subsets", "retail", "--split", "train",
                            "--policy", str(policy), "--output-dir", str(tmp_path / "out"), "--data-dir",
                            str(data_dir), "--user-model", "user", "--user-base-url",
                            f"http://127.0.0.1:{port}/v1"], timeout=120)
    assert rc == 2 and "cannot be reached" in err and len(err.strip().splitlines()) == 1, err
    assert seconds < 30, seconds
