"""The learning check: does GRPO with the user in the loop raise a HELD-OUT score over an SFT cold start, beyond
what fair baselines from the same SFT checkpoint and the same episode budget reach, on every example pack?

One command runs it all: for each pack of ``--packs`` (default: the bookings, refills, appointments and salon
examples under benchmarks/pack/examples, salon the one whose demonstrations show the behaviour to learn in at
most 20% of conversations; a name there or a pack folder) and each of ``--seeds`` training seeds, one job:
  1. build the tiny model (`mua model tiny --hidden-size 128 --heads 4 --sliding-window 128 --digit-places 8
     --seed S`; with ``--tokenizer-corpus train`` also ``--corpus OUT/<pack>/tokenizer-corpus.txt``, the pack's
     gold train conversations), or start from ``--policy CKPT`` (any checkpoint; the tiny-shape flags are then
     ignored);
  2. SFT it on the gold trajectories of the pack's train split (`mua sft`);
  3. from that SFT checkpoint, with exactly the same number of training episodes (GRPO steps x batch):
     - GRPO with the scripted user in the loop (`mua train`);
     - GRPO with a static user: the reference conversation's user turns replayed whatever the agent says, the
       reward kept (what the responsive user adds);
     - rejection-sampling fine-tuning (RFT): sample episodes from the SFT policy at temperature 1, keep the
       passing ones, SFT on them (the standard non-RL baseline);
     - with ``--user-model CKPT`` (a trained user simulator, e.g. tests/perf/user_model_check.py's), GRPO with
       that model as the user in the loop (the pack played with an LLM user, pack.json "user": "llm"), evaluated
       like every stage with the scripted user;
  4. evaluate every stage on the evaluation split (`--split validation` to tune, `--split test` to report
     once): greedily (one trial) and sampled at temperature 1 (``--sampled-trials`` per task).
Before any job, the parent builds each pack's gold run and gold dataset (and tokenizer corpus when asked) once
(`mua eval --agent gold`, `mua export`) and checks that every gold conversation of the pack's train and
evaluation splits fits the token budgets with the tokenizer its jobs will have (else exit 2). The jobs then run
in ``--jobs`` worker processes (default 2 on 2 or more cores), each with
cpu_count // jobs torch threads (cpu_count // N when only N < jobs are left to run; a running job takes the
cores of finished ones from its next step on, when no job is left to start), the costliest pack's first
(by the wall time of its jobs already finished in OUT, else by the length of its gold conversations); SFT and
GRPO run in bf16 on a GPU when there is one, else float32.

Outputs, per pack under OUT/<pack name>/: gold/, gold-dataset/, seed-S/ (each stage's runs and checkpoints,
job.log, and done.json once the job finished), learning.png. Resumable: re-running the same command skips the
finished jobs (those with a done.json) and clears and redoes an unfinished one, so a crash or Ctrl-C loses only
the jobs in flight; a job's settings are recorded in its done.json and a re-run with other settings is refused.
``--job-timeout SECONDS`` (default 4 hours) kills a job still running after that long (it fails its pack; a re-run redoes it).
Since it clears folders, the check marks OUT as its own (OUT/.mua-learning-check) and refuses a non-empty --out
without that mark.

The report, per pack: pass^1 per seed and stage with 95% bootstrap intervals as `mua leaderboard` computes them,
greedy | sampled; each method minus SFT paired over tasks (greedy and sampled), per seed and pooled over seeds;
a behaviour table per stage (per expected action: the share of episodes that made that call exactly and got each
argument right; per fact of the scripted user: the share that asked for it), greedy with the sampled share
beside it; the teacher-forced copy accuracy per argument with the greedy share beside it; the pack's verdict and
its wall time (the sum of its jobs'). Then the command's wall time and the overall verdict. The same figures go
to OUT/report.md (markdown, headed by the command). Beside each method minus SFT, GRPO with the user minus RFT and
minus the static user, per seed (paired over tasks) and pooled over seeds (a bootstrap over seeds AND tasks, so the
seed-to-seed spread of the trained models is inside the interval). A pack passes on two verdicts, both needed:
*learns*: for every seed, the paired 95% lower bound of GRPO with the user in the loop minus SFT is above zero,
greedy and sampled; *beats baselines*: pooled over at least 5 seeds, the 95% lower bounds of GRPO with the user
minus RFT and minus the static user, sampled, are above zero (fewer seeds: "NOT ENOUGH SEEDS", never a pass).
"No gradient was taken" is said when no GRPO group ever had a reward spread; a job that failed or is missing fails
its pack. Exit 0 only when every pack passes, 1 otherwise, 2 for a bad flag or --out, or a gold conversation over
the token budgets. How the defaults were fixed and why test is run once: docs/learning.md.

    python tests/perf/learning_check.py --out /tmp/learning-check                  # tune: validation split
    python tests/perf/learning_check.py --out /tmp/learning-check --split test     # report once
    python tests/perf/learning_check.py --out /tmp/lc --packs refills --seeds 1    # one pack, one seed
    python tests/perf/learning_check.py --out /tmp/lc-smoke --smoke                # 2 steps, 4 tasks, 1 seed (CI)
    python tests/perf/learning_check.py --out /tmp/lc-rft --tune-rft-lr 1e-4,3e-4,1e-3  # RFT's rate, validation
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
EXAMPLES = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples"
DEFAULT_PACKS = "bookings,refills,appointments,salon"
BEFORE, SFT, GRPO, STATIC, RFT = ("before SFT", "SFT", "GRPO, user in the loop", "GRPO, static user",
                                  "RFT (rejection sampling)")
MODEL_USER = "GRPO, model user in the loop"  # with --user-model
METHODS = (GRPO, STATIC, RFT, MODEL_USER)  # each compared with SFT, paired over tasks (those a run has)
# (candidate, baseline) pairs reported per seed and pooled, greedy and sampled: every method against SFT, then GRPO
# with the user against the two baselines that share its SFT checkpoint and episode budget
COMPARISONS = tuple((m, SFT) for m in METHODS) + ((GRPO, RFT), (GRPO, STATIC))
KINDS = ("greedy", "sampled")
BEAT_SEEDS = 5  # "beats baselines" is judged on at least this many seeds, pooled; fewer is "not enough seeds"
# flags that do not change what a job computes: a re-run may change them and still reuse finished jobs
# OUT's marker and its format: the check clears unfinished job folders only in a folder that carries it
MARKER, FORMAT = ".mua-learning-check", 1
NOT_SETTINGS = {"out", "jobs", "job", "job_threads", "job_timeout", "packs", "pack", "seeds", "argv"}
# Settings added after jobs were recorded without them, with the value those jobs had (digit places came later).
# RFT's samples were GRPO's budget rounded to whole trials over the train split before they were exactly it.
SETTINGS_BEFORE_THEY_EXISTED = {"digit_places": 0, "tokenizer_corpus": "builtin", "rft_episodes": "rounded",
                                "tune_rft_lr": None, "user_model": None, "name_places": 0}
RFT_EPISODES = "exact"  # how RFT's sample count is set (rft_sampling), recorded with every job's settings
# Episodes generated together (evaluations, RFT samples, GRPO rollouts): a whole GRPO step at once. A row's tokens
# do not depend on which rows share its batch (same bytes at 8 and 32), so this is speed only: 32 rows decode in
# about the time of 8 on the tiny model.
CONCURRENCY = 32


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
    wall_s: float = 0.0  # the job's wall time


@dataclass
class PackResult:
    """One pack's finished jobs and the seeds whose job is missing (failed or never ran)."""
    name: str
    label: str  # what was evaluated, e.g. "pack refills, validation split"
    seeds: list[Seed]
    missing: list[int] = field(default_factory=list)
    tasks: dict[str, dict] = field(default_factory=dict)  # task id -> the pack's task record
    out: Optional[Path] = None  # where learning.png goes
    tune_rft_lr: list[float] = field(default_factory=list)  # --tune-rft-lr's rates: a tuning run, no verdict


