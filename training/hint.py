"""The `mua eval` command that scores what `mua train` wrote, printed when training ends: the held-out tasks of
the run's split protocol, the same data directory, user simulator and judge, so it runs as printed."""
from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Optional

from mua.harness.run.plan import default_user_model
from mua.harness.run.selection import read_split_file

from .config import SCRIPTED, TrainConfig, model_params


def eval_command(cfg: TrainConfig, bench: Any, out: Path) -> list[str]:
    """``mua eval`` arguments scoring ``out`` on the tasks the run held out (the benchmark's held-out split, or
    the split file's held-out ids)."""
    argv = ["mua", "eval", "--benchmark", cfg.benchmark]
    if cfg.data_dir:
        argv += ["--data-dir", str(cfg.data_dir)]
    for subset in cfg.subsets:
        argv += ["--subset", subset]
    split, task_ids = held_out(cfg, bench)
    if task_ids is not None:
        argv += ["--task-ids", ",".join(task_ids)]
        argv += ["--split", split] if split else (["--all-tasks"] if bench.default_split else [])
    elif split and split != bench.default_split:
        argv += ["--split", split]
    argv += ["--agent-model", str(out)]
    subsets = list(cfg.subsets or bench.subsets)
    needs_user = any(bench.needs_user_model(s) for s in subsets)
    if needs_user and cfg.user_model not in (None, SCRIPTED):
        argv += _model_flags("user", cfg.user_model, cfg.user_base_url, model_params(cfg.user_params))
    elif needs_user and default_user_model(bench, subsets):
        pass  # eval plays the benchmark's own user model (plan.user_spec), as training did unless it was scripted
    elif needs_user:
        argv += ["--user-model", "USER_MODEL"]  # trained with the scripted user (smoke runs): name a real one
    if cfg.judge_model:
        argv += _model_flags("judge", cfg.judge_model, cfg.judge_base_url, model_params(cfg.judge_params))
    return argv


def held_out(cfg: TrainConfig, bench: Any) -> tuple[Optional[str], Optional[list[str]]]:
    """The split and task ids (None: all of the split) a run's held-out tasks are: the split file's held-out ids
    within the run's split, else the benchmark's held-out split (its default split when it names none)."""
    if cfg.split_file:
        return cfg.split or None, list(read_split_file(cfg.split_file).held_out)
    return bench.held_out_split or bench.default_split, None


def _model_flags(role: str, name: str, base_url: Any, params: dict) -> list[str]:
    flags = [f"--{role}-model", name]
    if base_url:
        flags += [f"--{role}-base-url", str(base_url)]
    if params:  # the departure training was allowed to make (recorded), so the score is under the same one
        flags += [f"--{role}-params", json.dumps(params, sort_keys=True)]
    return flags


def shown(argv: list[str]) -> str:
    return shlex.join(argv)
