"""The learning check: does GRPO with the user in the loop raise a HELD-OUT score over an SFT cold start?

From nothing but the repo, on the bookings example pack (benchmarks/pack/examples/bookings: three customers in
four want 7 pm and most of their reference conversations do not ask for the time, so imitation learns to guess;
asking the user is what RL with the user in the loop can add):
  1. build the tiny model (`mua model tiny --hidden-size 128 --heads 4 --sliding-window 96`: with attention over
     the last 96 tokens only it learns to copy the user's answers into its call within minutes);
  2. SFT it on the gold trajectories of the train split (`mua eval --agent gold`, `mua export`, `mua sft`; the
     learning rate decays to zero, so that the SFT policy asks about as often as the demonstrations do);
  3. evaluate greedily on the held-out (test) split with `mua eval`: before SFT and after SFT;
  4. GRPO with the scripted user in the loop on the train split (`mua train`), evaluate again;
  5. ablation: the same GRPO run with the user out of the loop (it says its opening only), evaluate again.
Prints held-out pass^1 with 95% bootstrap intervals as `mua leaderboard` computes them, the paired interval
of GRPO - SFT, and plots OUT/learning.png (GRPO reward per step; held-out pass^1 per stage). Exits 0 only
when GRPO beats SFT-only on held-out tasks with the paired 95% interval above zero; 1 otherwise.

    python tests/perf/learning_check.py --out /tmp/learning-check            # the full check
    python tests/perf/learning_check.py --out /tmp/lc-smoke --smoke          # 2 steps each, 4 tasks (CI)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
BOOKINGS = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"


def mua(*argv: str) -> None:
    from mua.harness.cli import main

    code = main([str(a) for a in argv])
    if code != 0:
        raise SystemExit(f"learning check: `mua {' '.join(map(str, argv))}` exited {code}")


def held_out(ckpt: Path, out: Path, args) -> Path:
    run = out / f"eval-{ckpt.name}"
    limit = ["--limit", str(args.eval_tasks)] if args.eval_tasks else []
    mua("eval", "--benchmark", "pack", "--data-dir", args.pack, "--split", "test", "--agent-model", ckpt,
        "--agent-temperature", "0", "--trials", "1", "--agent-params", json.dumps({"max_tokens": args.max_turn_tokens}),
        "--out", run, "--no-progress", *limit)
    return run


def episodes(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]


def per_task(run: Path) -> dict[str, float]:
    """Pass (1.0) or fail (0.0) per task; an errored or unscored episode is left out, as `mua leaderboard` does."""
    from mua.harness.stats import is_success

    return {r["task_id"]: float(is_success(r["reward"])) for r in episodes(run)
            if not r.get("error") and r.get("reward") is not None}


def asked_for_the_time(run: Path) -> int:
    """Episodes in which the agent asked for the time: what the bookings pack's imitation does not learn."""
    return sum(any(m["role"] == "assistant" and "time" in (m.get("content") or "") for m in r.get("messages") or [])
               for r in episodes(run))


def estimate(run: Path):
    from mua.harness.stats import bootstrap_ci

    return bootstrap_ci([list(per_task(run).values())], resamples=2000, seed=0)  # mua leaderboard's defaults


def check_budgets(policy: Path, args) -> None:
    """Before any training: every gold conversation of the train and evaluation splits fits the reply and episode
    token budgets (training/budgets.py, as `mua train` checks), else one line naming the count and a task."""
    from transformers import AutoTokenizer, GenerationConfig

    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.models.local import stop_ids_for
    from mua.training.budgets import check_gold_budgets
    from mua.training.policy import Budget

    tokenizer = AutoTokenizer.from_pretrained(policy)
    stop_ids = stop_ids_for(tokenizer, GenerationConfig.from_pretrained(policy))
    bench = PackBenchmark(args.pack)
    for split in ("train", "test"):
        fit = check_gold_budgets(bench, bench.load_tasks("tasks", split), tokenizer, stop_ids,
                                 Budget(args.max_turn_tokens, 4 * args.max_turn_tokens))
        print(f"learning check: {fit.line(f'split {split}')}", flush=True)
        if not fit.fits and not args.smoke:  # the smoke's short budgets cut replies on purpose: it proves nothing
            raise SystemExit(2)


