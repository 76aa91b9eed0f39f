"""SFT steps per second of the learning check's tiny model with and without the window trim (training/window.py).

    python tests/perf/bench_window_trim.py [--steps 20] [--tasks 200] [--repeats 1]

Plays the gold agent on --tasks tasks of the bookings pack's train split, exports the passing episodes, builds
the learning check's tiny model (hidden 128, 4 heads, 2 layers, sliding window 96) and times --steps SFT steps
(TRL's SFTTrainer as `mua sft` builds it, batch 8, no checkpoints) on the same rows twice per repeat: with the
whole episodes (MUA_TRIM_TO_WINDOW=0) and with the head no loss term can see left out. Prints the mean tokens
per episode and steps/s of each, and their ratio (both in this run, on this machine).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT)]

from mua.harness.cli import main  # noqa: E402
from mua.harness.models.tiny import build_tiny_checkpoint  # noqa: E402
from mua.training.sft import build_sft_trainer, read_rows  # noqa: E402
from mua.training.sft_config import SftRunConfig  # noqa: E402
from mua.training.window import OFF_ENV  # noqa: E402

PACK = ROOT / "benchmarks/pack/examples/bookings"


def timed_run(policy: Path, dataset: Path, rows: list[dict], out: Path, steps: int, trimmed: bool) -> tuple[float, float]:
    """(steps/s of trainer.train, mean tokens per training row) for one SFT run."""
    os.environ[OFF_ENV] = "1" if trimmed else "0"
    cfg = SftRunConfig(policy=str(policy), dataset=str(dataset), output_dir=str(out), max_steps=steps,
                       batch_size=8, save_strategy="no", report_to="none", progress=False, seed=0,
                       learning_rate=3e-3)
    trainer = build_sft_trainer(cfg, rows)
    lengths = [len(ids) for ids in trainer.train_dataset["input_ids"]]
    start = time.perf_counter()
    trainer.train()
    return steps / (time.perf_counter() - start), sum(lengths) / len(lengths)


def run(args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent", "gold", "--split", "train",
                     "--limit", str(args.tasks), "--out", str(t / "gold"), "--no-progress"]) == 0
        assert main(["export", str(t / "gold"), "--out", str(t / "ds"), "--min-reward", "1",
                     "--data-dir", str(PACK)]) == 0
        tiny = build_tiny_checkpoint(t / "tiny", seed=0, hidden_size=128, heads=4, layers=2, sliding_window=96)
        rows = read_rows(t / "ds")
        rates: dict[bool, list[float]] = {False: [], True: []}
        tokens: dict[bool, float] = {}
        for r in range(args.repeats):
            for trimmed in (False, True):
                rate, tokens[trimmed] = timed_run(tiny, t / "ds", rows, t / f"sft-{r}-{trimmed}", args.steps, trimmed)
                rates[trimmed].append(rate)
    os.environ.pop(OFF_ENV, None)
    best = {k: max(v) for k, v in rates.items()}
    for trimmed, name in ((False, "whole episodes"), (True, "trimmed to the window")):
        print(f"{name:>22}: {tokens[trimmed]:7.1f} tokens/episode  {best[trimmed]:.2f} steps/s "
              f"(best of {args.repeats})")
    print(f"speed-up: {best[True] / best[False]:.2f}x steps/s ({len(rows)} episodes, {args.steps} steps of 8)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=1)
    run(ap.parse_args())
