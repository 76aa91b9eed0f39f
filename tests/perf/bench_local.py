"""Throughput of the transformers backend with the tiny offline checkpoint: generated tokens per second and
episodes per second at batch 1 (one episode at a time) and batch 16 (16 concurrent episodes sharing
micro-batches), with the batch-16 figures as a ratio to batch 1 from the same run.

    python tests/perf/bench_local.py [--episodes 32] [--max-new-tokens 32] [--device cpu] [--threads 1]

Episodes are the counter benchmark of tests/helpers (short prompts) with a scripted user of three turns (two agent replies), so
the figures measure generation, not prompt length. The tiny model's weights are random: what it says is
noise; only the speed is of interest.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from helpers.counter_bench import CounterBenchmark  # noqa: E402

from mua.harness.agents import ModelAgent  # noqa: E402
from mua.harness.models.tiny import build_tiny_checkpoint  # noqa: E402
from mua.harness.models.transformers_backend import TransformersChatModel  # noqa: E402
from mua.harness.runner import run_episode  # noqa: E402
from mua.harness.users import ScriptedUser  # noqa: E402


async def run_level(model: TransformersChatModel, episodes: int, concurrency: int) -> tuple[float, int]:
    """Play ``episodes`` episodes, ``concurrency`` at a time; returns (seconds, generated tokens)."""
    bench = CounterBenchmark(n_tasks=episodes)
    tasks = bench.load_tasks("easy")
    gate = asyncio.Semaphore(concurrency)
    tokens = 0

    async def one(i: int) -> None:
        nonlocal tokens
        async with gate:
            agent = ModelAgent(model, seed=i)
            user = ScriptedUser(["please set the counter to 3", "now to 5, please", "###STOP###"], stop_markers=["###STOP###"])
            await run_episode(bench, tasks[i], agent, user, score=False)
            tokens += agent.usage.completion_tokens

    start = time.perf_counter()
    await asyncio.gather(*[one(i) for i in range(episodes)])
    return time.perf_counter() - start, tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch CPU threads (default 1: a tiny model's ops are too small to split, and extra "
                         "threads only contend on a busy machine)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        path = build_tiny_checkpoint(Path(tmp) / "tiny")
        rows = []
        for batch in (1, 16):
            # temperature 1: the random model then rarely stops early, so episodes generate comparable lengths
            model = TransformersChatModel(path, device=args.device, max_new_tokens=args.max_new_tokens,
                                          temperature=1.0, max_batch=batch)
            asyncio.run(run_level(model, 2, 1))  # warm-up
            model.batcher.batch_sizes.clear()
            seconds, tokens = asyncio.run(run_level(model, args.episodes, batch))
            sizes = model.batcher.batch_sizes
            rows.append((batch, tokens / seconds, args.episodes / seconds, sum(sizes) / len(sizes)))
    base_tok, base_eps = rows[0][1], rows[0][2]
    print(f"tiny checkpoint, {args.episodes} episodes per level, max_new_tokens={args.max_new_tokens}, "
          f"device={args.device}, threads={args.threads}")
    print(f"{'batch':>5} {'tokens/s':>10} {'ratio':>6} {'episodes/s':>11} {'ratio':>6} {'mean batch':>11}")
    for batch, tok_s, eps, mean_batch in rows:
        print(f"{batch:>5} {tok_s:>10.1f} {tok_s / base_tok:>6.2f} {eps:>11.2f} {eps / base_eps:>6.2f} "
              f"{mean_batch:>11.1f}")


if __name__ == "__main__":
    main()