def grpo(policy: Path, out: Path, args, answers: bool) -> Path:
    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.registry import register_benchmark

    register_benchmark(PackBenchmark, answers=answers)  # answers=False: the user says its opening only
    try:
        mua("train", "--policy", policy, "--benchmark", "pack", "--data_dir", args.pack, "--split", "train",
            "--output_dir", out, "--no-resume", "--max_steps", args.grpo_steps, "--num_generations", args.group,
            "--batch_size", args.batch, "--learning_rate", args.grpo_lr, "--max_turn_tokens", args.max_turn_tokens,
            "--max_completion_tokens", 4 * args.max_turn_tokens, "--save_steps", 10**6, "--no-progress",
            "--bf16", "false", "--temperature", "1.0", *(["--limit", args.train_tasks] if args.train_tasks else []))
    finally:
        register_benchmark(PackBenchmark)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/learning-check"))
    ap.add_argument("--pack", type=Path, default=BOOKINGS, help="task pack (default: the bookings example)")
    ap.add_argument("--smoke", action="store_true", help="2 SFT and 2 GRPO steps on 4 tasks: runs, proves nothing")
    ap.add_argument("--hidden-size", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--sliding-window", type=int, default=96)
    ap.add_argument("--sft-steps", type=int, default=1200)
    ap.add_argument("--sft-lr", type=float, default=3e-3)
    ap.add_argument("--sft-lr-scheduler", default="linear", choices=("constant", "linear", "cosine"))
    ap.add_argument("--grpo-steps", type=int, default=40)
    ap.add_argument("--grpo-lr", type=float, default=2e-4)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--max-turn-tokens", type=int, default=64)
    ap.add_argument("--train-tasks", type=int, default=None)
    ap.add_argument("--eval-tasks", type=int, default=None, help="held-out tasks evaluated (default: all 80)")
    ap.add_argument("--no-ablation", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.sft_steps, args.grpo_steps, args.group, args.batch = 2, 2, 2, 2
        args.train_tasks, args.eval_tasks, args.max_turn_tokens = 4, 4, 24
    import torch

    torch.set_num_threads(min(2, torch.get_num_threads()))
    out, started = args.out, time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    tiny, sft = out / "tiny", out / "sft"
    mua("model", "tiny", tiny, "--hidden-size", args.hidden_size, "--heads", args.heads, "--sliding-window",
        args.sliding_window)
    check_budgets(tiny, args)
    if not (out / "gold").exists():
        mua("eval", "--benchmark", "pack", "--data-dir", args.pack, "--agent", "gold", "--split", "train",
            "--out", out / "gold", "--no-progress")
    if not (out / "gold-dataset").exists():
        mua("export", out / "gold", "--out", out / "gold-dataset", "--min-reward", "1", "--data-dir", args.pack)
    mua("sft", "--policy", tiny, "--dataset", out / "gold-dataset", "--output-dir", sft, "--max-steps",
        args.sft_steps, "--learning-rate", args.sft_lr, "--lr-scheduler", args.sft_lr_scheduler, "--no-progress")
    runs = {"before SFT": held_out(tiny, out, args), "after SFT": held_out(sft, out, args)}
    g = grpo(sft, out / "grpo", args, answers=True)
    runs["after GRPO"] = held_out(g, out, args)
    if not args.no_ablation:
        a = grpo(sft, out / "grpo-no-user", args, answers=False)
        runs["after GRPO, user out of the loop"] = held_out(a, out, args)
    return report(runs, out, started)


def report(runs: dict[str, Path], out: Path, started: float) -> int:
    from mua.harness.stats import paired_bootstrap

    print("\nheld-out pass^1 (bookings test split), 95% bootstrap interval over tasks:")
    figures = {}
    for name, run in runs.items():
        e = estimate(run)
        figures[name] = e
        left_out = len(episodes(run)) - e.n
        print(f"  {name:34} {100 * e.value:5.1f} [{100 * e.low:5.1f}, {100 * e.high:5.1f}] n={e.n}   "
              f"asked for the time in {asked_for_the_time(run)}"
              + (f"   LEFT OUT: {left_out} errored or unscored" if left_out else ""))
    sft, rl = per_task(runs["after SFT"]), per_task(runs["after GRPO"])
    common = sorted(set(sft) & set(rl))
    test = paired_bootstrap([[rl[t] - sft[t] for t in common]], seed=0)
    print(f"  GRPO - SFT (paired): {100 * test.delta:+.1f} points [{100 * test.low:+.1f}, {100 * test.high:+.1f}] "
          f"over {len(common)} tasks")
    ablation = runs.get("after GRPO, user out of the loop")
    if ablation is not None:
        no_user = per_task(ablation)
        gain = figures["after GRPO"].value - figures["after SFT"].value
        rest = figures["after GRPO, user out of the loop"].value - figures["after SFT"].value
        print(f"  gain with the user in the loop {100 * gain:+.1f} points; without {100 * rest:+.1f} points; "
              f"needing the user: {100 * (gain - rest):+.1f} points "
              f"(over {len(set(no_user) & set(rl))} tasks)")
    print(f"  wall time {time.monotonic() - started:.0f} s")
    plot(runs, figures, out)
    verdict = test.low > 0
    print(f"verdict: {'PASS' if verdict else 'FAIL'}: GRPO {'beats' if verdict else 'does not beat'} SFT-only on "
          "held-out tasks with the paired 95% interval above zero")
    return 0 if verdict else 1


def plot(runs: dict, figures: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name, folder in (("user in the loop", out / "grpo"), ("user out of the loop", out / "grpo-no-user")):
        path = folder / "metrics.jsonl"
        if path.is_file():
            rows = [json.loads(line) for line in path.read_text().splitlines()]
            left.plot([r["step"] for r in rows], [r.get("reward") for r in rows], ".-", label=name)
    left.set(xlabel="GRPO step", ylabel="batch mean reward (sampled)", title="training reward", ylim=(-0.05, 1.05))
    if left.lines:
        left.legend()
    names = list(figures)
    right.errorbar(range(len(names)), [figures[n].value for n in names],
                   yerr=[[figures[n].value - figures[n].low for n in names],
                         [figures[n].high - figures[n].value for n in names]], fmt="o", capsize=4)
    right.set_xticks(range(len(names)), [n.replace(", ", "\n") for n in names], fontsize=8)
    right.set(ylabel="held-out pass^1 (greedy)", title="held-out tasks, 95% bootstrap", ylim=(-0.05, 1.05))
    fig.tight_layout()
    fig.savefig(out / "learning.png", dpi=110)


if __name__ == "__main__":
    sys.exit(main())
