"""The learning check: does GRPO with the user in the loop raise a HELD-OUT score over an SFT cold start, beyond
what fair baselines from the same SFT checkpoint and the same episode budget reach?

From nothing but the repo, on a task pack with a scripted user (default: the bookings example, where three
customers in four want 7 pm and most of their reference conversations do not ask for the time, so imitation
learns to guess), for each of ``--seeds`` training seeds:
  1. build the tiny model (`mua model tiny --hidden-size 128 --heads 4 --sliding-window 96 --seed S`);
  2. check that every gold conversation of the train and evaluation splits fits the token budgets (else exit 2);
  3. SFT it on the gold trajectories of the train split (`mua eval --agent gold`, `mua export`, `mua sft`);
  4. from that SFT checkpoint, with the same number of training episodes (GRPO steps x batch):
     - GRPO with the scripted user in the loop (`mua train`);
     - GRPO with a static user: the reference conversation's user turns replayed whatever the agent says, the
       reward kept (what the responsive user adds);
     - rejection-sampling fine-tuning (RFT): sample episodes from the SFT policy at temperature 1, keep the
       passing ones, SFT on them (the standard non-RL baseline);
  5. evaluate every stage on the evaluation split (`--split validation` to tune, `--split test` to report
     once): greedily (one trial) and sampled at temperature 1 (``--sampled-trials`` per task).
Prints pass^1 per stage with 95% bootstrap intervals as `mua leaderboard` computes them, the paired interval of
each method minus SFT (greedy and sampled), per seed and pooled over seeds; a behaviour table per stage (per
expected action: the share of episodes that made that call exactly and that got each argument right; per fact
of the scripted user: the share of episodes that asked for it); and plots OUT/learning.png. Exits 0 only when,
for every seed, GRPO with the user in the loop beats SFT-only with the paired greedy 95% interval above zero;
1 otherwise (saying "no gradient was taken" when no GRPO group ever had a reward spread).

    python tests/perf/learning_check.py --out /tmp/learning-check                  # tune: validation split
    python tests/perf/learning_check.py --out /tmp/learning-check --split test     # report once
    python tests/perf/learning_check.py --out /tmp/lc-smoke --smoke                # 2 steps each, 4 tasks (CI)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
BOOKINGS = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"
BEFORE, SFT, GRPO, STATIC, RFT = ("before SFT", "SFT", "GRPO, user in the loop", "GRPO, static user",
                                  "RFT (rejection sampling)")
METHODS = (GRPO, STATIC, RFT)  # each compared with SFT, paired over tasks


def mua(*argv) -> None:
    from mua.harness.cli import main

    code = main([str(a) for a in argv])
    if code != 0:
        raise SystemExit(f"learning check: `mua {' '.join(map(str, argv))}` exited {code}")


@dataclass
class Stage:
    """One stage of one seed: its greedy evaluation run and, when sampled, its temperature-1 run."""
    greedy: Path
    sampled: Optional[Path] = None


@dataclass
class Seed:
    seed: int
    stages: dict[str, Stage] = field(default_factory=dict)
    grpo_dirs: dict[str, Path] = field(default_factory=dict)  # GRPO kind -> output dir (metrics.jsonl)
    copied: dict[str, dict[str, float]] = field(default_factory=dict)  # stage -> argument -> teacher-forced share


def evaluate(ckpt: Path, run: Path, args, temperature: float, trials: int) -> Path:
    limit = ["--limit", str(args.eval_tasks)] if args.eval_tasks else []
    mua("eval", "--benchmark", "pack", "--data-dir", args.pack, "--split", args.split, "--agent-model", ckpt,
        "--agent-temperature", temperature, "--trials", trials, "--seed", args.eval_seed,
        "--agent-params", json.dumps({"max_tokens": args.max_turn_tokens}), "--out", run, "--no-progress", *limit)
    return run


def stage(ckpt: Path, name: str, folder: Path, args) -> Stage:
    greedy = evaluate(ckpt, folder / f"eval-{name}", args, 0.0, 1)
    sampled = evaluate(ckpt, folder / f"eval-{name}-sampled", args, 1.0, args.sampled_trials) \
        if args.sampled_trials else None
    return Stage(greedy, sampled)


def episodes(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]


def per_task(run: Path) -> dict[str, float]:
    """Pass rate per task over its trials (1.0 or 0.0 with one trial); an errored or unscored episode is left
    out, as `mua leaderboard` does."""
    from mua.harness.stats import is_success

    passes: dict[str, list[float]] = {}
    for r in episodes(run):
        if not r.get("error") and r.get("reward") is not None:
            passes.setdefault(r["task_id"], []).append(float(is_success(r["reward"])))
    return {t: sum(v) / len(v) for t, v in passes.items()}


def estimate(run: Path):
    from mua.harness.stats import bootstrap_ci

    return bootstrap_ci([list(per_task(run).values())], resamples=2000, seed=0)  # mua leaderboard's defaults


def paired(base: dict[str, float], other: dict[str, float]):
    """Paired bootstrap of other - base over the tasks both scored, or None when none."""
    from mua.harness.stats import paired_bootstrap

    common = sorted(set(base) & set(other))
    return paired_bootstrap([[other[t] - base[t] for t in common]], seed=0) if common else None, len(common)


def value_span(text: str, key: str, value) -> Optional[tuple[int, int]]:
    """Where ``value`` of argument ``key`` lies in a rendered tool call (the arguments as JSON), or None."""
    rendered = json.dumps(value)
    at = text.find(f"{json.dumps(key)}: {rendered}")
    if at < 0:
        return None
    start = at + len(json.dumps(key)) + 2
    return (start + 1, start + len(rendered) - 1) if isinstance(value, str) else (start, start + len(rendered))


def teacher_forced_copy(ckpt: Path, args) -> dict[str, float]:
    """Per argument of each expected action (``action.argument``), over the gold conversations of the evaluation
    split: the share whose value the model predicts token for token (argmax), given the gold conversation so far.
    The greedy counterpart is the behaviour table's per-argument share."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.models.local import stop_ids_for
    from mua.training.budgets import reply_lengths

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))  # the tests' gold-stream helper
    from gold_warmup import gold_streams

    tokenizer = AutoTokenizer.from_pretrained(ckpt)
    model = AutoModelForCausalLM.from_pretrained(ckpt).eval()
    bench = PackBenchmark(args.pack)
    tasks = bench.load_tasks("tasks", args.split)[:args.eval_tasks or None]
    counts: dict[str, list[int]] = {}
    for task, stream in zip(tasks, gold_streams(bench, tasks, tokenizer, stop_ids_for(tokenizer, model.generation_config))):
        with torch.no_grad():
            predicted = model(torch.tensor([stream.ids])).logits[0].argmax(-1).tolist()
        start = len(stream.prompt_ids)
        offset = 0
        for length in reply_lengths(stream.env_mask):
            while not stream.env_mask[offset]:
                offset += 1
            first = start + offset  # the reply's first token in stream.ids
            reply = stream.ids[first:first + length]
            ends = [len(tokenizer.decode(reply[:k])) for k in range(length + 1)]
            text = tokenizer.decode(reply)
            for action in (task.evaluation or {}).get("actions") or []:
                if f'"name": {json.dumps(action["name"])}' not in text:
                    continue
                for key, value in (action.get("arguments") or {}).items():
                    span = value_span(text, key, value)
                    if span is None:
                        continue
                    tokens = [k for k in range(length) if ends[k] < span[1] and ends[k + 1] > span[0]]
                    right = all(predicted[first + k - 1] == stream.ids[first + k] for k in tokens)
                    tally(counts, f"{action['name']}.{key}", right)
            offset += length
    return {k: hit / n for k, (hit, n) in counts.items()}


