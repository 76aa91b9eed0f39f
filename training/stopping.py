"""Stopping a run without losing it, and failures every rank must act on.

Ctrl-C or SIGTERM (what torchrun and accelerate send their workers, then SIGKILL 30 s later) stops the run
promptly on every rank: a rollout in progress is abandoned at once (its episodes are dropped and the
unfinished step is discarded), the ranks agree on it, the last finished step is saved as a checkpoint and the
run exits. A signal during the optimisation part of a step stops the run at the end of that step. A second
Ctrl-C, more than FORWARD_S seconds after the first, stops at once without saving (launchers forward the
terminal's Ctrl-C to their workers, so one key press arrives twice within a moment).

A failure every rank must act on is agreed across ranks first: a rank that raised alone would leave the others
waiting in a collective forever.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any, Optional

from transformers import TrainerCallback

FORWARD_S = 3.0  # signals within this long after the first are the same request (a launcher forwarding it)


def any_ranks(flags: list[bool], device: Any = None) -> list[bool]:
    """Each of ``flags`` OR-ed over all ranks of the process group, in one collective (just ``flags`` outside
    distributed training). Every rank must call it at the same point with as many flags."""
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return list(flags)
    if device is None:
        device = "cuda" if dist.get_backend() == "nccl" else "cpu"
    value = torch.tensor([int(f) for f in flags], device=device)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return [bool(v) for v in value.tolist()]


def any_rank(flag: bool, device: Any = None) -> bool:
    """``flag`` OR-ed over all ranks (see :func:`any_ranks`)."""
    return any_ranks([flag], device)[0]


def rng_snapshot() -> dict:
    """The random states a checkpoint records (Python, NumPy, torch CPU and CUDA)."""
    import random

    import numpy as np
    import torch

    snap = {"python": random.getstate(), "numpy": np.random.get_state(), "cpu": torch.random.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        snap["cuda"] = torch.cuda.get_rng_state_all()
    return snap


def rng_restore(snap: dict) -> None:
    import random

    import numpy as np
    import torch

    random.setstate(snap["python"])
    np.random.set_state(snap["numpy"])
    torch.random.set_rng_state(snap["cpu"])
    if "cuda" in snap:
        torch.cuda.set_rng_state_all(snap["cuda"])


class RolloutInterrupted(Exception):
    """Raised on every rank together when a stop was requested during a rollout; the step is discarded."""


def _rank_zero() -> bool:
    return os.environ.get("RANK", "0") == "0"


class SaveOnInterrupt(TrainerCallback):
    """Catches SIGINT and SIGTERM while training; the rollout polls :attr:`requested` between episodes and
    :meth:`on_step_end` stops training at a step end. ``stopped_at`` is the step the run stopped after."""

    def __init__(self, command: str = "mua train"):
        self.command = command
        self.requested = False
        self.stopped_at: Optional[int] = None
        self._first_at = 0.0
        self._previous: dict[int, Any] = {}
        self.rng: Optional[dict] = None

    def __enter__(self) -> "SaveOnInterrupt":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous = {}

    def _on_signal(self, signum, frame) -> None:
        if self.requested:
            if signum == signal.SIGINT and time.monotonic() - self._first_at > FORWARD_S:
                raise KeyboardInterrupt
            return
        self.requested, self._first_at = True, time.monotonic()
        if _rank_zero():
            name = signal.Signals(signum).name
            print(f"\n{self.command}: {name}: stopping; the last finished step is being saved as a checkpoint (Ctrl-C "
                  "again to stop at once without saving)", file=sys.stderr, flush=True)

    def on_step_end(self, args, state, control, **kwargs):
        self.rng = rng_snapshot()  # a checkpoint saved after an abandoned rollout carries this step's RNG
        if any_rank(self.requested, getattr(args, "device", None)):
            control.should_save = True
            control.should_training_stop = True
            self.stopped_at = state.global_step
        return control
