"""The user-model check: can a tiny user simulator, trained on a CPU in under 10 minutes, answer natural questions
it never saw with the right fact, and refuse keyword-stuffed and template messages? With the scripted user's
figures on the same messages beside it.

One command, from the bookings example pack (the smallest):
  1. a copy of the pack whose replies declare several phrasings each (``asks``, :data:`TRAIN_ASKS`) and whose
     user is an LLM (pack.json ``"user": "llm"``), in OUT/pack;
  2. lessons on its train split (benchmarks/pack/user_lessons.py: those phrasings, one to three facts a turn, and
     messages that ask for nothing, answered with no fact) as `mua export --role user` rows, OUT/lessons.jsonl;
  3. the tiny model (`mua model tiny`) fine-tuned on them with `mua sft` (OUT/user-model), timed: wall and CPU;
  4. the suite, on the pack's test split (tasks never trained on), each message the agent's first question after
     the opening: natural questions never seen in training (:data:`HELD_OUT`: one fact, or two or three in one
     sentence), and messages that ask for nothing (:data:`STUFFED`: keyword stuffing and template questions,
     the issue's examples among them, and small talk). The trained user (played through the pack's
     ``simulated_user``, the local checkpoint as `--user-model` loads it, batched) and the scripted user answer
     each; a fact is given when the reply holds the reply's ``say`` (case and final punctuation aside).

It prints, per user: natural questions answered with exactly the asked facts; messages asking nothing that got a
fact. Exit 0 when the trained user answers >= 95% of the natural questions right, gives a fact to <= 5% of the
other messages, and trained in under 600 s wall; 1 when a target is missed; 2 for a bad flag.

    python tests/perf/user_model_check.py --out /tmp/user-check
    python tests/perf/user_model_check.py --out /tmp/user-check --user-model /tmp/user-check/user-model  # measure only
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
BOOKINGS = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"

# The phrasings the pack declares (a reply's ``asks``), by the reply's first keyword: what lessons draw from.
TRAIN_ASKS = {
    "name": ["What is your name?", "May I have your name?", "Who is the booking for?", "Could I get your name, please?",
             "What name should I put the booking under?", "Can you tell me your name?", "Your name, please?",
             "And what is the name for the reservation?"],
    "sit": ["Where would you like to sit?", "Which table would you prefer?", "Where do you want to be seated?",
            "Do you have a seating preference?", "What kind of table would you like?",
            "Which area would you like your table in?", "Where would you prefer to sit?",
            "Inside or outside, where do you want your table?"],
    "time": ["At what time?", "What time would you like the table?", "When would you like to come?",
             "What time should I book it for?", "For what time?", "What time works for you?",
             "At what hour would you like to dine?", "When should the table be ready?"],
}
# Natural questions none of TRAIN_ASKS holds, by the facts they ask for (keywords of the pack's replies).
HELD_OUT = {
    ("name",): ["And your name is?", "Whose name is the reservation under?", "Can I take a name for the booking?",
                "Who am I speaking with?"],
    ("sit",): ["Any preference on where you sit?", "Where should we seat you?", "Which spot do you want?",
               "Would you like a particular table?"],
    ("time",): ["What hour suits you?", "When should we expect you?", "What time are you planning to arrive?",
                "What time do you have in mind?"],
    ("name", "time"): ["Could you tell me your name and what time you want?",
                       "What is your name, and when would you like to come?"],
    ("name", "sit"): ["What's your name, and where would you like to sit?",
                      "May I have your name and your seating preference?"],
    ("sit", "time"): ["Where would you like to sit, and at what time?", "Which table and what time would suit you?"],
    ("name", "sit", "time"): ["Could I have your name, where you would like to sit and the time?"],
}
# Messages that ask for nothing: the examples first, then keyword stuffing and template forms, small talk.
STUFFED = ["Is name? Is sit? Is time?", "What name? What time? Where sit?", "name sit time?", "Name? Sit? Time?",
           "What name?", "Is time?", "Where sit?", "time, name, sit?", "Name time sit please?", "Which sit? Which time?",
           "name?", "Any time? Any name?", "Time name?", "What is the weather like today?", "We have a new menu."]
TARGET_RIGHT, TARGET_LEAK, TARGET_WALL_S = 0.95, 0.05, 600.0


@dataclass
class Figures:
    """One user's answers on the suite: natural questions answered with exactly the asked facts, and messages
    asking nothing that got a fact (counts, with an example of each kind of miss)."""
    right: int = 0
    natural: int = 0
    leaked: int = 0
    stuffed: int = 0
    wrong_example: str = ""
    leak_example: str = ""

    def line(self, name: str) -> str:
        return (f"{name:16} natural questions answered right {self.right}/{self.natural} "
                f"({self.right / max(1, self.natural):.1%})   messages asking nothing that got a fact "
                f"{self.leaked}/{self.stuffed} ({self.leaked / max(1, self.stuffed):.1%})")


def mua(*argv) -> None:
    from mua.harness.cli import main

    code = main([str(a) for a in argv])
    if code != 0:
        raise SystemExit(f"user-model check: `mua {' '.join(map(str, argv))}` exited {code}")


def derive_pack(out: Path) -> Path:
    """The bookings pack with TRAIN_ASKS declared on its replies and an LLM user (written once)."""
    pack = out / "pack"
    if pack.exists():
        return pack
    staging = out / "pack.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(BOOKINGS, staging, ignore=shutil.ignore_patterns("__pycache__", "generate.py"))
    tasks = json.loads((staging / "tasks.json").read_text(encoding="utf-8"))
    for task in tasks:
        for reply in task["user_scenario"]["replies"]:
            reply["asks"] = TRAIN_ASKS[reply["when"][0]]
    (staging / "tasks.json").write_text("[\n" + ",\n".join(json.dumps(t) for t in tasks) + "\n]\n", encoding="utf-8")
    meta = json.loads((staging / "pack.json").read_text(encoding="utf-8"))
    (staging / "pack.json").write_text(json.dumps({**meta, "user": "llm"}), encoding="utf-8")
    staging.rename(pack)
    return pack


def write_lessons(pack: Path, path: Path, per_task: int, seed: int) -> int:
    from mua.benchmarks.pack import PackBenchmark
    from mua.benchmarks.pack.user_lessons import lesson_rows
    from mua.harness.export import write_dataset

    bench = PackBenchmark(pack)
    rows = lesson_rows(bench, bench.load_tasks("tasks", "train"), per_task, seed)
    write_dataset(rows, path, "jsonl")
    return len(rows)


def train(args, pack: Path) -> tuple[Path, float, float]:
    """The tiny user model fine-tuned on the lessons; (its folder, wall seconds, CPU seconds of this process)."""
    lessons = args.out / "lessons.jsonl"
    count = write_lessons(pack, lessons, args.lessons_per_task, args.seed)
    print(f"user-model check: {count} lessons -> {lessons}", flush=True)
    wall, cpu = time.monotonic(), time.process_time()
    corpus = args.out / "corpus.txt" if args.corpus else None
    if corpus is not None:
        write_corpus(lessons, corpus)
    tiny = args.out / "tiny"
    mua("model", "tiny", tiny, "--hidden-size", args.hidden_size, "--heads", args.heads, "--layers", args.layers,
        "--digit-places", 8, "--seed", args.seed, "--overwrite",
        *(["--sliding-window", args.sliding_window] if args.sliding_window else []),
        *(["--corpus", corpus] if corpus else []))
    model = args.out / "user-model"
    mua("sft", "--policy", tiny, "--dataset", lessons, "--output-dir", model, "--no-resume", "--max-steps", args.steps,
        "--learning-rate", args.lr, "--batch-size", args.batch, "--seed", args.seed, "--no-progress", "--bf16",
        "false", "--gradient_checkpointing", "false", "--save-steps", 10**6, "--report-to", "none")
    return model, time.monotonic() - wall, time.process_time() - cpu


def write_corpus(lessons: Path, path: Path) -> None:
    """The lessons as the tiny chat template renders them: the text the tiny tokenizer also learns its merges from
    (the pack's words become single tokens, so a conversation is shorter and a name is one token to copy)."""
    from mua.harness.models.tiny import build_tiny_tokenizer

    tok = build_tiny_tokenizer()
    rows = [json.loads(line) for line in lessons.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(tok.apply_chat_template(r["messages"], tokenize=False) + "\n" for r in rows),
                    encoding="utf-8")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip().rstrip(".!? ")


def given(reply: str, replies: list[dict]) -> set[str]:
    """The facts (replies' first keyword) whose ``say`` the reply holds."""
    said = _norm(reply)
    return {r["when"][0] for r in replies if _norm(r["say"]) in said}


def suite(tasks) -> list[tuple[object, str, Optional[tuple[str, ...]]]]:
    """(task, agent message, the facts it asks for; None for a message asking nothing)."""
    items: list[tuple[object, str, Optional[tuple[str, ...]]]] = []
    for task in tasks:
        items += [(task, q, facts) for facts, qs in HELD_OUT.items() for q in qs]
        items += [(task, m, None) for m in STUFFED]
    return items


async def answers(bench, items, model) -> list[str]:
    """Each item's reply from the user of the task: the trained model's (``model``) or the scripted user."""
    from mua.benchmarks.pack.users import opening
    from mua.benchmarks.tau2.prompts import FIRST_AGENT_MESSAGE
    from mua.harness.types import Message

    async def one(task, text):
        user = bench.gold_user(task) if model is None else bench.simulated_user(task, model, seed=0)
        said = [Message(role="assistant", content=FIRST_AGENT_MESSAGE),
                Message(role="user", content=opening(task.scenario)), Message(role="assistant", content=text)]
        reply = await user.respond(said, [])
        return "" if reply is None else reply.text

    return list(await asyncio.gather(*(one(task, text) for task, text, _ in items)))


def score(items, replies: list[str]) -> Figures:
    f = Figures()
    for (task, text, facts), reply in zip(items, replies):
        got = given(reply, task.scenario["replies"])
        if facts is None:
            f.stuffed += 1
            if got:
                f.leaked += 1
                f.leak_example = f.leak_example or f"{text!r} -> {reply!r}"
        else:
            f.natural += 1
            if got == set(facts):
                f.right += 1
            else:
                f.wrong_example = f.wrong_example or f"{text!r} -> {reply!r}"
    return f


def measure(pack: Path, model_dir: Path, test_tasks: Optional[int]) -> tuple[Figures, Figures]:
    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.models import make_chat_model

    bench = PackBenchmark(pack)
    tasks = bench.load_tasks("tasks", "test")[:test_tasks]
    items = suite(tasks)
    trained = set(TRAIN_ASKS["name"] + TRAIN_ASKS["sit"] + TRAIN_ASKS["time"])
    assert not trained & {q for qs in HELD_OUT.values() for q in qs}, "a held-out question is a training phrasing"
    model = make_chat_model(str(model_dir), max_new_tokens=32, max_batch=64, temperature=0.0)
    scripted = score(items, asyncio.run(answers(bench, items, None)))
    learned = score(items, asyncio.run(answers(bench, items, model)))
    return learned, scripted


def parse_args(argv: Optional[list[str]] = None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/user-model-check"))
    ap.add_argument("--user-model", type=Path, default=None, help="measure this checkpoint; no training")
    ap.add_argument("--steps", type=int, default=600, help="SFT steps")
    ap.add_argument("--batch", type=int, default=8, help="lessons per SFT step")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--lessons-per-task", type=int, default=2)
    ap.add_argument("--hidden-size", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--sliding-window", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-corpus", dest="corpus", action="store_false",
                    help="the tiny tokenizer's merges from its built-in text only (default: also from the lessons)")
    ap.add_argument("--test-tasks", type=int, default=None, help="test-split tasks in the suite (default: all)")
    args = ap.parse_args(argv)
    if min(args.steps, args.batch, args.lessons_per_task) < 1 or args.lr <= 0:
        print("user-model check: --steps, --batch and --lessons-per-task must be at least 1, --lr above 0",
              file=sys.stderr)
        raise SystemExit(2)
    if args.user_model is not None and not (args.user_model / "config.json").is_file():
        print(f"user-model check: --user-model {args.user_model} is not a checkpoint folder", file=sys.stderr)
        raise SystemExit(2)
    return args


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    pack = derive_pack(args.out)
    wall = cpu = None
    model = args.user_model
    if model is None:
        model, wall, cpu = train(args, pack)
        print(f"user-model check: trained in {wall:.0f} s wall, {cpu:.0f} s CPU (this process, all threads) "
              f"-> {model}", flush=True)
    learned, scripted = measure(pack, model, args.test_tasks)
    print(learned.line("trained user"))
    print(scripted.line("scripted user"))
    for name, f in (("trained user", learned), ("scripted user", scripted)):
        if f.wrong_example:
            print(f"  {name}, a natural question missed: {f.wrong_example}")
        if f.leak_example:
            print(f"  {name}, a fact given to a message asking nothing: {f.leak_example}")
    missed = []
    if learned.right < TARGET_RIGHT * learned.natural:
        missed.append(f"natural questions right < {TARGET_RIGHT:.0%}")
    if learned.leaked > TARGET_LEAK * learned.stuffed:
        missed.append(f"facts given to messages asking nothing > {TARGET_LEAK:.0%}")
    if wall is not None and wall > TARGET_WALL_S:
        missed.append(f"training took over {TARGET_WALL_S:.0f} s")
    print("user-model check: " + ("PASS" if not missed else "FAIL: " + "; ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