THREADS_FILE = "threads-wanted"  # in a running job's folder: its share of the cores, raised when other jobs finished
JOB_FOLDER_ENV = "MUA_LEARNING_CHECK_JOB"  # a worker's job folder, where it reads THREADS_FILE


def mua(*argv) -> None:
    from mua.harness.cli import main

    take_more_threads()
    code = main([str(a) for a in argv])
    if code != 0:
        raise SystemExit(f"learning check: `mua {' '.join(map(str, argv))}` exited {code}")


def take_more_threads() -> None:
    """In a worker, before each step: the share of the cores the parent last wrote for this job, when larger
    (the last jobs running get the cores of the finished ones; set between steps, never inside one)."""
    folder = os.environ.get(JOB_FOLDER_ENV)
    if not folder:
        return
    try:
        wanted = int((Path(folder) / THREADS_FILE).read_text())
    except (OSError, ValueError):
        return
    import torch

    if wanted > torch.get_num_threads():
        torch.set_num_threads(wanted)
        print(f"learning check: now {wanted} threads", flush=True)


def speed_flags() -> list[str]:
    """Precision and memory flags for every `mua sft` and `mua train` call: bf16 on a GPU, float32 on the CPU;
    no gradient checkpointing (about 20% faster on the tiny model, and nothing worth saving in memory)."""
    import torch

    return ["--bf16", "true" if torch.cuda.is_available() else "false", "--gradient_checkpointing", "false"]


def evaluate(ckpt: Path, run: Path, args, temperature: float, trials: int, template: Optional[str] = None) -> Path:
    limit = ["--limit", str(args.eval_tasks)] if args.eval_tasks else []
    mua("eval", "--benchmark", "pack", "--data-dir", args.pack, "--split", args.split, "--agent-model", ckpt,
        "--agent-temperature", temperature, "--trials", trials, "--seed", args.eval_seed,
        "--agent-params", json.dumps({"max_tokens": args.max_turn_tokens, "max_batch": CONCURRENCY}), "--out", run,
        "--concurrency", CONCURRENCY, "--no-progress", *limit,
        *(["--agent-chat-template", template] if template else []))
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
    from transformers import AutoModelForCausalLM

    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.models.local import stop_ids_for
    from mua.harness.models.tokenizer import load_tokenizer
    from mua.training.budgets import reply_lengths

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))  # the tests' gold-stream helper
    from gold_warmup import gold_streams

    tokenizer = load_tokenizer(ckpt)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = AutoModelForCausalLM.from_pretrained(ckpt).eval().to(device)
    bench = PackBenchmark(args.pack)
    tasks = bench.load_tasks("tasks", args.split)[:args.eval_tasks or None]
    counts: dict[str, list[int]] = {}
    for task, stream in zip(tasks, gold_streams(bench, tasks, tokenizer, stop_ids_for(tokenizer, model.generation_config))):
        with torch.no_grad():
            predicted = model(torch.tensor([stream.ids], device=device)).logits[0].argmax(-1).tolist()
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


def grpo(policy: Path, out: Path, args, seed: int, static_user: bool, user_model: Optional[Path] = None) -> Path:
    """GRPO from ``policy``: with the scripted user, the static user, or the LLM user played by ``user_model``."""
    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.registry import register_benchmark

    pack = args.pack if user_model is None else llm_user_pack(args.pack, out.parent / "pack-llm-user")
    register_benchmark(PackBenchmark, static_user=static_user)
    try:
        mua("train", "--policy", policy, "--benchmark", "pack", "--data_dir", pack, "--split", "train",
            *(["--user_model", user_model] if user_model else []),
            "--output_dir", out, "--no-resume", "--max_steps", args.grpo_steps, "--num_generations", args.group,
            "--batch_size", args.batch, "--learning_rate", args.grpo_lr, "--max_turn_tokens", args.max_turn_tokens,
            "--max_completion_tokens", 4 * args.max_turn_tokens, "--save_steps", 10**6, "--no-progress",
            "--concurrency", CONCURRENCY, "--stop_after_flat_steps", 0,  # the protocol's steps, flat or not
            *speed_flags(), "--temperature", "1.0", "--seed", seed,
            *(["--limit", args.train_tasks] if args.train_tasks else []))
    finally:
        register_benchmark(PackBenchmark)
    return out


def llm_user_pack(pack: Path, out: Path) -> Path:
    """A copy of ``pack`` whose user is an LLM (pack.json "user": "llm"; its scripted replies stay for gold runs)."""
    if not out.exists():
        shutil.copytree(pack, out, ignore=shutil.ignore_patterns("__pycache__"))
        meta = json.loads((out / "pack.json").read_text(encoding="utf-8"))
        write_atomically(out / "pack.json", json.dumps({**meta, "user": "llm"}))
    return out


def rft(policy: Path, folder: Path, args, seed: int, lr: Optional[float] = None, name: str = "rft") -> Path:
    """Rejection-sampling fine-tuning with GRPO's episode budget: sample train episodes from the SFT policy at
    temperature 1, keep the passing ones, fine-tune the SFT checkpoint on them at ``lr`` (default --rft-lr) into
    ``folder / name``. The samples are drawn once per seed: every learning rate tuned trains on the same ones."""
    from mua.benchmarks.pack import PackBenchmark

    n_tasks = args.train_tasks or len(PackBenchmark(args.pack).load_tasks("tasks", "train"))
    trials, tasks = rft_sampling(args.grpo_steps * args.batch, n_tasks)
    mua("eval", "--benchmark", "pack", "--data-dir", args.pack, "--split", "train", "--agent-model", policy,
        "--agent-temperature", "1.0", "--trials", trials, "--limit", tasks,
        "--seed", seed, "--agent-params", json.dumps({"max_tokens": args.max_turn_tokens, "max_batch": CONCURRENCY}),
        "--concurrency", CONCURRENCY, "--out", folder / "rft-samples", "--no-progress")
    kept = sum(1 for r in episodes(folder / "rft-samples") if r.get("reward") == 1.0)
    if not kept:
        print(f"  RFT, seed {seed}: no sampled episode passed; the RFT policy is the SFT policy", flush=True)
        return policy
    if not (folder / "rft-dataset").exists():  # absent until the first learning rate of this seed
        mua("export", folder / "rft-samples", "--out", folder / "rft-dataset", "--min-reward", "1", "--data-dir",
            args.pack)
    mua("sft", "--policy", policy, "--dataset", folder / "rft-dataset", "--output-dir", folder / name,
        "--num-train-epochs", "1", "--learning-rate", args.rft_lr if lr is None else lr, "--seed", seed,
        "--no-progress", *speed_flags())
    return folder / name


