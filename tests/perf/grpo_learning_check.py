"""Learning check for `mua train` (a script, not a CI test): does GRPO through the episode runner raise the
reward of a tiny model on an easy benchmark-shaped task set?

Steps: build the tiny offline checkpoint, warm it up briefly on gold counter episodes (so it emits tool
calls but mostly guesses the number), train with GRPO against the counter benchmark's scripted user, and
score the policy greedily before and after with the eval backend (``TransformersChatModel`` + ModelAgent +
run_episode: what `mua eval --agent-model DIR` runs). Writes OUT/curve.png, OUT/curve.json.

    python tests/perf/grpo_learning_check.py --out /tmp/grpo-check [--steps 40]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/helpers
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def greedy_pass_rate(bench, tasks, checkpoint: Path) -> float:
    from mua.harness.agents import ModelAgent
    from mua.harness.models.transformers_backend import TransformersChatModel
    from mua.harness.runner import run_episode

    model = TransformersChatModel(checkpoint, device="cpu", max_new_tokens=48, temperature=0.0)

    async def play():
        return await asyncio.gather(*(run_episode(bench, t, ModelAgent(model, seed=0), bench.gold_user(t))
                                      for t in tasks))
    return sum(r.score.reward for r in asyncio.run(play())) / len(tasks)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/grpo-learning-check"))
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--tasks", type=int, default=2, help="GRPO tasks (the first of the 8 warm-up tasks)")
    ap.add_argument("--sft-steps", type=int, default=100)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from helpers.counter_bench import CounterBenchmark
    from mua.harness.models.tiny import build_tiny_checkpoint
    from mua.training.config import TrainConfig
    from mua.training.grpo import build_trainer
    from mua.training.sft import gold_streams, sft_warmup

    torch.set_num_threads(1)
    torch.manual_seed(0)
    out = args.out
    base = build_tiny_checkpoint(out / "tiny", seed=0)
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base)
    bench = CounterBenchmark(n_tasks=8)
    warmup_tasks = bench.load_tasks("easy")  # targets 1..8: the warm model guesses among them
    tasks = warmup_tasks[:args.tasks]
    sft_warmup(model, gold_streams(bench, warmup_tasks, tok, {tok.eos_token_id}), steps=args.sft_steps, lr=5e-3,
               pad_id=tok.pad_token_id)
    warm = out / "warm"
    model.save_pretrained(warm)
    tok.save_pretrained(warm)
    before = greedy_pass_rate(bench, tasks, warm)

    cfg = TrainConfig(policy=str(warm), output_dir=str(out / "grpo"), benchmark="counter", num_generations=8,
                      batch_size=16, max_steps=args.steps, learning_rate=args.lr, max_turn_tokens=48,
                      max_completion_tokens=160, save_steps=10**6, samples_per_step=2, resume=False).validate()
    (out / "grpo" / "metrics.jsonl").unlink(missing_ok=True)
    trainer, _ = build_trainer(cfg, bench, tasks)
    trainer.train()
    trainer.save_model(cfg.output_dir)
    after = greedy_pass_rate(bench, tasks, Path(cfg.output_dir))

    rows = [json.loads(line) for line in (out / "grpo" / "metrics.jsonl").read_text().splitlines()]
    curve = {"step": [r["step"] for r in rows], "reward": [r["reward"] for r in rows],
             "turns": [r.get("episode/turns") for r in rows],
             "greedy_pass_rate_before": before, "greedy_pass_rate_after": after}
    (out / "curve.json").write_text(json.dumps(curve, indent=1) + "\n")
    plot(curve, out / "curve.png", args)
    first, last = _mean(curve["reward"][:5]), _mean(curve["reward"][-5:])
    print(f"train reward (sampled, T=1): first 5 steps {first:.3f} -> last 5 steps {last:.3f}")
    print(f"greedy pass rate on the {len(tasks)} tasks: before {before:.3f} -> after {after:.3f}")
    print(f"curve: {out / 'curve.png'}")
    return 0 if last > first else 1


def _mean(xs):
    return sum(xs) / max(len(xs), 1)


def plot(curve: dict, path: Path, args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps, reward = curve["step"], curve["reward"]
    smooth = [_mean(reward[max(0, i - 4):i + 1]) for i in range(len(reward))]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(steps, reward, ".", alpha=0.4, label="batch mean reward (sampled, T=1)")
    ax.plot(steps, smooth, "-", label="5-step moving average")
    ax.axhline(curve["greedy_pass_rate_before"], ls=":", color="grey", label="greedy pass rate before")
    ax.axhline(curve["greedy_pass_rate_after"], ls="--", color="green", label="greedy pass rate after")
    ax.set(xlabel="GRPO step", ylabel="reward", ylim=(-0.05, 1.05),
           title=f"mua train: tiny model, counter tasks ({args.tasks}), G=8, lr={args.lr}")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
