"""The instant mock endpoint (../shared/tools/mock_openai.py) as the perf scripts start and poll it."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT.parent / "shared" / "tools"
MOCK = TOOLS / "mock_openai.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def requests_seen(port: int) -> int:
    """Requests the mock has answered so far, all roles together (its GET /stats)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=5) as r:
        stats = json.load(r)
    return sum(v for v in stats.values() if isinstance(v, int)) if isinstance(stats, dict) else 0


def wait_up(port: int) -> None:
    for _ in range(400):
        try:
            requests_seen(port)
            return
        except OSError:
            time.sleep(0.025)
    raise SystemExit(f"the mock endpoint on port {port} did not start")


def start_mock() -> tuple[subprocess.Popen, int]:
    """(process, port) of a fresh mock endpoint, answering; the caller kills it."""
    if not MOCK.is_file():
        raise SystemExit(f"{MOCK} not found (the measuring tools live in ../shared/tools)")
    port = free_port()
    mock = subprocess.Popen([sys.executable, str(MOCK), str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_up(port)
    except SystemExit:
        mock.kill()
        raise
    return mock, port


def eval_argv(port: int, tasks: int, trials: int, concurrency: int, out: str, data_dir: str) -> list[str]:
    """`mua eval`'s arguments for tau2 retail with agent, user simulator and NL judge on the mock at ``port``."""
    url = f"http://127.0.0.1:{port}/v1"
    return ["eval", "--benchmark", "tau2", "--subset", "retail", "--limit", str(tasks), "--trials", str(trials),
            "--agent-model", "mock", "--agent-base-url", url, "--user-model", "mock", "--user-base-url", url,
            "--judge-model", "mock", "--judge-base-url", url, "--concurrency", str(concurrency), "--no-progress",
            "--out", out, "--data-dir", data_dir]
