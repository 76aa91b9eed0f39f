"""SFT steps per second of the learning check's tiny model: whole episodes against what training/window.py and
training/lm_head.py leave out.

    python tests/perf/bench_window_trim.py [--steps 20] [--tasks 200] [--repeats 1]

Plays the gold agent on --tasks tasks of the bookings pack's train split, exports the passing episodes, builds
the learning check's tiny model (hidden 128, 4 heads, 2 layers, sliding window 128, 8 digit places) and times
--steps SFT steps (TRL's SFTTrainer as `mua sft` builds it, batch 8, no checkpoints) on the same rows three ways
per repeat: whole episodes with SDPA over every key and TRL's LM head over every position (MUA_TRIM_TO_WINDOW=0,
TRL's own CPU path); the head no loss term can see left out and attention in window blocks; and, on top, the LM
head over labelled positions only (what `mua sft` does). Prints the mean tokens per episode, steps/s and the
final loss of each, and the speed-ups against the first (all in this run, on this machine).
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
from mua.training import sft as sft_module  # noqa: E402
from mua.training.lm_head import score_labelled_positions_only  # noqa: E402
from mua.training.sft import build_sft_trainer, read_rows  # noqa: E402
from mua.training.sft_config import SftRunConfig  # noqa: E402
from mua.training.window import OFF_ENV  # noqa: E402

PACK = ROOT / "benchmarks/pack/examples/bookings"


MODES = (("whole episodes, every key and position", False, False),
         ("trimmed, window-block attention", True, False),
         ("... and labelled positions only", True, True))


def timed_run(policy: Path, dataset: Path, rows: list[dict], out: Path, steps: int, trimmed: bool,
              labelled_only: bool) -> tuple[float, float, float]:
    """(steps/s of trainer.train, mean tokens per training row, final loss) for one SFT run."""
    import trl.trainer.utils as trl_utils
    from trl.kernels.chunked_logprob import _use_triton as trls_own

    os.environ[OFF_ENV] = "1" if trimmed else "0"
    trl_utils._use_triton = trls_own  # TRL's own choice, unless this mode asks for labelled positions only
    sft_module.score_labelled_positions_only = score_labelled_positions_only if labelled_only else (lambda: False)
    cfg = SftRunConfig(policy=str(policy), dataset=str(dataset), output_dir=str(out), max_steps=steps,
                       batch_size=8, save_strategy="no", report_to="none", progress=False, seed=0,
                       learning_rate=3e-3)
    trainer = build_sft_trainer(cfg, rows)
    lengths = [len(ids) for ids in trainer.train_dataset["input_ids"]]
    start = time.perf_counter()
    result = trainer.train()
    return steps / (time.perf_counter() - start), sum(lengths) / len(lengths), result.training_loss


def run(args) -> None:
    import torch

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        assert main(["eval", "--benchmark", "pack", "--data-dir", str(PACK), "--agent", "gold", "--split", "train",
                     "--limit", str(args.tasks), "--out", str(t / "gold"), "--no-progress"]) == 0
        assert main(["export", str(t / "gold"), "--out", str(t / "ds"), "--min-reward", "1",
                     "--data-dir", str(PACK)]) == 0
        tiny = build_tiny_checkpoint(t / "tiny", seed=0, hidden_size=128, heads=4, layers=2, sliding_window=128,
                                     digit_places=8)
        rows = read_rows(t / "ds")
        rates: dict[str, list[float]] = {name: [] for name, _, _ in MODES}
        tokens, losses = {}, {}
        for r in range(args.repeats):
            for name, trimmed, labelled in MODES:
                rate, tokens[name], losses[name] = timed_run(tiny, t / "ds", rows, t / f"sft-{r}-{len(tokens)}",
                                                             args.steps, trimmed, labelled)
                rates[name].append(rate)
    os.environ.pop(OFF_ENV, None)
    best = {k: max(v) for k, v in rates.items()}
    base = best[MODES[0][0]]
    for name, _, _ in MODES:
        print(f"{name:>38}: {tokens[name]:6.1f} tokens/episode  {best[name]:.2f} steps/s ({best[name] / base:.2f}x)  "
              f"loss {losses[name]:.4f}  (best of {args.repeats})")
    print(f"{len(rows)} episodes, {args.steps} steps of 8, {args.threads} thread(s)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    run(ap.parse_args())
