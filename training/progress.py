"""Per-step training log: one JSON line per logging step in ``OUTPUT/metrics.jsonl`` and a short line
under the trainer's progress bar (reward, pass rate, turns, tokens, clip ratio)."""
from __future__ import annotations

import json
from pathlib import Path

from transformers import TrainerCallback

SHOWN = (("reward", "reward"), ("pass", "episode/pass_rate"), ("turns", "episode/turns"),
         ("tokens", "episode/generated_tokens"), ("clip", "episode/clip_ratio"),
         ("trunc", "episode/truncated"), ("loss", "loss"))


class StepLog(TrainerCallback):
    def __init__(self, output_dir: Path, echo: bool = True):
        self.path = Path(output_dir) / "metrics.jsonl"
        self.echo = echo

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs or "reward" not in logs:
            return
        row = {"step": state.global_step, **{k: v for k, v in logs.items() if isinstance(v, (int, float))}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, sort_keys=True) + "\n")
        if self.echo:
            from tqdm.auto import tqdm

            parts = [f"{name}={logs[key]:.3g}" for name, key in SHOWN if isinstance(logs.get(key), (int, float))]
            tqdm.write(f"step {state.global_step}: " + " ".join(parts))
