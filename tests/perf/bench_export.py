"""Rows per second of `mua export` on a large run of the bookings pack (880 tasks).

    python tests/perf/bench_export.py [--rows 1000 10000]

Plays the gold agent on 20 tasks of the bookings example pack (`mua eval`), then builds a synthetic run of
--rows rows from those episodes: row i is task i mod 880 (its recorded messages cycled from the gold
episodes), trial i div 880. Times `export_rows` over the whole run (the JSONL write is left out) and prints
rows/s for each size; time linear in rows shows as the same rows/s at every size.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT)]

from mua.benchmarks.pack import PackBenchmark  # noqa: E402
from mua.harness.cli import main  # noqa: E402
from mua.harness.results.store import dumps  # noqa: E402
from mua.harness.tools.export import export_rows  # noqa: E402

PACK = ROOT / "benchmarks/pack/examples/bookings"


def gold_run(root: Path) -> Path:
    out = root / "gold"
    code = main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent", "gold", "--split", "train",
                 "--limit", "20", "--out", str(out), "--no-progress"])
    if code != 0:
        raise SystemExit(f"mua eval of the gold agent failed ({code})")
    return out


def make_run(root: Path, gold: Path, rows: int) -> Path:
    episodes = [json.loads(line) for line in (gold / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]
    task_ids = [str(t["id"]) for t in json.loads((PACK / "tasks.json").read_text(encoding="utf-8"))]
    config = json.loads((gold / "config.json").read_text(encoding="utf-8"))
    config.update(split=None, trials=rows // len(task_ids) + 1)
    run = root / f"run-{rows}"
    run.mkdir()
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with open(run / "episodes.jsonl", "w", encoding="utf-8") as f:
        for i in range(rows):
            row = dict(episodes[i % len(episodes)], task_id=task_ids[i % len(task_ids)],
                       trial=i // len(task_ids))
            f.write(dumps(row) + "\n")
    return run


def main_() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1000, 10000])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        gold = gold_run(root)
        for rows in args.rows:
            run = make_run(root, gold, rows)
            bench = PackBenchmark(PACK)
            start = time.perf_counter()
            exported = export_rows(run, bench)
            seconds = time.perf_counter() - start
            assert len(exported) == rows, (len(exported), rows)
            print(f"{rows:>6} rows: {seconds:7.2f} s, {rows / seconds:8.0f} rows/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
