"""Stopping a run without losing it: Ctrl-C ends training at the end of the current step with a checkpoint,
and a failure every rank must act on is agreed across ranks first (a rank that raised alone would leave
the others waiting in a collective forever)."""
from __future__ import annotations

import signal
import sys
import threading
from typing import Any, Optional

from transformers import TrainerCallback


def any_rank(flag: bool, device: Any = None) -> bool:
    """``flag`` OR-ed over all ranks of the process group (just ``flag`` outside distributed training).
    Every rank must call it at the same point."""
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return flag
    if device is None:
        device = "cuda" if dist.get_backend() == "nccl" else "cpu"
    value = torch.tensor([int(flag)], device=device)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return bool(value.item())


class SaveOnInterrupt(TrainerCallback):
    """First Ctrl-C: finish the current step, save a checkpoint and stop (the run resumes from it). A
    second Ctrl-C stops at once, losing the steps since the last checkpoint. Under torchrun every rank gets
    the signal; the ranks agree on it at each step end so they all save the same step."""

    def __init__(self):
        self.requested = False
        self.stopped_at: Optional[int] = None
        self._previous = None

    def __enter__(self) -> "SaveOnInterrupt":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _on_sigint(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\nmua train: interrupted; finishing this step to save a checkpoint (Ctrl-C again to stop now "
              "and lose the steps since the last checkpoint)", file=sys.stderr, flush=True)

    def on_step_end(self, args, state, control, **kwargs):
        if any_rank(self.requested, getattr(args, "device", None)):
            control.should_save = True
            control.should_training_stop = True
            self.stopped_at = state.global_step
        return control
