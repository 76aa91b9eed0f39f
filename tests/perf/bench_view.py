"""Size and opening time of a `mua view` page for a large run, measured in headless Chromium.

    python tests/perf/bench_view.py [--episodes 10000] [--turns 12]

Builds a synthetic run: the committed retail gold episodes cycled to --episodes rows, each given --turns extra
user/agent exchanges of model-like prose (seeded), every 4th episode failing. Prints the episodes.jsonl size,
the page size, the time `mua view` takes to write it, and the time to open it in headless Chromium (launch to
DOM dump, with one episode's detail unpacked), next to the same figures for a 10-episode page of the same
episodes measured in the same run (the baseline: browser start-up), plus the page's own time to interactive
(performance.now() when its script finished). Needs `chromium` on PATH.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT)]

from mua.harness.results.store import dumps  # noqa: E402
from mua.harness.view.page import write_view  # noqa: E402
from tests.helpers.browser import FLAGS  # noqa: E402

GOLD = ROOT / "results" / "baselines" / "tau2-retail-gold"


def make_run(root: Path, episodes: int, turns: int, seed: int = 0) -> Path:
    rng = random.Random(seed)
    gold = [json.loads(line) for line in (GOLD / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]
    words = sorted(set(re.findall(r"[A-Za-z]{3,}", json.dumps(gold))))
    run = root / f"run-{episodes}"
    run.mkdir()
    tasks = [f"{i}" for i in range(episodes)]
    config = {"benchmark": "tau2", "subsets": ["retail"], "split": "base", "trials": 1, "seed": 0,
              "agent": {"name": "bench"}, "tasks": {"retail": tasks}}
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with open(run / "episodes.jsonl", "w", encoding="utf-8") as f:
        for i, task in enumerate(tasks):
            row = dict(gold[i % len(gold)], task_id=task)
            messages = list(row["messages"])
            for _ in range(turns):
                for role in ("user", "assistant"):
                    messages.insert(-1, {"role": role, "content": " ".join(rng.choices(words, k=70))})
            row["messages"] = messages
            if i % 4 == 0:
                row.update(reward=0.0, components={**row["components"], "db": 0.0},
                           info={**row["info"], "db_match": False, "actions_unmatched": ["exchange_1"]})
            f.write(dumps(row) + "\n")
    return run


def open_seconds(page: Path) -> tuple[float, int]:
    """Launch to DOM dump (one episode unpacked), and the page's own ready time in ms."""
    with tempfile.TemporaryDirectory() as profile:
        start = time.perf_counter()
        dom = subprocess.run(["chromium", *FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                              page.resolve().as_uri() + "#ep=0"], capture_output=True, text=True, timeout=600,
                             check=True).stdout
        elapsed = time.perf_counter() - start
    ready = re.search(r'data-ready-ms="(\d+)"', dom)
    if not ready or 'data-loaded="0"' not in dom:
        raise SystemExit("the page did not finish loading")
    return elapsed, int(ready.group(1))


def measure(root: Path, episodes: int, turns: int) -> dict:
    run = make_run(root, episodes, turns)
    start = time.perf_counter()
    page = write_view([run], root / f"view-{episodes}.html")
    write = time.perf_counter() - start
    opened, ready = min(open_seconds(page) for _ in range(2))
    return {"episodes": episodes, "jsonl_mb": (run / "episodes.jsonl").stat().st_size / 1e6,
            "page_mb": page.stat().st_size / 1e6, "write_s": write, "open_s": opened, "ready_ms": ready}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10000)
    parser.add_argument("--turns", type=int, default=12)
    args = parser.parse_args()
    if not shutil.which("chromium"):
        raise SystemExit("needs chromium on PATH (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        base = measure(Path(tmp), 10, args.turns)
        big = measure(Path(tmp), args.episodes, args.turns)
    for r in (base, big):
        print(f"{r['episodes']:>6} episodes: episodes.jsonl {r['jsonl_mb']:.1f} MB, page {r['page_mb']:.1f} MB, "
              f"mua view {r['write_s']:.1f} s, open in headless Chromium {r['open_s']:.2f} s "
              f"(page ready after {r['ready_ms']} ms)")
    print(f"ratio {big['episodes']}/{base['episodes']} episodes: page size x{big['page_mb'] / base['page_mb']:.0f}, "
          f"open time x{big['open_s'] / base['open_s']:.2f} (+{big['open_s'] - base['open_s']:.2f} s over "
          f"browser start-up), page {big['page_mb'] / big['jsonl_mb']:.2f} x the episodes.jsonl size")


if __name__ == "__main__":
    main()