def grpo(policy: Path, out: Path, args, seed: int, static_user: bool) -> Path:
    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.registry import register_benchmark

    register_benchmark(PackBenchmark, static_user=static_user)
    try:
        mua("train", "--policy", policy, "--benchmark", "pack", "--data_dir", args.pack, "--split", "train",
            "--output_dir", out, "--no-resume", "--max_steps", args.grpo_steps, "--num_generations", args.group,
            "--batch_size", args.batch, "--learning_rate", args.grpo_lr, "--max_turn_tokens", args.max_turn_tokens,
            "--max_completion_tokens", 4 * args.max_turn_tokens, "--save_steps", 10**6, "--no-progress",
            "--bf16", "false", "--temperature", "1.0", "--seed", seed,
            *(["--limit", args.train_tasks] if args.train_tasks else []))
    finally:
        register_benchmark(PackBenchmark)
    return out


def rft(policy: Path, folder: Path, args, seed: int) -> Path:
    """Rejection-sampling fine-tuning with GRPO's episode budget: sample train episodes from the SFT policy at
    temperature 1, keep the passing ones, fine-tune the SFT checkpoint on them."""
    from mua.benchmarks.pack import PackBenchmark

    budget = args.grpo_steps * args.batch
    n_tasks = args.train_tasks or len(PackBenchmark(args.pack).load_tasks("tasks", "train"))
    trials = max(1, round(budget / n_tasks))
    mua("eval", "--benchmark", "pack", "--data-dir", args.pack, "--split", "train", "--agent-model", policy,
        "--agent-temperature", "1.0", "--trials", trials, "--limit", max(1, min(n_tasks, budget // trials)),
        "--seed", seed, "--agent-params", json.dumps({"max_tokens": args.max_turn_tokens}),
        "--out", folder / "rft-samples", "--no-progress")
    kept = sum(1 for r in episodes(folder / "rft-samples") if r.get("reward") == 1.0)
    if not kept:
        print(f"  RFT, seed {seed}: no sampled episode passed; the RFT policy is the SFT policy", flush=True)
        return policy
    if not (folder / "rft-dataset").exists():
        mua("export", folder / "rft-samples", "--out", folder / "rft-dataset", "--min-reward", "1", "--data-dir",
            args.pack)
    mua("sft", "--policy", policy, "--dataset", folder / "rft-dataset", "--output-dir", folder / "rft",
        "--num-train-epochs", "1", "--learning-rate", args.rft_lr, "--seed", seed, "--no-progress")
    return folder / "rft"


def check_budgets(policy: Path, args) -> None:
    """Before any training: every gold conversation of the train and evaluation splits fits the reply and episode
    token budgets (training/budgets.py, as `mua train` checks), else one line naming the count and a task."""
    from transformers import AutoConfig, AutoTokenizer, GenerationConfig

    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.models.local import stop_ids_for
    from mua.training.budgets import check_gold_budgets
    from mua.training.policy import Budget

    tokenizer = AutoTokenizer.from_pretrained(policy)
    stop_ids = stop_ids_for(tokenizer, GenerationConfig.from_pretrained(policy))
    bench = PackBenchmark(args.pack)
    for split in ("train", args.split):
        fit = check_gold_budgets(bench, bench.load_tasks("tasks", split), tokenizer, stop_ids,
                                 Budget(args.max_turn_tokens, 4 * args.max_turn_tokens),
                                 getattr(AutoConfig.from_pretrained(policy), "max_position_embeddings", None))
        print(f"learning check: {fit.line(f'split {split}')}", flush=True)
        if not fit.fits and not args.smoke:  # the smoke's short budgets cut replies on purpose: it proves nothing
            raise SystemExit(2)


def one_seed(seed: int, args) -> Seed:
    folder = args.out / f"seed-{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    tiny, sft = folder / "tiny", folder / "sft"
    mua("model", "tiny", tiny, "--hidden-size", args.hidden_size, "--heads", args.heads, "--layers", args.layers,
        "--sliding-window", args.sliding_window, "--seed", seed, *(["--single-digits"] if args.single_digits else []),
        "--overwrite")  # rebuilt on every run (same seed, same bytes)
    check_budgets(tiny, args)
    gold = args.out / "gold"
    if not gold.exists():
        mua("eval", "--benchmark", "pack", "--data-dir", args.pack, "--agent", "gold", "--split", "train",
            "--out", gold, "--no-progress")
    if not (args.out / "gold-dataset").exists():
        mua("export", gold, "--out", args.out / "gold-dataset", "--min-reward", "1", "--data-dir", args.pack)
    mua("sft", "--policy", tiny, "--dataset", args.out / "gold-dataset", "--output-dir", sft, "--max-steps",
        args.sft_steps, "--learning-rate", args.sft_lr, "--lr-scheduler-type", args.sft_lr_scheduler, "--seed", seed,
        "--no-progress")
    result = Seed(seed)
    if seed == args.first_seed:  # a random model: once is enough
        result.stages[BEFORE] = Stage(evaluate(tiny, folder / "eval-before", args, 0.0, 1))
    result.stages[SFT] = stage(sft, "sft", folder, args)
    result.copied[SFT] = teacher_forced_copy(sft, args)
    result.grpo_dirs[GRPO] = grpo(sft, folder / "grpo", args, seed, static_user=False)
    result.stages[GRPO] = stage(folder / "grpo", "grpo", folder, args)
    result.copied[GRPO] = teacher_forced_copy(folder / "grpo", args)
    if not args.no_baselines:
        result.grpo_dirs[STATIC] = grpo(sft, folder / "grpo-static", args, seed, static_user=True)
        result.stages[STATIC] = stage(folder / "grpo-static", "grpo-static", folder, args)
        result.stages[RFT] = stage(rft(sft, folder, args, seed), "rft", folder, args)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/learning-check"))
    ap.add_argument("--pack", type=Path, default=BOOKINGS, help="task pack (default: the bookings example)")
    ap.add_argument("--split", default="validation", choices=("validation", "test"),
                    help="evaluation split: tune on validation, report test once (default validation)")
    ap.add_argument("--seeds", type=int, default=3, help="training seeds (default 3): the verdict needs each")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--smoke", action="store_true", help="2 SFT and 2 GRPO steps on 4 tasks: runs, proves nothing")
    ap.add_argument("--hidden-size", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--sliding-window", type=int, default=96)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--single-digits", action="store_true", help="tiny tokenizer: one token per digit")
    ap.add_argument("--sft-steps", type=int, default=1200)
    ap.add_argument("--sft-lr", type=float, default=3e-3)
    ap.add_argument("--sft-lr-scheduler", default="linear", choices=("constant", "linear", "cosine"))
    ap.add_argument("--grpo-steps", type=int, default=40)
    ap.add_argument("--grpo-lr", type=float, default=2e-4)
    ap.add_argument("--rft-lr", type=float, default=3e-4, help="RFT: one epoch over the kept episodes")
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--max-turn-tokens", type=int, default=64)
    ap.add_argument("--train-tasks", type=int, default=None)
    ap.add_argument("--eval-tasks", type=int, default=None, help="tasks evaluated (default: the whole split)")
    ap.add_argument("--sampled-trials", type=int, default=4, help="temperature-1 trials per task (0: greedy only)")
    ap.add_argument("--eval-seed", type=int, default=0)
    ap.add_argument("--no-baselines", action="store_true", help="GRPO with the user only: no static user, no RFT")
    args = ap.parse_args()
    if args.seeds < 1 or args.sampled_trials < 0:
        raise SystemExit("learning check: --seeds must be at least 1 and --sampled-trials at least 0")
    if args.smoke:
        args.sft_steps, args.grpo_steps, args.group, args.batch = 2, 2, 2, 2
        args.train_tasks, args.eval_tasks, args.max_turn_tokens, args.sampled_trials = 4, 4, 24, 2
    import torch

    torch.set_num_threads(min(2, torch.get_num_threads()))
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    seeds = [one_seed(s, args) for s in range(args.first_seed, args.first_seed + args.seeds)]
    from mua.benchmarks.pack.loader import load_pack

    pack = load_pack(args.pack)
    return report(seeds, args.out, started, f"pack {pack.name}, {args.split} split",
                  {str(t["id"]): t for t in pack.tasks})


def no_gradient(grpo_dir: Optional[Path]) -> bool:
    """Whether no GRPO group ever had a reward spread (TRL's frac_reward_zero_std was 1 at every logged step):
    every advantage was zero, so the weights never moved."""
    path = grpo_dir / "metrics.jsonl" if grpo_dir else None
    if path is None or not path.is_file():
        return False
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    spreads = [r.get("frac_reward_zero_std") for r in rows]
    return bool(rows) and all(s == 1.0 for s in spreads)


def report(seeds: list[Seed], out: Path, started: float, label: str = "evaluation split",
           tasks: Optional[dict[str, dict]] = None) -> int:
    """Prints the figures and the verdict; ``tasks`` (id -> the pack's task record) gives the behaviour table."""
    print(f"\npass^1 ({label}), 95% bootstrap interval over tasks; greedy | sampled at temperature 1:")
    gains: dict[int, Any] = {}
    for s in seeds:
        print(f" seed {s.seed}:")
        for name, st in s.stages.items():
            print(f"  {name:28} {figure(st.greedy)}" + (f" | {figure(st.sampled)}" if st.sampled else ""))
        gain = print_differences(s)
        if gain is not None:
            gains[s.seed] = gain
        if no_gradient(s.grpo_dirs.get(GRPO)):
            print("  no gradient was taken: no GRPO group ever had a reward spread (every episode of a group scored "
                  "the same), so GRPO left the SFT weights as they were")
    pooled(seeds)
    if tasks:
        behaviour(seeds, tasks)
    for s in seeds:
        for name, shares in s.copied.items():
            cells = ", ".join(f"{k} {100 * v:.0f}%" for k, v in shares.items())
            print(f" teacher-forced copy, seed {s.seed}, {name}: {cells or 'no argument found in the gold calls'}")
    print(f"  wall time {time.monotonic() - started:.0f} s")
    plot(seeds, out)
    verdict = bool(gains) and len(gains) == len(seeds) and all(t.low > 0 for t in gains.values())
    stuck = all(no_gradient(s.grpo_dirs.get(GRPO)) for s in seeds) and any(s.grpo_dirs for s in seeds)
    why = " (no gradient was taken)" if stuck and not verdict else ""
    above = sum(1 for t in gains.values() if t.low > 0)
    print(f"verdict: {'PASS' if verdict else 'FAIL'}{why}: the paired greedy 95% interval of GRPO with the user "
          f"in the loop - SFT is above zero in {above} of {len(seeds)} seed(s); PASS needs every seed")
    return 0 if verdict else 1


def print_differences(s: Seed) -> Any:
    """Prints each method minus SFT for seed ``s``, paired over tasks; the greedy GRPO one (None if none)."""
    base, gain = s.stages.get(SFT), None
    for method in METHODS:
        if base is None or method not in s.stages:
            continue
        for kind in ("greedy", "sampled"):
            a, b = getattr(base, kind), getattr(s.stages[method], kind)
            if a is None or b is None:
                continue
            test, n = paired(per_task(a), per_task(b))
            if test is None:
                continue
            print(f"  {method} - SFT (paired, {kind}): {points(test)} over {n} tasks")
            if method == GRPO and kind == "greedy":
                gain = test
    return gain


def figure(run: Path) -> str:
    e = estimate(run)
    left_out = len(episodes(run)) - sum(1 for r in episodes(run) if not r.get("error") and r.get("reward") is not None)
    return (f"{100 * e.value:5.1f} [{100 * e.low:5.1f}, {100 * e.high:5.1f}] n={e.n}"
            + (f"   LEFT OUT: {left_out} errored or unscored" if left_out else ""))


def points(test) -> str:
    return f"{100 * test.delta:+.1f} points [{100 * test.low:+.1f}, {100 * test.high:+.1f}]"


def pooled(seeds: list[Seed]) -> None:
    """Each method minus SFT, the per-task differences averaged over seeds, paired over tasks."""
    if len(seeds) < 2:
        return
    for method in METHODS:
        for kind in ("greedy", "sampled"):
            diffs: dict[str, list[float]] = {}
            for s in seeds:
                base, other = s.stages.get(SFT), s.stages.get(method)
                if base is None or other is None or getattr(base, kind) is None or getattr(other, kind) is None:
                    continue
                a, b = per_task(getattr(base, kind)), per_task(getattr(other, kind))
                for t in set(a) & set(b):
                    diffs.setdefault(t, []).append(b[t] - a[t])
            if diffs:
                from mua.harness.stats import paired_bootstrap

                test = paired_bootstrap([[sum(d) / len(d) for d in diffs.values()]], seed=0)
                print(f" pooled over {len(seeds)} seeds: {method} - SFT ({kind}): {points(test)} over "
                      f"{len(diffs)} tasks")


def behaviour(seeds: list[Seed], tasks: dict[str, dict]) -> None:
    """Per stage (greedy runs, all seeds together): per expected action, the share of episodes that made that
    call exactly and that got each of its arguments right; per fact of the scripted user, the share that asked."""
    from mua.benchmarks.pack.users import asked

    print(" behaviour (greedy episodes; per expected action: exact call, then each argument; asked: each fact):")
    for name in dict.fromkeys(n for s in seeds for n in s.stages):
        counts: dict[str, list[int]] = {}
        for r in (r for s in seeds if name in s.stages for r in episodes(s.stages[name].greedy)):
            task = tasks.get(r["task_id"]) or {}
            messages = [m for m in r.get("messages") or [] if m.get("role") == "assistant"]
            calls = [c for m in messages for c in m.get("tool_calls") or []]
            for action in (task.get("evaluation_criteria") or {}).get("actions") or []:
                made = [arguments(c) for c in calls if call_name(c) == action["name"]]
                want = action.get("arguments") or {}
                tally(counts, action["name"], any(m == want for m in made))
                for key, value in want.items():
                    tally(counts, f"{action['name']}.{key}", any(m.get(key) == value for m in made))
            replies = (task.get("user_scenario") or {}).get("replies") or []
            got = {i for m in messages if m.get("content") for i in asked(m["content"], replies)}
            for i, reply in enumerate(replies):
                tally(counts, f"asked {reply['when'][0]!r}", i in got)
        cells = ", ".join(f"{k} {100 * hit / n:.0f}%" for k, (hit, n) in counts.items())
        print(f"  {name:28} {cells or 'no expected actions'}")


def tally(counts: dict[str, list[int]], key: str, hit: bool) -> None:
    c = counts.setdefault(key, [0, 0])
    c[0] += hit
    c[1] += 1


def call_name(call: dict) -> Optional[str]:
    return (call.get("function") or {}).get("name") or call.get("name")


def arguments(call: dict) -> dict:
    raw = (call.get("function") or {}).get("arguments", call.get("arguments"))
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def plot(seeds: list[Seed], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
    plot_training(left, seeds)
    plot_evaluation(right, seeds)
    fig.tight_layout()
    fig.savefig(out / "learning.png", dpi=110)


def plot_training(left, seeds: list[Seed]) -> None:
    """Each GRPO run's batch mean reward per step."""
    for s in seeds:
        for name, folder in s.grpo_dirs.items():
            path = folder / "metrics.jsonl"
            if path.is_file():
                rows = [json.loads(line) for line in path.read_text().splitlines()]
                left.plot([r["step"] for r in rows], [r.get("reward") for r in rows], ".-",
                          label=f"{name}, seed {s.seed}")
    left.set(xlabel="GRPO step", ylabel="batch mean reward (sampled)", title="training reward", ylim=(-0.05, 1.05))
    if left.lines:
        left.legend(fontsize=7)


def plot_evaluation(right, seeds: list[Seed]) -> None:
    """Each stage's pass^1 on the evaluation split with its interval, per seed, greedy and sampled."""
    names = list(dict.fromkeys(n for s in seeds for n in s.stages))
    for j, s in enumerate(seeds):
        for kind, marker in (("greedy", "o"), ("sampled", "s")):
            xs, ys, lo, hi = [], [], [], []
            for i, name in enumerate(names):
                run = getattr(s.stages[name], kind) if name in s.stages else None
                if run is None:
                    continue
                e = estimate(run)
                xs.append(i + 0.1 * j + (0.05 if kind == "sampled" else 0))
                ys.append(e.value)
                lo.append(e.value - e.low)
                hi.append(e.high - e.value)
            if xs:
                right.errorbar(xs, ys, yerr=[lo, hi], fmt=marker, capsize=3, label=f"seed {s.seed}, {kind}")
    right.set_xticks(range(len(names)), [n.replace(", ", "\n") for n in names], fontsize=8)
    right.set(ylabel="pass^1", title="evaluation split, 95% bootstrap", ylim=(-0.05, 1.05))
    if right.lines or right.collections:
        right.legend(fontsize=7)


if __name__ == "__main__":
    sys.exit(main())
