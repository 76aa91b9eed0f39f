"""Throughput of OpenAIChatModel against the instant mock server (a subprocess, so the two CPU figures are
apart). Prints requests/s at concurrency 1, 32 and 128 and CPU milliseconds per request for the client and
for the mock. Each request carries a tau2-sized conversation: a 4 KB system prompt, 10 messages, 15 tools.

    python tests/perf/bench_client.py [--requests 3000] [--fault-rate 0]

Budget it is measured against: ~75 episodes/s of ~5-10 requests on 2 cores, i.e. ~750 requests/s for the whole
harness, so the client should stay well under 1 ms of CPU per request.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from mua.harness.models import OpenAIChatModel, RetryPolicy
from mua.harness.types import Message, ToolSpec

MOCK = Path(__file__).resolve().parents[1] / "mock_openai.py"


def conversation() -> tuple[list[Message], list[ToolSpec]]:
    messages = [Message(role="system", content="You are a retail support agent. " * 128)]
    for i in range(3):
        messages.append(Message(role="user", content=f"Please check order #W{i:07d}, it has not arrived yet."))
        messages.append(Message(role="assistant", content=f"Looking up order #W{i:07d} for you now."))
        messages.append(Message(role="user", content="Thanks, and can you also change the address?"))
    params = {"type": "object", "properties": {"order_id": {"type": "string", "description": "The order id."},
                                               "reason": {"type": "string", "enum": ["no longer needed", "other"]}},
              "required": ["order_id"]}
    tools = [ToolSpec(f"tool_{i}", "Does one retail operation on an order. " * 4, params) for i in range(15)]
    return messages, tools


def cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def mock_stats(base_url: str) -> dict:
    with urllib.request.urlopen(base_url.rsplit("/v1", 1)[0] + "/stats") as r:
        return json.loads(r.read())


async def level(base_url: str, concurrency: int, n: int) -> dict:
    messages, tools = conversation()
    model = OpenAIChatModel("agent", base_url, timeout_s=5,
                            retry=RetryPolicy(max_attempts=50, initial_wait_s=0.001, max_wait_s=0.01))
    await model.chat(messages, tools)  # open the first connection before timing
    queue = iter(range(n))

    async def worker() -> None:
        for _ in queue:
            await model.chat(messages, tools, seed=0)

    m0, c0, t0 = mock_stats(base_url)["cpu_s"], cpu_s(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall, c1, m1 = time.perf_counter() - t0, cpu_s(), mock_stats(base_url)["cpu_s"]
    await model.aclose()
    return {"concurrency": concurrency, "requests": n, "rps": n / wall,
            "client_ms": 1000 * (c1 - c0) / n, "mock_ms": 1000 * (m1 - m0) / n}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--fault-rate", type=float, default=0.0, help="inject mock faults (no hangs) at this rate")
    args = ap.parse_args()
    cmd = [sys.executable, str(MOCK), "--port", "0", "--fault-rate", str(args.fault_rate),
           "--fault-kinds", "429,500,503,malformed,no_choices,truncated,drop"]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
        try:
            base_url = proc.stdout.readline().split()[1]
            rows = [asyncio.run(level(base_url, 1, max(200, args.requests // 10)))]
            rows += [asyncio.run(level(base_url, c, args.requests)) for c in (32, 128)]
            stats = mock_stats(base_url)
        finally:
            proc.terminate()
    print(f"{'concurrency':>11} {'requests':>8} {'req/s':>8} {'client CPU ms/req':>18} {'mock CPU ms/req':>16}")
    for r in rows:
        print(f"{r['concurrency']:>11} {r['requests']:>8} {r['rps']:>8.0f} {r['client_ms']:>18.3f} "
              f"{r['mock_ms']:>16.3f}")
    print(f"mock saw {stats['requests']} requests, faults {stats['faults'] or 'none'}")


if __name__ == "__main__":
    main()
