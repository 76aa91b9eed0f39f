"""Per-step training log: one JSON line per logging step in ``OUTPUT/metrics.jsonl``, the curves drawn from it in
``OUTPUT/curves.png`` (redrawn at every logging step, when matplotlib is installed), and a short line under the
trainer's progress bar (reward, pass rate, turns, tokens, clip ratio)."""
from __future__ import annotations

import json
from pathlib import Path

from transformers import TrainerCallback

from mua.harness.curves import CURVES_PNG, write_curves
from mua.harness.jsonl import BadLine, iter_raw_lines, loads_line

SHOWN = (("reward", "reward"), ("pass", "episode/pass_rate"), ("turns", "episode/turns"),
         ("tokens", "episode/generated_tokens"), ("clip", "episode/clip_ratio"),
         ("trunc", "episode/truncated"), ("loss", "loss"))


class StepLog(TrainerCallback):
    def __init__(self, output_dir: Path, echo: bool = True):
        self.path = Path(output_dir) / "metrics.jsonl"
        self.echo = echo
        self.drawing = True  # off once matplotlib turns out to be missing (said once)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs or "reward" not in logs:
            return
        row = {"step": state.global_step, **{k: v for k, v in logs.items() if isinstance(v, (int, float))}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, sort_keys=True) + "\n")
        if self.drawing:
            self.drawing = write_curves(self._rows(), self.path.parent / CURVES_PNG)
            if not self.drawing:
                from tqdm.auto import tqdm

                tqdm.write("curves.png is not drawn: matplotlib is missing (pip install 'mua[plot]')")
        if self.echo:
            from tqdm.auto import tqdm

            parts = [f"{name}={logs[key]:.3g}" for name, key in SHOWN if isinstance(logs.get(key), (int, float))]
            tqdm.write(f"step {state.global_step}: " + " ".join(parts))

    def _rows(self) -> list[dict]:
        """Every row of metrics.jsonl, earlier runs of a resumed training included (the file is the truth)."""
        rows = []
        for _, raw, _ in iter_raw_lines(self.path):
            try:
                row = loads_line(raw)
            except BadLine:
                continue
            if isinstance(row, dict):
                rows.append(row)
        return rows
