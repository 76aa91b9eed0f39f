"""The learning check: does GRPO with the user in the loop raise a HELD-OUT score over an SFT cold start, beyond
what fair baselines from the same SFT checkpoint and the same episode budget reach, on every example pack?

It is the study training/studies/learning-check.yaml run by `mua study` (its jobs, resume, report, the two verdicts:
docs/learning-check.md), plus what only a task pack has, printed after the study's report and written to
OUT/behaviour.md: per stage, the share of episodes that made each expected call exactly and got each argument
right, and that asked for each fact of the scripted user (greedy, the sampled share beside it); per seed, the
teacher-forced copy accuracy per argument of SFT and GRPO with the user (cached in OUT/PACK/seed-S/copy-*.json).

The flags below change a copy of the study file written to OUT/study.yaml (a re-run with other values is refused
by the study: use another --out); for anything else, edit a copy of the study file and run `mua study` on it.
Exit: 0 when every pack learns and beats its baselines, 1 otherwise, 2 for a bad flag or study file.

    python tests/perf/learning_check.py --out /tmp/learning-check                  # tune: validation split
    python tests/perf/learning_check.py --out /tmp/learning-check --split test     # report once
    python tests/perf/learning_check.py --out /tmp/lc --packs refills --seeds 1    # one pack, one seed
    python tests/perf/learning_check.py --out /tmp/lc-smoke --smoke                # 2 steps, 4 tasks, 1 seed (CI)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Optional

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "training" / "studies" / "learning-check.yaml"
GRPO = "grpo"


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/learning-check"))
    ap.add_argument("--packs", default=None, help="comma-separated pack names of the study (default: all four)")
    ap.add_argument("--pack", default=None, help="one pack: the same as --packs PACK")
    ap.add_argument("--split", default=None, choices=("validation", "test"),
                    help="evaluation split: tune on validation (the default), report test once")
    ap.add_argument("--arms", default=None, metavar="NAME,NAME",
                    help="only these arms of the study (the verdict's: grpo, grpo-static, rft; default: every arm)")
    ap.add_argument("--seeds", type=int, default=None, help="training seeds per pack (default 5; 1 with --smoke)")
    ap.add_argument("--jobs", type=int, default=None, help="jobs at once (default 2 on 2 or more cores)")
    ap.add_argument("--smoke", action="store_true", help="2 SFT and 2 GRPO steps on 4 tasks, one seed: runs, "
                                                         "proves nothing")
    ap.add_argument("--policy", type=Path, default=None, help="start from this checkpoint instead of the tiny model")
    ap.add_argument("--chat-template", default=None, metavar="hermes|llama3_json|FILE",
                    help="with --policy: the chat template for a checkpoint whose own one drops tool use")
    ap.add_argument("--sft-steps", type=int, default=None)
    ap.add_argument("--grpo-steps", type=int, default=None, help="every GRPO arm's steps (RFT's budget follows)")
    ap.add_argument("--grpo-lr", type=float, default=None)
    ap.add_argument("--rft-lr", type=float, default=None)
    ap.add_argument("--eval-tasks", type=int, default=None)
    ap.add_argument("--sampled-trials", type=int, default=None)
    ap.add_argument("--user-model", type=Path, default=None, metavar="CKPT",
                    help="also GRPO with this user model in the loop (e.g. tests/perf/user_model_check.py's)")
    ap.add_argument("--no-copy", action="store_true", help="skip the teacher-forced copy accuracy")
    args = ap.parse_args(argv)
    if args.pack and args.packs:
        ap.error("--pack is --packs with one pack: give one of them")
    if args.chat_template and args.policy is None:
        ap.error("--chat-template goes with --policy (the tiny model's own template speaks tools)")
    return args


def study_file(args: argparse.Namespace) -> Path:
    """The study file to run: the repository's, or a copy at OUT/study.yaml with the flags' values set."""
    import yaml

    from mua.harness.io.files import parse_yaml

    changed = (args.policy, args.sft_steps, args.grpo_steps, args.grpo_lr, args.rft_lr, args.eval_tasks,
               args.sampled_trials)
    if all(value is None for value in changed):
        return STUDY
    raw = parse_yaml(STUDY.read_text(), where=str(STUDY))
    raw["packs"] = {name: str((STUDY.parent / folder).resolve()) for name, folder in raw["packs"].items()}
    if args.policy is not None:
        raw["model"] = {"policy": str(args.policy.resolve()),
                        **({"chat_template": args.chat_template} if args.chat_template else {})}
        raw.get("smoke", {}).pop("model", None)  # the smoke's tiny-model settings: no tiny model to set
    if args.sft_steps is not None:
        raw["sft"]["max_steps"] = args.sft_steps
    for arm in raw["arms"].values():
        train, rft = arm.get("train"), arm.get("rft")
        if train is not None:
            arm["train"] = {**train, **({"max_steps": args.grpo_steps} if args.grpo_steps is not None else {}),
                            **({"learning_rate": args.grpo_lr} if args.grpo_lr is not None else {})}
        if rft is not None and args.rft_lr is not None:
            arm["rft"] = {**rft, "learning_rate": args.rft_lr}
    if args.eval_tasks is not None:
        raw["eval"]["tasks"] = args.eval_tasks
    if args.sampled_trials is not None:
        raw["eval"]["sampled_trials"] = args.sampled_trials
    from mua.training.study import claim_out

    claim_out(args.out)  # OUT is the study's before its copy of the file goes there (mua study then finds its mark)
    path = args.out / "study.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def main(argv: Optional[list[str]] = None) -> int:
    from mua.harness.cli import main as mua

    args = parse_args(argv)
    started = time.monotonic()
    from mua.harness.errors import MuaError

    try:
        path = study_file(args)
    except MuaError as e:  # OUT is another program's folder: one line, as mua study says it
        print(f"learning check: error: {e}", file=sys.stderr)
        return 2
    flags = ["--out", str(args.out), *(["--smoke"] if args.smoke else []),
             *(["--packs", args.pack or args.packs] if args.pack or args.packs else []),
             *(["--arms", args.arms] if args.arms else []),
             *(["--seeds", str(args.seeds)] if args.seeds else []), *(["--split", args.split] if args.split else []),
             *(["--jobs", str(args.jobs)] if args.jobs else []),
             *(["--user-model", str(args.user_model)] if args.user_model else [])]
    code = mua(["study", str(path), *flags])
    if code == 2:
        return 2
    pack_extras(path, args)
    print(f"\nwall time of the learning check (the study, then behaviour and copy): {time.monotonic() - started:.0f} s")
    return 0 if code == 0 else 1


def pack_extras(path: Path, args: argparse.Namespace) -> None:
    """The behaviour table and copy accuracy per pack, printed and written to OUT/behaviour.md."""
    from mua.benchmarks.pack.loader import load_pack
    from mua.training.study import Plan, load_study

    study = load_study(path, smoke=args.smoke, packs=[p for p in (args.pack or args.packs or "").split(",") if p]
                       or None, seeds=args.seeds, split=args.split, user_model=args.user_model)
    plan = Plan(study, args.out.resolve())
    md = ["# Learning check: behaviour and copy", ""]
    for name, folder in study.packs.items():
        tasks = {str(t["id"]): t for t in load_pack(folder).tasks}
        lines = [f"\npack {name}:", *behaviour(study, plan, name, tasks)]
        if not args.no_copy:
            lines += copy_lines(study, plan, name, folder, tasks)
        for line in lines:
            print(line)
        md += [f"## pack {name}", "", *(f"- {line.strip()}" for line in lines[1:]), ""]
    (args.out / "behaviour.md").write_text("\n".join(md) + "\n")


def behaviour(study, plan, pack: str, tasks: dict[str, dict]) -> list[str]:
    """Per stage (all seeds together): per expected action, the share of episodes that made that call exactly and
    that got each of its arguments right; per fact of the scripted user, the share that asked. Greedy, with the
    share among the sampled (temperature 1) episodes of the same stage beside it: a greedy tipping point shows."""
    lines = [" behaviour (per expected action: exact call, then each argument; asked: each fact; greedy episodes, "
             "the sampled ones at temperature 1 in brackets):"]
    for stage in ["before", "sft", *study.arms]:
        greedy_runs = [r for s in study.seeds if (r := plan.eval_run(pack, s, stage, "greedy")) is not None]
        if not greedy_runs:
            continue
        sampled_runs = [r for s in study.seeds if (r := plan.eval_run(pack, s, stage, "sampled")) is not None]
        greedy = behaviour_counts(greedy_runs, tasks)
        sampled = behaviour_counts(sampled_runs, tasks) if sampled_runs else {}
        cells = ", ".join(f"{k} {share(c)}" + (f" (sampled {share(sampled[k])})" if k in sampled else "")
                          for k, c in greedy.items())
        lines.append(f"  {study.labels[stage]:28} {cells or 'no expected actions'}")
    return lines


def share(count: list[int]) -> str:
    return f"{100 * count[0] / count[1]:.0f}%"


def behaviour_counts(runs: list[Path], tasks: dict[str, dict]) -> dict[str, list[int]]:
    """Over the episodes of ``runs`` (read by the results API): key -> [hits, episodes] for each expected call,
    argument and asked fact."""
    from mua.harness.results.results_api import load_run

    return episode_counts((e for run in runs for e in load_run(run).episodes()), tasks)


def episode_counts(records, tasks: dict[str, dict]) -> dict[str, list[int]]:
    """behaviour_counts over episode records (anything with task_id and messages)."""
    from mua.benchmarks.pack.users import asked

    counts: dict[str, list[int]] = {}
    for e in records:
        task = tasks.get(e.task_id) or {}
        messages = [m for m in e.messages if m.get("role") == "assistant"]
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


def copy_lines(study, plan, pack: str, folder: Path, tasks: dict[str, dict]) -> list[str]:
    """Per seed, for SFT and GRPO with the user: the teacher-forced copy accuracy per argument, the greedy share of
    episodes that got that argument right beside it (computed once per model, kept in the job folder)."""
    lines = []
    for seed in study.seeds:
        for stage in ("sft", GRPO):
            job = f"{pack}/seed-{seed}/{stage}"
            run = plan.eval_run(pack, seed, stage, "greedy")
            if job not in plan.jobs or run is None:
                continue
            cache = plan.jobs[job].folder / "copy.json"
            if cache.is_file():
                shares = json.loads(cache.read_text())
            else:
                shares = teacher_forced_copy(plan.model(job), folder, study.split, study.eval.tasks)
                cache.write_text(json.dumps(shares, sort_keys=True) + "\n")
            greedy = behaviour_counts([run], tasks)
            cells = ", ".join(f"{k} {100 * v:.0f}%" + (f" (greedy {share(greedy[k])})" if k in greedy else "")
                              for k, v in shares.items())
            lines.append(f" teacher-forced copy, seed {seed}, {study.labels[stage]}: "
                         f"{cells or 'no argument found in the gold calls'}")
    return lines


def value_span(text: str, key: str, value) -> Optional[tuple[int, int]]:
    """Where ``value`` of argument ``key`` lies in a rendered tool call (the arguments as JSON), or None."""
    rendered = json.dumps(value)
    at = text.find(f"{json.dumps(key)}: {rendered}")
    if at < 0:
        return None
    start = at + len(json.dumps(key)) + 2
    return (start + 1, start + len(rendered) - 1) if isinstance(value, str) else (start, start + len(rendered))


def teacher_forced_copy(ckpt: Path, pack: Path, split: str, limit: Optional[int]) -> dict[str, float]:
    """Per argument of each expected action (``action.argument``), over the gold conversations of the evaluation
    split: the share whose value the model predicts token for token (argmax), given the gold conversation so far."""
    import torch
    from transformers import AutoModelForCausalLM

    from mua.benchmarks.pack import PackBenchmark
    from mua.harness.models.local import stop_ids_for
    from mua.harness.models.tokenizer import load_tokenizer
    from mua.training.budgets import reply_lengths

    sys.path.insert(0, str(ROOT / "tests" / "training"))  # the tests' gold-stream helper
    from gold_warmup import gold_streams

    tokenizer = load_tokenizer(ckpt)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = AutoModelForCausalLM.from_pretrained(ckpt).eval().to(device)
    bench = PackBenchmark(pack)
    tasks = bench.load_tasks("tasks", split)[:limit or None]
    counts: dict[str, list[int]] = {}
    for task, stream in zip(tasks, gold_streams(bench, tasks, tokenizer, stop_ids_for(tokenizer, model.generation_config))):
        with torch.no_grad():
            predicted = model(torch.tensor([stream.ids], device=device)).logits[0].argmax(-1).tolist()
        start, offset = len(stream.prompt_ids), 0
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
                    tally(counts, f"{action['name']}.{key}",
                          all(predicted[first + k - 1] == stream.ids[first + k] for k in tokens))
            offset += length
    return {k: hit / n for k, (hit, n) in counts.items()}


if __name__ == "__main__":
    sys.exit(main())