def rft_sampling(budget: int, n_tasks: int) -> tuple[int, int]:
    """(trials per task, tasks) for RFT's samples: exactly ``budget`` episodes (GRPO's steps x batch), over as many
    of the ``n_tasks`` train tasks as an equal number of trials each allows. (Rounding budget / tasks gave 640
    episodes for GRPO's 768 on a pack of 640 train tasks.)"""
    if budget < 1 or n_tasks < 1:
        raise ValueError(f"RFT needs a budget and tasks (budget {budget}, tasks {n_tasks})")
    trials = -(-budget // n_tasks)  # the fewest trials whose tasks fit the split
    while budget % trials:
        trials += 1
    return trials, budget // trials


def check_budgets(policy: Path, name: str, args) -> None:
    """Before any training: every gold conversation of the pack's train and evaluation splits fits the reply and
    episode token budgets (training/budgets.py, as `mua train` checks), else one line naming the count and a task
    and exit 2."""
    from transformers import AutoConfig, GenerationConfig

    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.errors import MuaError
    from mua.harness.models.local import stop_ids_for
    from mua.harness.models.templates import prepare_tokenizer
    from mua.harness.models.tokenizer import load_tokenizer
    from mua.training.budgets import check_gold_budgets
    from mua.training.policy import Budget

    tokenizer = load_tokenizer(policy)
    try:
        prepare_tokenizer(tokenizer, str(policy), args.chat_template)
    except MuaError as exc:
        refuse(str(exc))
    stop_ids = stop_ids_for(tokenizer, GenerationConfig.from_pretrained(policy))
    bench = PackBenchmark(args.pack)
    for split in ("train", args.split):
        fit = check_gold_budgets(bench, bench.load_tasks("tasks", split), tokenizer, stop_ids,
                                 Budget(args.max_turn_tokens, 4 * args.max_turn_tokens),
                                 getattr(AutoConfig.from_pretrained(policy), "max_position_embeddings", None))
        print(f"learning check: pack {name}: {fit.line(f'split {split}')}", flush=True)
        print(f"learning check: pack {name}: {fit.gold.line(f'of split {split}')}", flush=True)
        if not fit.fits and not args.smoke:  # the smoke's short budgets cut replies on purpose: it proves nothing
            raise SystemExit(2)
        if not fit.gold.ok:  # a pack its own gold agent fails cannot teach anything: stop before training
            raise SystemExit(2)


def build_tiny(out: Path, seed: int, args, corpus: Optional[Path] = None) -> Path:
    """The tiny model (its tokenizer's merges learnt also from ``corpus`` when given)."""
    mua("model", "tiny", out, "--hidden-size", args.hidden_size, "--heads", args.heads, "--layers", args.layers,
        "--sliding-window", args.sliding_window, "--seed", seed, *(["--single-digits"] if args.single_digits else []),
        *(["--digit-places", args.digit_places] if args.digit_places else []),
        *(["--name-places", args.name_places] if args.name_places else []),
        *(["--corpus", corpus] if corpus else []),
        "--overwrite")  # rebuilt on every run (same seed, same bytes)
    return out


def corpus_file(pack_out: Path, args) -> Optional[Path]:
    """The pack's tokenizer corpus when the tiny tokenizer learns from it (``--tokenizer-corpus train``), else None."""
    return pack_out / "tokenizer-corpus.txt" if args.tokenizer_corpus == "train" and args.policy is None else None


def write_corpus(path: Path, pack_out: Path) -> None:
    """The pack's gold train conversations as the tiny model's chat template renders them (with the built-in
    tokenizer, whose template it is), written once and atomically: the text the tiny tokenizer learns words from."""
    if path.exists():
        return
    from datasets import load_from_disk

    from mua.harness.models.tiny import build_tiny_tokenizer

    tok = build_tiny_tokenizer()
    rows = load_from_disk(str(pack_out / "gold-dataset"))
    write_atomically(path, "".join(tok.apply_chat_template(r["messages"], tools=json.loads(r["tools"]),
                                                           tokenize=False) + "\n" for r in rows))


def build_gold(args) -> None:
    """The pack's gold run on the train split and its dataset, once, before any job (``args.out`` is the pack's
    folder)."""
    gold = args.out / "gold"
    mua("eval", "--benchmark", "pack", "--data-dir", args.pack, "--agent", "gold", "--split", "train",
        "--out", gold, "--no-progress")  # resumes, or finds the run complete
    if not (args.out / "gold-dataset").exists():
        mua("export", gold, "--out", args.out / "gold-dataset", "--min-reward", "1", "--data-dir", args.pack)


def one_seed(seed: int, args) -> Seed:
    """One job: ``args.pack`` is the pack's folder, ``args.out`` the pack's output folder holding gold-dataset/."""
    folder = args.out / f"seed-{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    sft = folder / "sft"
    template = args.chat_template if args.policy else None  # the tiny model's own template speaks tools
    start = args.policy or build_tiny(folder / "tiny", seed, args, corpus_file(args.out, args))
    mua("sft", "--policy", start, "--dataset", args.out / "gold-dataset", "--output-dir", sft, "--max-steps",
        args.sft_steps, "--learning-rate", args.sft_lr, "--lr-scheduler-type", args.sft_lr_scheduler, "--seed", seed,
        "--no-progress", *speed_flags(), *(["--chat-template", template] if template else []),
        *(["--batch-size", args.sft_batch] if args.sft_batch else []))
    result = Seed(seed)
    if args.tune_rft_lr:  # tuning: SFT, then RFT at each learning rate from the same samples, nothing else
        result.stages[SFT] = stage(sft, "sft", folder, args)
        for lr in args.tune_rft_lr:
            result.stages[rft_stage(lr)] = stage(rft(sft, folder, args, seed, lr, f"rft-lr{lr:g}"), f"rft-lr{lr:g}",
                                                 folder, args)
        return result
    if seed == args.first_seed:  # the starting model: once is enough
        result.stages[BEFORE] = Stage(evaluate(start, folder / "eval-before", args, 0.0, 1, template))
    result.stages[SFT] = stage(sft, "sft", folder, args)
    result.copied[SFT] = teacher_forced_copy(sft, args)
    result.grpo_dirs[GRPO] = grpo(sft, folder / "grpo", args, seed, static_user=False)
    result.stages[GRPO] = stage(folder / "grpo", "grpo", folder, args)
    result.copied[GRPO] = teacher_forced_copy(folder / "grpo", args)
    if not args.no_baselines:
        result.grpo_dirs[STATIC] = grpo(sft, folder / "grpo-static", args, seed, static_user=True)
        result.stages[STATIC] = stage(folder / "grpo-static", "grpo-static", folder, args)
        result.stages[RFT] = stage(rft(sft, folder, args, seed), "rft", folder, args)
    if args.user_model is not None:
        result.grpo_dirs[MODEL_USER] = grpo(sft, folder / "grpo-model-user", args, seed, static_user=False,
                                            user_model=args.user_model)
        result.stages[MODEL_USER] = stage(folder / "grpo-model-user", "grpo-model-user", folder, args)
    return result


def rft_stage(lr: float) -> str:
    """A tuned RFT stage's name."""
    return f"RFT at learning rate {lr:g}"


def tuned(seeds: list[Seed], rates: list[float]) -> tuple[list[str], Optional[float]]:
    """--tune-rft-lr's report: per learning rate, the mean over seeds of its sampled pass^1 on validation (greedy
    beside it), and the rate with the highest sampled mean, or None when none ran or the best is tied."""
    lines, best, best_value, tied = [], None, -1.0, False
    for lr in rates:
        runs = [s.stages[rft_stage(lr)] for s in seeds if rft_stage(lr) in s.stages]
        sampled = [estimate(r.sampled).value for r in runs if r.sampled is not None]
        greedy = [estimate(r.greedy).value for r in runs]
        if not sampled:
            continue
        value = sum(sampled) / len(sampled)
        lines.append(f" RFT learning rate {lr:g}: sampled pass^1 {100 * value:.1f}, greedy "
                     f"{100 * sum(greedy) / len(greedy):.1f} (mean over {len(sampled)} seed(s), validation)")
        tied = value == best_value or (tied and value < best_value)
        if value > best_value:
            best, best_value = lr, value
    return lines, None if tied else best


def refuse(line: str) -> None:
    print(f"learning check: {line}", file=sys.stderr, flush=True)
    raise SystemExit(2)


def pack_folders(spec: str) -> dict[str, Path]:
    """``--packs``: example pack names or pack folders, comma-separated -> {the pack's name: its folder}; exit 2
    naming what is not a pack or a name given twice."""
    from mua.benchmarks.pack.loader import load_pack
    from mua.harness.errors import MuaError

    found: dict[str, Path] = {}
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        folder = EXAMPLES / item if "/" not in item and (EXAMPLES / item).is_dir() else Path(item)
        if not folder.is_dir():
            examples = ", ".join(sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()))
            refuse(f"--packs: {item!r} is neither an example pack ({examples}) nor a folder")
        try:
            name = load_pack(folder.resolve()).name
        except MuaError as exc:
            refuse(f"--packs: {item!r}: {exc}")
        if name in found:
            refuse(f"--packs: the pack {name!r} is named twice")
        found[name] = folder.resolve()
    if not found:
        refuse("--packs names no pack")
    return found


