"""Checkpoints that are either complete or absent.

The trainer writes each checkpoint into ``OUTPUT/.saving/checkpoint-N`` (every rank writes its part there);
once all ranks are done, the main process renames it to ``OUTPUT/checkpoint-N``. A crash or kill during the
save leaves only the staging directory, which the next run ignores and clears, so ``checkpoint-N`` always
names a complete checkpoint. Resuming picks the newest checkpoint whose trainer state reads back (directories
written some other way and left half-done are skipped).
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Optional

from mua.harness.errors import DataError
from mua.harness.io.files import read_json

from .compat import CheckpointHooks, rotate_checkpoints

STAGING = ".saving"
_CHECKPOINT = re.compile(r"checkpoint-(\d+)")


def last_complete_checkpoint(output_dir: Path) -> Optional[str]:
    """The newest ``checkpoint-N`` in ``output_dir`` with a readable trainer_state.json, or None."""
    found = [(int(m.group(1)), p) for p in Path(output_dir).iterdir()
             if (m := _CHECKPOINT.fullmatch(p.name)) and p.is_dir()]
    for _, path in sorted(found, reverse=True):
        try:
            state = read_json(path / "trainer_state.json", what="trainer state", expect=dict)
            int(state["global_step"])
        except (DataError, ValueError, KeyError, TypeError, OverflowError):
            continue
        return str(path)
    return None


def clear_staging(output_dir: Path) -> None:
    """Remove what an interrupted save left behind (call on the main process only)."""
    shutil.rmtree(Path(output_dir) / STAGING, ignore_errors=True)


def _publish(staged: Path, final: Path) -> None:
    """Rename ``staged`` to ``final``; a checkpoint already there (saved again at the same step) is replaced
    only once the new one is in place."""
    old = final.with_name(final.name + ".old")
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.rename(final, old)
    os.rename(staged, final)
    shutil.rmtree(old, ignore_errors=True)
    fd = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(fd)  # the rename itself is durable
    finally:
        os.close(fd)


class AtomicCheckpoints(CheckpointHooks):
    """Trainer mixin (put it before the trainer class): checkpoints are saved under a staging name and renamed
    when every rank has written its part."""

    _staging = False

    def checkpoint_parent(self, run_dir: str) -> str:
        return os.path.join(run_dir, STAGING) if self._staging else run_dir

    def write_checkpoint(self, model, trial, save) -> None:
        run_dir = Path(self.run_dir(trial))
        name = f"checkpoint-{self.state.global_step}"  # type: ignore[attr-defined]
        staged = run_dir / STAGING / name
        accelerator, args = self.accelerator, self.args  # type: ignore[attr-defined]
        if args.should_save:
            shutil.rmtree(staged, ignore_errors=True)
        accelerator.wait_for_everyone()
        self._staging = True
        try:
            save()
        finally:
            self._staging = False
        accelerator.wait_for_everyone()
        if args.should_save:
            _publish(staged, run_dir / name)
            shutil.rmtree(staged.parent, ignore_errors=True)  # nothing else is staged: ranks are in step
            rotate_checkpoints(self, str(run_dir))
        accelerator.wait_for_everyone()


def atomic(trainer_cls: type) -> type:
    """``trainer_cls`` with atomic checkpoints."""
    if issubclass(trainer_cls, AtomicCheckpoints):
        return trainer_cls
    return type(trainer_cls.__name__, (AtomicCheckpoints, trainer_cls), {})


def save_final_model(trainer, output_dir: Path) -> None:
    """The trained model as a plain checkpoint in ``output_dir`` (weights, config, tokenizer with its chat
    template), loadable by `mua eval --agent-model` and vLLM. A LoRA adapter is merged into its base first (the
    checkpoints keep the adapter alone)."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    if not hasattr(model, "merge_and_unload"):  # not a PEFT model
        trainer.save_model(str(output_dir))
        return
    if trainer.accelerator.is_main_process:
        merged = model.merge_and_unload()  # folds B @ A into the base weights; training is over
        merged.save_pretrained(str(output_dir))
        trainer.processing_class.save_pretrained(str(output_dir))
    trainer.accelerator.wait_for_everyone()
