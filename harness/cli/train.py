"""`mua train`: GRPO training of a local policy checkpoint on a benchmark's train split, with the episodes
played by the same runner as `mua eval` (see mua.training)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..data import resolve_data_dir
from ..errors import ConfigError

# flag -> TrainConfig field, for the flags that override a config file
_FLAGS = {
    "policy": str, "output_dir": str, "benchmark": str, "subsets": str, "split": str, "split_file": str,
    "task_ids": str,
    "limit": int, "user_model": str, "user_base_url": str, "judge_model": str, "judge_base_url": str,
    "incomplete_scores": str, "num_generations": int, "batch_size": int,
    "gradient_accumulation_steps": int, "max_steps": int, "learning_rate": float, "beta": float,
    "temperature": float, "max_turn_tokens": int, "max_completion_tokens": int, "max_turns": int,
    "generation": str, "vllm_server_url": str, "vllm_server_model": str, "concurrency": int, "seed": int,
    "save_steps": int, "samples_per_step": int,
}
_SWITCHES = ("allow_test_split", "allow_scripted_user", "bf16", "resume", "progress")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train", help="GRPO-train a local checkpoint on benchmark tasks with a simulated user",
        description="Trains POLICY with GRPO (TRL) on the train split: each task is played num_generations times "
                    "by run_episode with the user simulator in the loop, and the benchmark's reward drives the "
                    "update. Settings come from --config (YAML; keys as in training/configs/example.yaml) and "
                    "the flags below, which override it. Re-running the same command resumes from the newest "
                    "checkpoint in --output-dir (with the same settings); Ctrl-C saves a checkpoint at the end "
                    "of the current step. Score the result with `mua eval --agent-model OUTPUT_DIR`.")
    p.add_argument("--config", help="YAML file of training settings")
    for name, kind in _FLAGS.items():
        flag = "--" + name.replace("_", "-")
        p.add_argument(flag, type=kind, dest=name, default=None, help=_HELP[name])
    p.add_argument("--allow-test-split", action="store_true", default=None,
                   help="train on tasks evaluation reports anyway (any split other than the benchmark's train split; "
                        "recorded in train_config.json; contaminates every score reported on them)")
    p.add_argument("--allow-scripted-user", action="store_true", default=None,
                   help="tests and smoke runs only: play subsets that need a user model with the scripted user "
                        "(its rewards carry no training signal)")
    p.add_argument("--bf16", action="store_true", default=None, help="bfloat16 mixed precision (GPU)")
    p.add_argument("--no-resume", dest="resume", action="store_false", default=None,
                   help="start a new run; refused when OUTPUT_DIR is not empty (delete it or pick another)")
    p.add_argument("--no-progress", dest="progress", action="store_false", default=None, help="no progress bar")
    p.add_argument("--data-dir", help="benchmark data directory (default: $MUA_DATA_DIR, ../shared/data, ...)")
    p.set_defaults(func=run)


_HELP = {
    "policy": "checkpoint directory of the policy (weights, tokenizer with a chat template)",
    "output_dir": "where checkpoints, metrics.jsonl, samples/ and the final model go",
    "benchmark": "benchmark name (e.g. tau2)", "subsets": "comma-separated subsets (default: all)",
    "split": "task split (default: train); only a benchmark's train split passes without --split-file or "
             "--allow-test-split",
    "split_file": "JSON/YAML file of your own 'train' and 'held_out' task ids (benchmarks with no train split: "
                  "BFCL, ACEBench); training plays only the train ids",
    "task_ids": "comma-separated task ids", "limit": "tasks per subset",
    "user_model": "the user simulator: an endpoint model name or a checkpoint dir (required where the "
                  "benchmark plays an LLM user, e.g. tau2)",
    "user_base_url": "OpenAI-compatible base URL of the user model",
    "judge_model": "LLM judge for tau2 NL assertions (without one they are skipped)",
    "judge_base_url": "OpenAI-compatible base URL of the judge model",
    "incomplete_scores": "'drop' (default): episodes whose score skipped components get no reward; 'keep'",
    "num_generations": "episodes per task in a GRPO group (G)", "batch_size": "episodes per device per step",
    "max_steps": "optimizer steps", "learning_rate": "learning rate",
    "max_turn_tokens": "generated tokens per agent reply",
    "max_completion_tokens": "episode tokens after the first prompt; an episode that runs out is truncated",
    "max_turns": "user turns per episode (default: the benchmark's limits); reaching it truncates the episode",
    "vllm_server_model": "model name the vLLM server serves the policy under (default: its only model)",
    "generation": "transformers, vllm_colocate or vllm_server", "vllm_server_url": "vLLM server base URL",
    "gradient_accumulation_steps": "micro-batches per optimizer step", "beta": "KL coefficient (0: none)",
    "temperature": "sampling temperature of the policy (also used to recompute log-probs)",
    "concurrency": "episodes in flight per rank", "seed": "run seed (episode and request seeds derive from it)",
    "save_steps": "checkpoint every N steps", "samples_per_step": "trajectories written to OUTPUT_DIR/samples per step",
}


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ...training.config import load_config
    from ..registry import get_benchmark

    overrides = {name: getattr(args, name) for name in _FLAGS}
    for name in _SWITCHES:
        overrides[name] = getattr(args, name)
    cfg = load_config(args.config, overrides)
    if not cfg.benchmark:
        raise ConfigError("name a benchmark: --benchmark NAME (or benchmark: in --config)")
    bench = get_benchmark(cfg.benchmark)
    cfg.validate_for(bench)
    try:
        from ...training.grpo import TrainingInterrupted, train
    except ImportError as exc:
        raise ConfigError(f"mua train needs torch, transformers, trl and datasets ({exc})") from None
    data_dir = resolve_data_dir(args.data_dir or cfg.data_dir)
    try:
        out = train(cfg, bench, Path(data_dir))
    except TrainingInterrupted as exc:
        print(f"mua train: {exc}", file=sys.stderr)
        return 130
    if os.environ.get("RANK", "0") == "0":  # under accelerate/torchrun every rank runs this command
        print(f"trained policy written to {out}; score it with: mua eval --benchmark {cfg.benchmark} "
              f"--agent-model {out}")
    return 0
