"""Local decoding of a windowed model: every key kept against only the window's (harness/models/decode.py).

    python tests/perf/bench_decode_window.py [--model CKPT] [--pack appointments] [--split validation] [--trials 3]

Runs `mua eval` of a local checkpoint (default: a fresh tiny model as the learning check builds it, window 128,
8 digit places; for realistic episodes pass a checkpoint the check trained, e.g. OUT/appointments/seed-0/sft)
on an example pack at temperature 1, three ways in this process, one after the other:
  1. every key and value kept (MUA_TRIM_TO_WINDOW=0), 8 episodes at a time (mua eval's default);
  2. only the window's last W - 1 columns kept, 8 at a time;
  3. the same, 32 at a time (what the learning check uses).
Prints each wall time, the prompt tokens prefilled and served from kept caches, and the speed-ups against 1, and
checks that the three runs wrote the same episodes (exit 1 otherwise).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT)]

from mua.harness.cli import main  # noqa: E402
from mua.harness.models import decode  # noqa: E402
from mua.harness.models.tiny import build_tiny_checkpoint  # noqa: E402
from mua.harness.models.window import OFF_ENV  # noqa: E402

EXAMPLES = ROOT / "benchmarks/pack/examples"


def count_prefill() -> dict[str, int]:
    """Prompt tokens prefilled and served from kept caches, summed over every PrefixCache.take from now on."""
    counts = {"prefilled": 0, "kept": 0}
    take = decode.PrefixCache.take

    def counting(self, prompt):
        start, layers = take(self, prompt)
        counts["prefilled"] += len(prompt) - start
        counts["kept"] += start
        return start, layers

    decode.PrefixCache.take = counting
    return counts


def one_run(model: Path, args, out: Path, trim: bool, concurrency: int) -> tuple[float, dict, list]:
    os.environ[OFF_ENV] = "1" if trim else "0"
    counts = count_prefill()
    start = time.perf_counter()
    code = main(["eval", "--benchmark", "pack", "--data-dir", str(EXAMPLES / args.pack), "--split", args.split,
                 "--agent-model", str(model), "--agent-temperature", "1.0", "--trials", str(args.trials),
                 "--seed", "0", "--agent-params", json.dumps({"max_tokens": 96, "max_batch": concurrency}),
                 "--concurrency", str(concurrency), "--out", str(out), "--no-progress"])
    wall = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"bench: mua eval exited {code}")
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    return wall, counts, episodes


def run(args) -> int:
    import torch

    torch.set_num_threads(args.threads)
    take = decode.PrefixCache.take
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        model = args.model or build_tiny_checkpoint(t / "tiny", seed=0, hidden_size=128, heads=4, layers=2,
                                                    sliding_window=128, digit_places=8)
        runs = []
        for name, trim, concurrency in (("every key kept, 8 at a time", False, 8),
                                        ("window only, 8 at a time", True, 8),
                                        ("window only, 32 at a time", True, 32)):
            wall, counts, episodes = one_run(model, args, t / f"run-{len(runs)}", trim, concurrency)
            decode.PrefixCache.take = take
            runs.append((name, wall, counts, episodes))
    os.environ.pop(OFF_ENV, None)
    base = runs[0][1]
    for name, wall, counts, _ in runs:
        print(f"{name:>28}: {wall:6.1f} s  ({base / wall:.2f}x)  prompt tokens prefilled {counts['prefilled']:,}, "
              f"from kept caches {counts['kept']:,}")
    same = all(r[3] == runs[0][3] for r in runs)
    print(f"{len(runs[0][3])} episodes ({args.pack}, {args.split} split, {args.trials} trials at T=1, "
          f"{args.threads} thread(s)); the same episodes in all three runs: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--pack", default="appointments")
    ap.add_argument("--split", default="validation")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    sys.exit(run(ap.parse_args()))