def settings(args) -> dict:
    """What a job's results depend on (every flag but where, which and how many), as recorded in done.json."""
    recorded = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k not in NOT_SETTINGS}
    return dict(sorted({**recorded, "rft_episodes": RFT_EPISODES}.items()))


def write_done(result: Seed, pack_out: Path, job_settings: dict) -> None:
    """The finished job's record, written atomically: paths relative to the pack's folder."""
    def rel(p: Optional[Path]) -> Optional[str]:
        return None if p is None else os.path.relpath(p, pack_out)

    record = {"seed": result.seed, "wall_s": round(result.wall_s, 1), "settings": job_settings,
              "stages": {n: {"greedy": rel(st.greedy), "sampled": rel(st.sampled)} for n, st in result.stages.items()},
              "grpo_dirs": {n: rel(p) for n, p in result.grpo_dirs.items()}, "copied": result.copied}
    path = pack_out / f"seed-{result.seed}" / "done.json"
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        f.write(json.dumps(record, indent=1) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_done(pack_out: Path, seed: int) -> Optional[tuple[Seed, dict]]:
    """A finished job (its Seed and its settings), or None when it has no done.json."""
    path = pack_out / f"seed-{seed}" / "done.json"
    if not path.is_file():
        return None
    r = json.loads(path.read_text())
    at = lambda p: None if p is None else pack_out / p  # noqa: E731
    result = Seed(r["seed"], {n: Stage(pack_out / st["greedy"], at(st["sampled"])) for n, st in r["stages"].items()},
                  {n: pack_out / p for n, p in r["grpo_dirs"].items()}, r["copied"], r["wall_s"])
    return result, r["settings"]


def run_job(spec: str, packs: dict[str, Path], args) -> int:
    """In a worker process: one (pack, seed) job, ending in its done.json."""
    import torch

    torch.set_num_threads(args.job_threads or threads_per_job(args.jobs))
    name, _, seed = spec.rpartition(":")
    started = time.monotonic()
    job_settings = settings(args)
    args.pack, args.out = packs[name], args.out / name
    try:
        result = one_seed(int(seed), args)
    except Exception as exc:  # the traceback, then one line the parent shows: the log's last
        import traceback

        traceback.print_exc()
        return job_failed(name, seed, f"{type(exc).__name__}: {exc}")
    except SystemExit as exc:  # a `mua` step that exited non-zero says so in its message
        if not isinstance(exc.code, str):
            raise
        return job_failed(name, seed, exc.code)
    result.wall_s = time.monotonic() - started
    write_done(result, args.out, job_settings)
    return 0


def job_failed(name: str, seed: str, why: str) -> int:
    lines = why.strip().splitlines()
    print(f"{failure_line(name, seed)}{lines[0] if lines else '(no message)'}", file=sys.stderr, flush=True)
    return 1


def failure_line(name: str, seed) -> str:
    """How a worker's last line starts when its job crashed."""
    return f"job {name} seed {seed} failed: "


def threads_per_job(jobs: int) -> int:
    return max(1, (os.cpu_count() or 1) // jobs)


def worker_argv(name: str, seed: int, threads: int, args) -> list[str]:
    """The command of one job's worker: this script again, with the parent's flags."""
    return [sys.executable, str(Path(__file__).resolve()), *args.argv, "--job", f"{name}:{seed}",
            "--job-threads", str(threads)]


def run_jobs(todo: list[tuple[str, int]], args) -> list[tuple[str, int]]:
    """Runs the (pack, seed) jobs in ``args.jobs`` worker processes (this script again, with --job), each with its
    share of the cores; an unfinished job's folder is cleared first; a job past ``--job-timeout`` is killed. Returns
    the jobs that failed, each reported with the last lines of its log."""
    check_job_folders(todo, args.out)
    pending, running, failed = list(todo), {}, []
    stop_on_sigterm = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the finally below stops the jobs
    try:
        while pending or running:
            while pending and len(running) < args.jobs:
                # fewer jobs left than --jobs share the cores among themselves: a lone job gets them all
                threads = threads_per_job(min(args.jobs, len(running) + len(pending)))
                name, seed = pending.pop(0)
                running[(name, seed)] = start_job(name, seed, threads, args)
            time.sleep(0.5)
            for (name, seed), (proc, log, t0) in list(running.items()):
                late = False
                if proc.poll() is None:
                    if not args.job_timeout or time.monotonic() - t0 <= args.job_timeout:
                        continue
                    stop(proc, signal.SIGKILL)
                    late = True
                log.close()
                del running[(name, seed)]
                if not job_ended(name, seed, proc.returncode, t0, late, args):
                    failed.append((name, seed))
                if not pending:  # a core came free and no job waits for it: the running ones share it
                    for other in running:
                        share_cores(other, threads_per_job(len(running)), args.out)
    finally:
        signal.signal(signal.SIGTERM, stop_on_sigterm)  # a second SIGTERM ends this process at once
        for proc, log, _ in running.values():  # interrupted: stop the jobs in flight (redone on the next run)
            stop(proc, signal.SIGTERM)
            log.close()
    return failed


def share_cores(job: tuple[str, int], threads: int, out: Path) -> None:
    """Tell a running job (through its folder) that it may use ``threads`` threads from its next step on."""
    path = out / job[0] / f"seed-{job[1]}" / THREADS_FILE
    try:
        if int(path.read_text()) >= threads:
            return
    except (OSError, ValueError):
        pass
    write_atomically(path, f"{threads}\n")


def check_job_folders(todo: list[tuple[str, int]], out: Path) -> None:
    """Before any is cleared: every unfinished job folder must be one this check made (under a marked OUT, and
    holding the job.log written first thing when a job starts, or nothing), else one line and exit 2."""
    if not (out / MARKER).is_file():
        refuse(f"{out} holds no {MARKER}: not a learning check's output folder, so nothing in it is cleared")
    for name, seed in todo:
        folder = out / name / f"seed-{seed}"
        if folder.exists() and (not folder.is_dir() or (any(folder.iterdir()) and not (folder / "job.log").is_file())):
            refuse(f"{folder} is not a learning check's job folder (it has no job.log), so it is not cleared: move "
                   f"it away, or use another --out")


def claim_out(out: Path) -> None:
    """Makes sure OUT is this check's before anything is written or deleted there: a new or empty folder gets the
    marker; a non-empty one without it is refused (exit 2): unfinished job folders in OUT get cleared, and nothing
    that is not the check's own may be."""
    marker = out / MARKER
    if marker.is_file():
        found = marker.read_text(errors="replace").strip()
        if found != f"format {FORMAT}":
            refuse(f"{out} was written by another version of the learning check ({MARKER} says {found[:40]!r}, this "
                   f"one writes 'format {FORMAT}'): use another --out")
        return
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        refuse(f"--out {out} is not empty and holds no {MARKER}, so it may not be a learning check's output folder "
               f"(the check clears unfinished job folders there): use another --out, or, for a learning check's "
               f"output from before the marker, create it: echo 'format {FORMAT}' > {marker}")
    out.mkdir(parents=True, exist_ok=True)
    write_atomically(marker, f"format {FORMAT}\n")


def start_job(name: str, seed: int, threads: int, args) -> tuple[subprocess.Popen, Any, float]:
    """Clears the job's folder and starts its worker in a process group of its own, so that a kill reaches every
    process it started; (the worker, its open log, its start time)."""
    folder = args.out / name / f"seed-{seed}"
    shutil.rmtree(folder, ignore_errors=True)  # unfinished: redone from the start
    folder.mkdir(parents=True)
    log = open(folder / "job.log", "w")
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads), JOB_FOLDER_ENV: str(folder)}
    proc = subprocess.Popen(worker_argv(name, seed, threads, args), stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
    print(f"learning check: pack {name}, seed {seed}: started with {threads} thread(s) (log: {folder / 'job.log'})",
          flush=True)
    return proc, log, time.monotonic()


def job_ended(name: str, seed: int, code: int, t0: float, late: bool, args) -> bool:
    """Reports a worker that ended (or was killed when ``late``); whether its job finished."""
    folder = args.out / name / f"seed-{seed}"
    if late:
        (folder / "done.json").unlink(missing_ok=True)  # killed: unfinished whatever it wrote, redone next time
        print(f"learning check: pack {name}, seed {seed}: FAILED: still running after --job-timeout "
              f"{args.job_timeout:g} s, so killed; the other jobs go on, and the next run redoes it (log: "
              f"{folder / 'job.log'})", file=sys.stderr, flush=True)
        return False
    if code == 0 and (folder / "done.json").is_file():
        print(f"learning check: pack {name}, seed {seed}: done in {time.monotonic() - t0:.0f} s", flush=True)
        return True
    lines = (folder / "job.log").read_text(errors="replace").splitlines()
    tail = "\n".join("    " + line for line in lines[-15:])
    why = next((f": {line}" for line in reversed(lines) if line.startswith(failure_line(name, seed))), "")
    print(f"learning check: pack {name}, seed {seed}: FAILED (exit {code}){why}; the other jobs go on. The end of "
          f"{folder / 'job.log'}:\n{tail}", file=sys.stderr, flush=True)
    return False


def stop(proc: subprocess.Popen, sig: int, grace: float = 10.0) -> None:
    """Sends ``sig`` to a worker's process group, then SIGKILL if it still runs after ``grace`` seconds; waits for
    it, but never forever (a process stuck in the kernel may outlive even SIGKILL for a while)."""
    for send in (sig, signal.SIGKILL):
        try:
            os.killpg(proc.pid, send)
        except ProcessLookupError:  # the group is gone already
            pass
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def parse_args(argv: Optional[list[str]] = None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/learning-check"))
    ap.add_argument("--packs", default=None,
                    help=f"comma-separated example pack names (under benchmarks/pack/examples) or pack folders "
                         f"(default: {DEFAULT_PACKS})")
    ap.add_argument("--pack", default=None, help="one pack: the same as --packs PACK")
    ap.add_argument("--split", default="validation", choices=("validation", "test"),
                    help="evaluation split: tune on validation, report test once (default validation)")
    ap.add_argument("--seeds", type=int, default=None,
                    help=f"training seeds per pack (default {BEAT_SEEDS}, the fewest 'beats baselines' is judged on; "
                         f"1 with --smoke): the verdict needs each")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2 if (os.cpu_count() or 1) >= 2 else 1,
                    help="(pack, seed) jobs run at once, each in its own process with cpu_count // jobs threads, or "
                         "cpu_count // N when only N < jobs are left (default 2 on 2 or more cores)")
    ap.add_argument("--job-timeout", type=float, default=4 * 3600, metavar="SECONDS",
                    help="kill a job still running after this many seconds (with every process it started): it "
                         "fails its pack, and a re-run redoes it (default 4 hours, about 20x the slowest job "
                         "measured on 2 cores; 0: no limit)")
    ap.add_argument("--job", default=None, help=argparse.SUPPRESS)  # a worker: PACK:SEED
    ap.add_argument("--job-threads", type=int, default=None, help=argparse.SUPPRESS)  # a worker's torch threads
    ap.add_argument("--smoke", action="store_true",
                    help="2 SFT steps of 2 episodes and 2 GRPO steps on 4 tasks, one seed: runs, proves nothing")
    ap.add_argument("--policy", type=Path, default=None,
                    help="start every seed from this checkpoint instead of the tiny model (the tiny-shape flags "
                         "--hidden-size, --heads, --sliding-window, --layers, --single-digits, --digit-places, --name-places "
                         "are then ignored)")
    ap.add_argument("--chat-template", default=None, metavar="hermes|llama3_json|FILE",
                    help="with --policy: the chat template to put on a checkpoint whose own one drops tool use")
    ap.add_argument("--hidden-size", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--sliding-window", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--single-digits", action="store_true", help="tiny tokenizer: one token per digit")
    ap.add_argument("--digit-places", type=int, default=8, metavar="N",
                    help="tiny tokenizer: the first N digits of a number as digit-and-place tokens (0: off)")
    ap.add_argument("--name-places", type=int, default=0, metavar="N",
                    help="tiny tokenizer: the first N letters of a name as letter-and-place tokens (0: off)")
    ap.add_argument("--tokenizer-corpus", default="builtin", choices=("builtin", "train"),
                    help="tiny tokenizer: merges from its built-in text only (default), or also from the pack's gold "
                         "train conversations (train: their words become tokens and conversations about 40%% "
                         "shorter, but names and ids are no longer copied: refills validation, surname 4%%, quote 0%% "
                         "after SFT)")
    ap.add_argument("--sft-steps", type=int, default=1200)
    ap.add_argument("--sft-lr", type=float, default=3e-3)
    ap.add_argument("--sft-batch", type=int, default=None, help="SFT episodes per step (default: TRL's, 8; 2 with "
                                                                  "--smoke)")
    ap.add_argument("--sft-lr-scheduler", default="linear", choices=("constant", "linear", "cosine"))
    ap.add_argument("--grpo-steps", type=int, default=24)
    ap.add_argument("--grpo-lr", type=float, default=3e-4)
    ap.add_argument("--rft-lr", type=float, default=3e-4, help="RFT: one epoch over the kept episodes")
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--max-turn-tokens", type=int, default=96)
    ap.add_argument("--train-tasks", type=int, default=None)
    ap.add_argument("--eval-tasks", type=int, default=None, help="tasks evaluated (default: the whole split)")
    ap.add_argument("--sampled-trials", type=int, default=3, help="temperature-1 trials per task (0: greedy only)")
    ap.add_argument("--eval-seed", type=int, default=0)
    ap.add_argument("--no-baselines", action="store_true", help="GRPO with the user only: no static user, no RFT")
    ap.add_argument("--tune-rft-lr", default=None, metavar="LR,LR,...",
                    help="tune RFT's learning rate on the validation split (refused with --split test): per seed, SFT "
                         "then RFT at each rate from the same samples, no GRPO; the report names the rate with the "
                         "best sampled pass^1, to give as --rft-lr (docs/learning.md)")
    ap.add_argument("--user-model", type=Path, default=None, metavar="CKPT",
                    help="also GRPO with this user model in the loop (a checkpoint folder, e.g. the one "
                         "tests/perf/user_model_check.py trains), beside the scripted user")
    args = ap.parse_args(argv)
    if args.seeds is None:
        args.seeds = 1 if args.smoke else BEAT_SEEDS
    if args.seeds < 1 or args.sampled_trials < 0 or args.jobs < 1 or not args.job_timeout >= 0:
        refuse("--seeds and --jobs must be at least 1, --sampled-trials and --job-timeout at least 0")
    if args.pack and args.packs:
        refuse("--pack is --packs with one pack: give one of them")
    if args.policy is not None and not args.policy.is_dir():
        refuse(f"--policy: {args.policy} is not a checkpoint folder")
    if args.chat_template and args.policy is None:
        refuse("--chat-template goes with --policy (the tiny model's own template speaks tools)")
    if args.tune_rft_lr is not None:
        args.tune_rft_lr = tuning_rates(args.tune_rft_lr, args.split)
    args.packs = args.pack or args.packs or DEFAULT_PACKS
    args.pack = None  # a job's own pack folder, set when it runs
    if args.policy is not None:
        args.policy = args.policy.resolve()
    if args.user_model is not None:
        args.user_model = checkpoint_folder(args.user_model)
    if args.smoke:
        args.sft_steps, args.grpo_steps, args.group, args.batch, args.sft_batch = 2, 2, 2, 2, 2
        args.train_tasks, args.eval_tasks, args.max_turn_tokens, args.sampled_trials = 4, 4, 24, 2
    return args


def checkpoint_folder(path: Path) -> Path:
    """--user-model's checkpoint, resolved; exit 2 for a folder without a config.json."""
    if not (path / "config.json").is_file():
        refuse(f"--user-model: {path} is not a checkpoint folder")
    return path.resolve()


def tuning_rates(text: str, split: str) -> list[float]:
    """--tune-rft-lr's rates, sorted; exit 2 for a bad list or on any split but validation."""
    try:
        rates = sorted({float(x) for x in text.split(",") if x.strip()})
    except ValueError:
        refuse(f"--tune-rft-lr: {text!r} is not a comma-separated list of learning rates")
    if not rates or min(rates) <= 0:
        refuse("--tune-rft-lr: give one or more learning rates above 0")
    if split != "validation":
        refuse("--tune-rft-lr tunes on the validation split only: the test split is reported once, after tuning")
    return rates


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what a worker is started with, and the report's
    packs = pack_folders(args.packs)
    if args.job:
        return run_job(args.job, packs, args)
    claim_out(args.out)
    import torch

    torch.set_num_threads(threads_per_job(1))
    started = time.monotonic()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    # the tokenizer and window every job will have: each pack's gold conversations must fit them, before any gold
    # run (a pack's own tokenizer, learnt from its gold run, is checked again once that exists)
    budget_model = args.policy or build_tiny(out / "budget-model", args.first_seed, args)
    for name, folder in packs.items():
        args.pack = folder
        check_budgets(budget_model, name, args)
    for name, folder in packs.items():
        args.pack, args.out = folder, out / name
        build_gold(args)
        corpus = corpus_file(args.out, args)
        if corpus is not None:
            write_corpus(corpus, args.out)
            check_budgets(build_tiny(args.out / "budget-model", args.first_seed, args, corpus), name, args)
    args.pack, args.out = None, out
    finished, todo = finished_jobs(packs, seeds, args)
    run_jobs(longest_first(todo, out, settings(args)), args)
    for name, seed in todo:
        done = read_done(out / name, seed)
        if done is not None:
            finished[(name, seed)] = done[0]
    from mua.benchmarks.pack.loader import load_pack

    results = []
    for name, folder in packs.items():
        pack = load_pack(folder)
        results.append(PackResult(name, f"pack {name}, {args.split} split",
                                  [finished[(name, s)] for s in seeds if (name, s) in finished],
                                  [s for s in seeds if (name, s) not in finished],
                                  {str(t["id"]): t for t in pack.tasks}, out / name, args.tune_rft_lr or []))
    command = " ".join(["python", "tests/perf/learning_check.py", *map(shell_word, args.argv)])
    return report(results, out, started, command)


def finished_jobs(packs: dict[str, Path], seeds: range, args) -> tuple[dict[tuple[str, int], Seed],
                                                                     list[tuple[str, int]]]:
    """The jobs already done (reused) and those to run; exit 2 when a done one was run with other settings."""
    job_settings, finished, todo = settings(args), {}, []
    for name in packs:
        for seed in seeds:
            done = read_done(args.out / name, seed)
            if done is None:
                todo.append((name, seed))
                continue
            recorded = {**SETTINGS_BEFORE_THEY_EXISTED, **done[1]}
            if recorded != job_settings:
                changed = sorted(k for k in set(recorded) | set(job_settings) if recorded.get(k) != job_settings.get(k))
                refuse(f"{args.out / name / f'seed-{seed}'} was run with other settings ({', '.join(changed)}): use "
                       f"another --out, or remove that folder")
            finished[(name, seed)] = done[0]
    if finished:
        print(f"learning check: {len(finished)} finished job(s) reused, {len(todo)} to run", flush=True)
    return finished, todo


def longest_first(todo: list[tuple[str, int]], out: Path, job_settings: dict) -> list[tuple[str, int]]:
    """The jobs to run, the costliest pack's first, so that the last job to finish started early and the tail
    with idle cores is short; ties keep their order (packs as given, then seeds)."""
    costs, basis = pack_costs(sorted({name for name, _ in todo}), out, job_settings)
    order = sorted(todo, key=lambda job: -costs[job[0]])
    if len(costs) > 1:
        print(f"learning check: jobs start longest first by {basis}: "
              f"{', '.join(dict.fromkeys(name for name, _ in order))}", flush=True)
    return order


def pack_costs(names: list[str], out: Path, job_settings: dict) -> tuple[dict[str, float], str]:
    """Each pack's expected job cost and what it is: the mean wall time of its jobs finished in OUT with these
    settings when every pack has one (seconds cannot be compared with the proxy), else the proxy, the mean length
    of its gold conversations on the train split (a job's steps are fixed, so its cost follows the length of a
    conversation, not how many there are)."""
    measured = {name: measured_wall(out / name, job_settings) for name in names}
    if all(wall is not None for wall in measured.values()):
        return {name: float(wall or 0) for name, wall in measured.items()}, "measured wall time"
    return {name: gold_chars(out / name / "gold") for name in names}, "gold conversation length"


def measured_wall(pack_out: Path, job_settings: dict) -> Optional[float]:
    """The mean wall time of the pack's finished jobs that ran with ``job_settings``, or None when none did."""
    walls = []
    for path in sorted(pack_out.glob("seed-*/done.json")):
        record = json.loads(path.read_text())
        if record.get("settings") == job_settings:
            walls.append(float(record["wall_s"]))
    return sum(walls) / len(walls) if walls else None


def gold_chars(gold: Path) -> float:
    """The mean characters of a gold run's conversations (0 when it has none)."""
    if not (gold / "episodes.jsonl").is_file():
        return 0.0
    lengths = [len(json.dumps(r.get("messages") or [])) for r in episodes(gold)]
    return sum(lengths) / len(lengths) if lengths else 0.0


def shell_word(word: str) -> str:
    import shlex

    return shlex.quote(word)


def no_gradient(grpo_dir: Optional[Path]) -> bool:
    """Whether no GRPO group ever had a reward spread (TRL's frac_reward_zero_std was 1 at every logged step):
    every advantage was zero, so the weights never moved."""
    path = grpo_dir / "metrics.jsonl" if grpo_dir else None
    if path is None or not path.is_file():
        return False
    from mua.training.progress import is_flat

    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return bool(rows) and all(is_flat(r) for r in rows)


class Out:
    """Each printed line, and the same figures as markdown for OUT/report.md."""

    def __init__(self) -> None:
        self.md: list[str] = []

    def say(self, line: str = "", md: Optional[str] = None) -> None:
        """Prints ``line``; adds ``md`` (when given) to the markdown."""
        print(line, flush=True)
        if md is not None:
            self.md.append(md)


def report(packs: list[PackResult], out: Path, started: float, command: str = "") -> int:
    """Prints each pack's figures and verdict, then the command's wall time and the overall verdict, and writes the
    same as OUT/report.md. 0 when every pack passes, else 1."""
    o = Out()
    o.md += ["# Learning check", "", "```", command or "(command not recorded)", "```", ""]
    passed = [pack_report(p, o) for p in packs]
    ok = bool(packs) and all(passed)
    wall = f"{time.monotonic() - started:.0f} s"
    o.say(f"\nwall time of this command: {wall}", f"Wall time of this command: {wall}")
    o.md.append("")
    if any(p.tune_rft_lr for p in packs):  # a tuning run judges nothing: exit 0 says every job finished
        line = (f"tuning (no verdict): every job finished for {sum(passed)} of {len(packs)} pack(s); give the rate "
                f"named above as --rft-lr")
    else:
        line = (f"overall verdict: {'PASS' if ok else 'FAIL'}: {sum(passed)} of {len(packs)} pack(s) pass "
                f"({', '.join(f'{p.name} {verdict_word(v)}' for p, v in zip(packs, passed))}); PASS needs every pack")
    o.say(line, f"**{line}**")
    write_atomically(out / "report.md", "\n".join(o.md) + "\n")
    print(f"report: {out / 'report.md'}")
    return 0 if ok else 1


def verdict_word(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def pack_report(p: PackResult, o: Out) -> bool:
    """One pack's figures and verdict (printed and as markdown); whether it passes."""
    o.say(f"\npass^1 ({p.label}), 95% bootstrap interval over tasks; greedy | sampled at temperature 1:",
          f"## {p.label}")
    o.md += ["", "pass^1 with its 95% bootstrap interval over tasks; each stage minus SFT paired over tasks.", "",
             "| seed | stage | greedy pass^1 [95% CI] | sampled pass^1 [95% CI] | greedy - SFT, paired [95% CI] "
             "| sampled - SFT, paired [95% CI] |", "|---|---|---|---|---|---|"]
    gains = seed_rows(p, o)
    o.md.append("")
    pooled_tests = pooled(p.seeds)
    for (a, b, kind), (test, n_seeds, n_tasks) in pooled_tests.items():
        line = (f" pooled over {n_seeds} seeds (bootstrap over seeds and tasks): {a} - {b} ({kind}): {points(test)} "
                f"over {n_tasks} tasks")
        o.say(line, f"- {line.strip()}")
    if p.tasks:
        for i, line in enumerate(behaviour(p.seeds, p.tasks)):
            o.say(line, f"{'' if i == 0 else '- '}{line.strip()}" + ("\n" if i == 0 else ""))
        o.md.append("")
    for line in copy_lines(p.seeds, p.tasks):
        o.say(line, f"- {line.strip()}")
    wall = f"{sum(s.wall_s for s in p.seeds):.0f} s"
    o.say(f"  wall time of pack {p.name}: {wall} (the sum of its {len(p.seeds)} finished job(s))",
          f"\nWall time of pack {p.name}: {wall} (the sum of its {len(p.seeds)} finished job(s))\n")
    if p.out is not None and p.seeds:
        plot(p.seeds, p.out)
    if p.tune_rft_lr:  # tuning has no verdict: it passes when every job finished
        lines, best = tuned(p.seeds, p.tune_rft_lr)
        for line in lines:
            o.say(line, f"- {line.strip()}")
        done = not p.missing and bool(lines)
        line = (f"tuning for pack {p.name}: best RFT learning rate {best:g} by sampled pass^1 on validation"
                if best is not None else f"tuning for pack {p.name}: no best RFT learning rate ("
                f"{'the best sampled pass^1 is tied' if lines else 'no RFT stage finished'})") + \
               (f"; missing: seed {', '.join(map(str, p.missing))}" if p.missing else "")
        o.say(line, f"**{line}**\n")
        return done
    stuck = all(no_gradient(s.grpo_dirs.get(GRPO)) for s in p.seeds) and any(s.grpo_dirs for s in p.seeds)
    learned, learn_line = learns(gains, sorted([s.seed for s in p.seeds] + p.missing))
    beats, beat_line = beats_baselines(pooled_tests, len(p.seeds), BEAT_SEEDS)
    verdict = learned and beats == "PASS"
    why = " (no gradient was taken)" if stuck and not verdict else ""
    missing = f"; missing: seed {', '.join(map(str, p.missing))}" if p.missing else ""
    for part in (f"learns: {learn_line}", f"beats baselines: {beat_line}"):
        o.say(f"  {part}", f"- {part}")
    line = (f"verdict for pack {p.name}: {verdict_word(verdict)}{why}: learns {verdict_word(learned)}, beats "
            f"baselines {beats}; PASS needs both{missing}")
    o.say(line, f"**{line}**\n")
    return verdict


def seed_rows(p: PackResult, o: Out) -> dict[int, Any]:
    """Each seed's stages and differences (a missing seed's row says so); the greedy GRPO - SFT interval per seed."""
    gains: dict[int, Any] = {}
    notes: list[str] = []
    rows = sorted([(s.seed, s) for s in p.seeds] + [(m, None) for m in p.missing], key=lambda r: r[0])
    for number, s in rows:
        if s is None:
            o.say(f" seed {number}: MISSING (its job failed or did not run): counts as a fail",
                  f"| {number} | MISSING (its job failed or did not run) | | | | |")
            continue
        print(f" seed {s.seed}:")
        diffs = differences(s)
        for name, st in s.stages.items():
            greedy, sampled = figure(st.greedy), figure(st.sampled) if st.sampled else ""
            cells = [points(diffs[(name, SFT, kind)][0]) if (name, SFT, kind) in diffs else "" for kind in KINDS]
            o.say(f"  {name:28} {greedy}" + (f" | {sampled}" if sampled else ""),
                  f"| {s.seed} | {name} | {greedy} | {sampled} | {cells[0]} | {cells[1]} |")
        for (a, b, kind), (test, n) in diffs.items():
            line = f"{a} - {b} (paired, {kind}): {points(test)} over {n} tasks"
            print(f"  {line}")
            if b != SFT:  # the table holds each stage - SFT; the rest go below it
                notes.append(f"- seed {s.seed}: {line}")
        gains[s.seed] = {kind: diffs[(GRPO, SFT, kind)][0] for kind in KINDS if (GRPO, SFT, kind) in diffs}
        if no_gradient(s.grpo_dirs.get(GRPO)):
            print("  no gradient was taken: no GRPO group ever had a reward spread (every episode of a group scored "
                  "the same), so GRPO left the SFT weights as they were")
            notes.append(f"- seed {s.seed}: no gradient was taken (no GRPO group ever had a reward spread)")
    o.md += ["", *notes]  # after the table, which a line inside would cut
    return gains


def differences(s: Seed) -> dict[tuple[str, str, str], tuple[Any, int]]:
    """Each comparison of COMPARISONS for seed ``s``, paired over tasks: (candidate, baseline, greedy|sampled) ->
    (interval, tasks)."""
    found = {}
    for a, b in COMPARISONS:
        if a not in s.stages or b not in s.stages:
            continue
        for kind in KINDS:
            base, other = getattr(s.stages[b], kind), getattr(s.stages[a], kind)
            if base is None or other is None:
                continue
            test, n = paired(per_task(base), per_task(other))
            if test is not None:
                found[(a, b, kind)] = (test, n)
    return found


def figure(run: Path) -> str:
    e = estimate(run)
    left_out = len(episodes(run)) - sum(1 for r in episodes(run) if not r.get("error") and r.get("reward") is not None)
    return (f"{100 * e.value:.1f} [{100 * e.low:.1f}, {100 * e.high:.1f}] n={e.n}"
            + (f"   LEFT OUT: {left_out} errored or unscored" if left_out else ""))


def points(test) -> str:
    return f"{100 * test.delta:+.1f} points [{100 * test.low:+.1f}, {100 * test.high:+.1f}]"


def pooled(seeds: list[Seed]) -> dict[tuple[str, str, str], tuple[Any, int, int]]:
    """Each comparison pooled over the seeds that ran both stages (two or more): the paired bootstrap over seeds
    and tasks, so the seed-to-seed spread of the trained models is inside the interval. (candidate, baseline, kind)
    -> (interval, seeds, tasks)."""
    from mua.harness.stats import paired_bootstrap_crossed

    found = {}
    for a, b in COMPARISONS:
        for kind in KINDS:
            pairs = [(per_task(getattr(s.stages[b], kind)), per_task(getattr(s.stages[a], kind))) for s in seeds
                     if a in s.stages and b in s.stages and getattr(s.stages[a], kind) is not None
                     and getattr(s.stages[b], kind) is not None]
            rows, tasks = crossed_rows(pairs)
            if len(rows) >= 2 and tasks:
                found[(a, b, kind)] = (paired_bootstrap_crossed(rows, seed=0), len(rows), len(tasks))
    return found


def crossed_rows(pairs: list[tuple[dict[str, float], dict[str, float]]]) -> tuple[list[list[float]], list[str]]:
    """Per seed (baseline's, candidate's pass rate per task): the rows of candidate - baseline over the tasks every
    seed scored in both, in task order (a set's order changes with the hash seed, and the resamples with it)."""
    common = set.intersection(*(set(a) & set(b) for a, b in pairs)) if pairs else set()
    tasks = sorted(common)
    return [[b[t] - a[t] for t in tasks] for a, b in pairs], tasks


def learns(gains: dict[int, dict[str, Any]], seeds: list[int]) -> tuple[bool, str]:
    """*learns*: for every seed of ``seeds`` (a missing one included), the paired 95% lower bound of GRPO with the
    user - SFT is above zero, greedy AND sampled (``gains``: seed -> kind -> interval; an absent one fails)."""
    above = {kind: sum(1 for n in seeds if kind in gains.get(n, {}) and gains[n][kind].low > 0) for kind in KINDS}
    passed = bool(seeds) and all(count == len(seeds) for count in above.values())
    return passed, (f"{verdict_word(passed)}: the paired 95% interval of {GRPO} - {SFT} is above zero in "
                    f"{above['greedy']} of {len(seeds)} seed(s) greedy, {above['sampled']} of {len(seeds)} sampled; "
                    f"PASS needs every seed, greedy and sampled")


def beats_baselines(pooled_tests: dict[tuple[str, str, str], tuple[Any, int, int]], seeds: int,
                    needed: int = BEAT_SEEDS) -> tuple[str, str]:
    """*beats baselines*: pooled over at least ``needed`` seeds (bootstrap over seeds and tasks), the 95% lower
    bounds of GRPO with the user - RFT and - the static user, sampled, above zero. ("PASS" | "FAIL" |
    "NOT ENOUGH SEEDS", the line that says why); fewer seeds, or a baseline not run, is never a pass."""
    found = {b: pooled_tests.get((GRPO, b, "sampled")) for b in (RFT, STATIC)}
    least = min((f[1] for f in found.values() if f is not None), default=0)
    if any(f is None for f in found.values()) or least < needed:
        ran = ", ".join(f"{b} on {f[1] if f else 0}" for b, f in found.items())
        return "NOT ENOUGH SEEDS", (f"NOT ENOUGH SEEDS: needs both baselines, sampled, on at least {needed} seeds "
                                    f"pooled ({seeds} finished; {ran}); never a pass")
    low = {b: f[0].low for b, f in found.items() if f is not None}
    word = "PASS" if all(v > 0 for v in low.values()) else "FAIL"
    cells = ", ".join(f"{GRPO} - {b} lower bound {100 * v:+.1f}" for b, v in low.items())
    return word, f"{word}: pooled over {least} seeds, sampled: {cells}; PASS needs both above zero"


def behaviour(seeds: list[Seed], tasks: dict[str, dict]) -> list[str]:
    """Per stage (all seeds together): per expected action, the share of episodes that made that call exactly and
    that got each of its arguments right; per fact of the scripted user, the share that asked. Greedy, with the
    share among the sampled (temperature 1) episodes of the same stage beside it: a greedy tipping point shows."""
    lines = [" behaviour (per expected action: exact call, then each argument; asked: each fact; greedy episodes, "
             "the sampled ones at temperature 1 in brackets):"]
    for name in dict.fromkeys(n for s in seeds for n in s.stages):
        staged = [s.stages[name] for s in seeds if name in s.stages]
        greedy = behaviour_counts([st.greedy for st in staged], tasks)
        sampled_runs = [st.sampled for st in staged if st.sampled is not None]
        sampled = behaviour_counts(sampled_runs, tasks) if sampled_runs else {}
        cells = ", ".join(f"{k} {share(c)}" + (f" (sampled {share(sampled[k])})" if k in sampled else "")
                          for k, c in greedy.items())
        lines.append(f"  {name:28} {cells or 'no expected actions'}")
    return lines


def share(count: list[int]) -> str:
    return f"{100 * count[0] / count[1]:.0f}%"


def behaviour_counts(runs: list[Path], tasks: dict[str, dict]) -> dict[str, list[int]]:
    """Over the episodes of ``runs``: key -> [hits, episodes] for each expected call, argument and asked fact."""
    from mua.benchmarks.pack.users import asked

    counts: dict[str, list[int]] = {}
    for r in (r for run in runs for r in episodes(run)):
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
    return counts


def copy_lines(seeds: list[Seed], tasks: dict[str, dict]) -> list[str]:
    """Per seed and stage, the teacher-forced copy accuracy per argument, the greedy share of episodes that got
    that argument right beside it; then per seed and stage, each name or id argument copied exactly in the greedy
    episodes that made the call (training/copying.py)."""
    from mua.training.copying import copy_accuracy

    lines = []
    for s in seeds:
        for name, shares in s.copied.items():
            greedy = behaviour_counts([s.stages[name].greedy], tasks) if name in s.stages and tasks else {}
            cells = ", ".join(f"{k} {100 * v:.0f}%" + (f" (greedy {share(greedy[k])})" if k in greedy else "")
                              for k, v in shares.items())
            lines.append(f" teacher-forced copy, seed {s.seed}, {name}: "
                         f"{cells or 'no argument found in the gold calls'}")
    evaluations = {t: record.get("evaluation_criteria") for t, record in tasks.items()}
    for s in seeds if tasks else []:
        for name, st in s.stages.items():
            for key, count in copy_accuracy(st.greedy, evaluations).items():
                lines.append(f" greedy copy, seed {s.seed}, {name}: {count.line(key)}")
    return lines


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
