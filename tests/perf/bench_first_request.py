"""Time from `mua eval` process start to the endpoint's first request (target: under 1 s).

Starts ../shared/tools/mock_openai.py on a free port, then launches `mua eval` (tau2 retail, one task, agent and
user on the mock) as a subprocess and polls the mock's /stats every 5 ms until it has seen a request. The figure is
wall time from just before the subprocess is spawned to the first poll that sees the request (so it includes
interpreter start, imports, task loading and request building, plus at most one polling interval). A baseline is
measured in the same run: `python -c pass` spawned the same way, so the ratio is robust to machine load. mua starts
from cached bytecode (a scratch PYTHONPYCACHEPREFIX filled by an unmeasured warm-up run), as an installed package.

    python tests/perf/bench_first_request.py [--repeats 5] [--data-dir ../shared/data]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from mock_endpoint import ROOT, requests_seen, start_mock  # noqa: E402 - beside this file

# mua starts from cached bytecode, as an installed package does (pip compiles on install), even where the
# environment sets PYTHONDONTWRITEBYTECODE: the cache goes to a scratch folder, filled by an unmeasured first run
BYTECODE: dict[str, str] = {}


def time_to_first_request(port: int, data_dir: str, out: str) -> float:
    before = requests_seen(port)
    cmd = [sys.executable, "-c", "import sys; from mua.harness.cli import main; sys.exit(main())", "eval", "--benchmark", "tau2", "--subset", "retail",
           "--limit", "1", "--agent-model", "mock", "--agent-base-url", f"http://127.0.0.1:{port}/v1",
           "--user-model", "mock", "--user-base-url", f"http://127.0.0.1:{port}/v1",
           "--judge-model", "mock", "--judge-base-url", f"http://127.0.0.1:{port}/v1",
           "--no-progress", "--out", out, "--data-dir", data_dir]
    env = dict(os.environ, OPENAI_API_KEY="x", **BYTECODE)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = t0 + 60
        while time.perf_counter() < deadline:
            if requests_seen(port) > before:
                return time.perf_counter() - t0
            if proc.poll() is not None and requests_seen(port) == before:
                raise SystemExit(f"mua eval exited without a request: {proc.stderr.read().decode()[-500:]}")
            time.sleep(0.005)
        raise SystemExit("no request within 60 s")
    finally:
        proc.kill()
        proc.wait()


def python_start() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args()
    mock, port = start_mock()
    try:
        cache = tempfile.TemporaryDirectory(prefix="bench-first-request-pycache-")
        BYTECODE["PYTHONPYCACHEPREFIX"] = cache.name
        with tempfile.TemporaryDirectory() as out:
            time_to_first_request(port, args.data_dir, out)  # warm-up: fills the bytecode cache
        firsts, bases = [], []
        for _ in range(args.repeats):  # interleaved, so load affects both alike
            bases.append(python_start())
            with tempfile.TemporaryDirectory() as out:
                firsts.append(time_to_first_request(port, args.data_dir, out))
        med, base = statistics.median(firsts), statistics.median(bases)
        print(f"mua eval start -> first request: median {med:.3f} s (min {min(firsts):.3f}, max {max(firsts):.3f}),"
              f" {args.repeats} runs")
        print(f"bare python start:               median {base:.3f} s (min {min(bases):.3f}, max {max(bases):.3f})")
        print(f"ratio first-request / python start: {med / base:.1f}x; target < 1 s: {'met' if med < 1 else 'NOT met'}")
    finally:
        mock.kill()
        mock.wait()


if __name__ == "__main__":
    main()
