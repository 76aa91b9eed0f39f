"""Per-step training log: one JSON line per logging step in ``OUTPUT/metrics.jsonl``, the curves drawn from it in
``OUTPUT/curves.png`` (redrawn at every logging step, when matplotlib is installed), and a short line under the
trainer's progress bar (reward, pass rate, turns, tokens, clip ratio; and when no group had a reward spread,
that the step learned nothing). A run whose groups all score the same for ``stop_after_flat_steps`` steps in a
row is stopped, its checkpoint saved (:class:`StepLog`)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from transformers import TrainerCallback

from mua.harness.io.jsonl import BadLine, iter_raw_lines, loads_line
from mua.harness.view.curves import CURVES_PNG, write_curves

SHOWN = (("reward", "reward"), ("pass", "episode/pass_rate"), ("turns", "episode/turns"),
         ("tokens", "episode/generated_tokens"), ("clip", "episode/clip_ratio"),
         ("trunc", "episode/truncated"), ("loss", "loss"))


# TRL's share of groups whose rewards were all equal, averaged over the steps a log row covers
FLAT_SHARE = "frac_reward_zero_std"
NO_GRADIENT = "no gradient this step: every group scored the same"


def is_flat(row: dict) -> bool:
    """Whether no GRPO group of the steps a log row covers had a reward spread: every advantage was zero, so
    those steps moved no weight (the mean share is 1 only when it was 1 at every step)."""
    return row.get(FLAT_SHARE) == 1.0


class StepLog(TrainerCallback):
    """``stop_after_flat``: stop the run (saving a checkpoint of the step) once that many steps in a row were
    flat (:func:`is_flat`); 0: never. The count starts again when a run resumes. Every rank decides alike:
    TRL logs the same figures, gathered over all ranks, on each."""

    def __init__(self, output_dir: Path, echo: bool = True, stop_after_flat: int = 0):
        self.path = Path(output_dir) / "metrics.jsonl"
        self.echo = echo
        self.drawing = True  # off once matplotlib turns out to be missing (said once)
        self.stop_after_flat = stop_after_flat
        self.flat_steps = 0  # steps in a row without a reward spread
        self.logged_step = 0  # the step of the last log row (a row covers the steps since the one before)
        self.stopped_flat: Optional[int] = None  # the step the run was stopped at for that reason

    def on_train_begin(self, args, state, control, **kwargs):
        self.logged_step = state.global_step  # a resumed run counts from its checkpoint

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not logs or "reward" not in logs:
            return
        flat = self._count_flat(state, control, logs)
        if not state.is_world_process_zero:
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
            tqdm.write(f"step {state.global_step}: " + " ".join(parts) + (f" -- {NO_GRADIENT}" if flat else ""))

    def _count_flat(self, state, control, logs: dict) -> bool:
        flat = is_flat(logs)
        self.flat_steps = self.flat_steps + max(1, state.global_step - self.logged_step) if flat else 0
        self.logged_step = state.global_step
        if self.stop_after_flat and self.flat_steps >= self.stop_after_flat and self.stopped_flat is None:
            control.should_training_stop = control.should_save = True  # the trainer saves this step, then stops
            self.stopped_flat = state.global_step
        return flat

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
