"""Every hostile input of issue 12, fed to the installed `mua` command in a fresh process: each ends with the
expected exit code and a clear message, never a Python traceback. (Each case's behaviour in detail is tested
in test_bad_input.py, test_endpoints.py and test_score_cli.py; this is the sweep over all four commands.)"""
import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mua.harness.cli import main

GOOD = {"benchmark": "tau2", "subset": "retail", "task_id": "0",
        "messages": [{"role": "assistant", "content": "Hi! How can I help you today?"},
                     {"role": "user", "content": "###STOP###"}]}
BAD_LINES = [b'{"benchmark":"tau2","subset":"retail","task_id":"0","messages":[],"x":' + b"9" * 5000 + b"}",
             b'{"benchmark":"tau2","subset":"retail","task_id":"0","messages":' + b"[" * 10000 + b"]" * 10000
             + b"}",
             b'{"benchmark":"tau2","subset":"retail","task_id":"0","messages":[],"variant":NaN}',
             b'{"benchmark":"tau2","subset":"retail","task_id":"\xff\xfe","messages":[]}']


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def world(tmp_path_factory, data_dir) -> dict[str, Path]:
    """A gold run, a torn copy, a copy with a non-numeric reward, a foreign folder, a bad trajectories file."""
    root = tmp_path_factory.mktemp("hostile")
    gold = root / "gold"
    assert main(["eval", "--benchmark", "tau2", "--subset", "retail", "--agent", "gold", "--limit", "2",
                 "--no-progress", "--data-dir", str(data_dir), "--out", str(gold)]) == 0
    torn, damaged = root / "torn", root / "damaged"
    shutil.copytree(gold, torn)
    with open(torn / "episodes.jsonl", "ab") as f:
        f.write('{"subset":"retail","task_id":"0","trial":0,"messages":"caf\u00e9'.encode()[:-1])
    shutil.copytree(gold, damaged)
    lines = (damaged / "episodes.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["reward"] = "PLACEHOLDER"
    lines[0] = json.dumps(first).replace('"PLACEHOLDER"', "NaN")
    (damaged / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    foreign = root / "foreign"
    foreign.mkdir()
    (foreign / "episodes.jsonl").write_text("not json\n")
    trajectories = root / "bad.jsonl"
    trajectories.write_bytes(b"\n".join([json.dumps(GOOD).encode(), *BAD_LINES]) + b"\n")
    blocker = root / "a-file"
    blocker.write_text("")
    return {"gold": gold, "torn": torn, "damaged": damaged, "foreign": foreign, "bad": trajectories,
            "blocker": blocker, "data": data_dir, "root": root}


EVAL = ["eval", "--benchmark", "tau2", "--subset", "retail", "--limit", "1", "--no-progress", "--data-dir", "{data}"]
MODEL = ["--agent-model", "agent", "--user-model", "user"]
CASES = {
    # mua eval: bad flags, dead endpoint, foreign or unwritable output, torn results on resume
    "eval temperature nan": (2, [*EVAL, *MODEL, "--agent-temperature", "nan", "--out", "{root}/e1"]),
    "eval temperature inf": (2, [*EVAL, *MODEL, "--agent-temperature", "inf", "--out", "{root}/e2"]),
    "eval params NaN": (2, [*EVAL, *MODEL, "--agent-params", '{"top_p": NaN}', "--out", "{root}/e3"]),
    "eval timeout_s abc": (2, [*EVAL, *MODEL, "--agent-params", '{"timeout_s": "abc"}', "--out", "{root}/e4"]),
    "eval malformed url": (2, [*EVAL, *MODEL, "--agent-base-url", "http://[::1", "--out", "{root}/e5"]),
    "eval missing checkpoint": (2, [*EVAL, "--agent-model", "{root}/no-such-ckpt", "--user-model", "user",
                                    "--out", "{root}/e6"]),
    "eval dead endpoint": (2, [*EVAL, *MODEL, "--agent-base-url", "http://127.0.0.1:{port}/v1",
                               "--user-base-url", "http://127.0.0.1:{port}/v1", "--out", "{root}/e7"]),
    "eval foreign out": (2, [*EVAL, "--agent", "gold", "--out", "{foreign}"]),
    "eval unwritable out": (2, [*EVAL, "--agent", "gold", "--out", "{blocker}/run"]),
    "eval bad trials": (2, [*EVAL, "--agent", "gold", "--trials", "0", "--out", "{root}/e8"]),
    "eval unknown benchmark": (2, ["eval", "--benchmark", "nope", "--agent", "gold", "--out", "{root}/e9"]),
    # mua score: bad lines become error rows; unwritable or missing files
    "score bad lines": (1, ["score", "--trajectories", "{bad}", "--out", "{root}/s1.jsonl", "--data-dir", "{data}"]),
    "score unwritable out": (2, ["score", "--trajectories", "{bad}", "--out", "{root}/missing/s.jsonl",
                                 "--data-dir", "{data}"]),
    "score missing input": (2, ["score", "--trajectories", "{root}/none.jsonl", "--out", "{root}/s2.jsonl",
                                "--data-dir", "{data}"]),
    # mua leaderboard: torn, damaged and missing runs, unwritable plot
    "leaderboard torn": (0, ["leaderboard", "{torn}"]),
    "leaderboard damaged": (0, ["leaderboard", "{damaged}"]),  # shown, flagged e, the damage named
    "leaderboard missing run": (2, ["leaderboard", "{root}/no-run"]),
    "leaderboard unwritable plot": (2, ["leaderboard", "{gold}", "--plot", "{root}/missing/p.png"]),
    # mua gate: margins, damaged and torn runs, unwritable verdict, power without numbers
    "gate margin 2": (2, ["gate", "--baseline", "{gold}", "--candidate", "{gold}", "--margin", "2"]),
    "gate margin nan": (2, ["gate", "--baseline", "{gold}", "--candidate", "{gold}", "--margin", "nan"]),
    "gate damaged": (2, ["gate", "--baseline", "{gold}", "--candidate", "{damaged}"]),
    "gate torn": (0, ["gate", "--baseline", "{torn}", "--candidate", "{gold}"]),
    "gate unwritable json": (2, ["gate", "--baseline", "{gold}", "--candidate", "{gold}", "--json",
                                 "{root}/missing/v.json"]),
    "gate missing run": (2, ["gate", "--baseline", "{root}/no-run", "--candidate", "{gold}"]),
    "gate power without numbers": (2, ["gate", "--power"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_no_input_ends_in_a_traceback(world, name):
    code, argv = CASES[name]
    values = {k: str(v) for k, v in world.items()} | {"port": str(_free_port())}
    argv = [a.format(**values) if "{" in a and not a.startswith("{\"") else a for a in argv]
    # the console script's own entry point, in a fresh interpreter, as a user would run it
    done = subprocess.run([sys.executable, "-c", "import sys; from mua.harness.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", *argv], capture_output=True, text=True, timeout=120)
    text = done.stdout + done.stderr
    assert "Traceback" not in text, text
    assert done.returncode == code, text
    if name == "leaderboard damaged":
        assert "n=1 et\n" in done.stdout and "reward or a score is not a number" in done.stdout, done.stdout
    if code == 2:
        assert "error:" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
