"""One output directory holds one training run: starting over, resuming, and what a resume may change.

``train_config.json`` records the settings of the run in the directory. Resuming compares them with the
new settings: anything that changes what is trained (policy, tasks, group size, optimiser, sampling,
budgets, user and judge models, seed) must match, or the checkpoint's steps and the new ones would be two
different runs under one name. Settings that only change how the run is executed may differ.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Optional

from mua.harness.errors import ConfigError, DataError
from mua.harness.io.files import read_json
from mua.harness.io.jsonl import BadLine, loads_line
from mua.harness.io.outputs import describe
from mua.harness.run.build import TRAIN_CONFIG, TRAINED_TASKS
from mua.harness.run.plan import jsonable, run_differences

from .checkpoints import last_complete_checkpoint
from .config import CONSTANT_SCHEDULES, TrainConfig

CONFIG_FILE = TRAIN_CONFIG
METRICS_FILE = "metrics.jsonl"
# Settings a resumed run may change: where and how it runs, how often it saves and logs, where it reports.
# (max_steps is checked on its own: see _check_max_steps.)
MAY_CHANGE = frozenset({
    "output_dir", "data_dir", "max_steps", "resume", "progress", "save_steps", "save_total_limit",
    "logging_steps", "samples_per_step", "concurrency", "generation", "vllm_server_url", "vllm_server_model",
    "user_base_url", "judge_base_url", "report_to", "run_name", "project", "disable_tqdm", "use_cpu",
    "local_rank", "resume_from_checkpoint", "num_completions_to_print", "use_vllm", "vllm_mode",
    "skip_memory_metrics", "torch_empty_cache_steps", "ddp_timeout", "stop_after_flat_steps",
    "eval_steps", "eval_split", "eval_limit"})  # the held-out evaluation leaves training as it is (evaluation.py)
# ... and every TRL setting with one of these prefixes (logging, hub, dataloader workers, vLLM server address)
MAY_CHANGE_PREFIXES = ("logging_", "log_", "hub_", "push_to_hub", "trackio_", "dataloader_", "save_",
                       "vllm_server_", "vllm_gpu_memory", "vllm_enable_sleep")
_SAMPLE = re.compile(r"step-(\d+)\.jsonl")  # samples/step-<training step>.jsonl (see rollout.sample_file)
_OLD_SAMPLE = re.compile(r"step-(\d+)\.\d+\.jsonl")  # before: step-<global step before it>.<round>.jsonl


def _comparable(values: dict) -> dict:
    out = {k: v for k, v in values.items() if k not in MAY_CHANGE and not k.startswith(MAY_CHANGE_PREFIXES)}
    if out.get("policy"):  # the same checkpoint named from another working directory is the same policy
        out["policy"] = str(Path(out["policy"]).resolve())
    return out


def checkpoint_to_resume(cfg: TrainConfig, config_file: str = CONFIG_FILE, command: str = "mua train") -> Optional[str]:
    """Checks ``cfg.output_dir`` before anything is loaded; returns the checkpoint to resume from, if any.
    Refuses: a non-empty directory with --no-resume, a directory that is not a ``command`` run's (no
    ``config_file``), and a resume whose settings differ from the recorded run's in anything that matters.
    (``cfg``: any config with ``out``, ``resume``, ``settings()`` and TRL's scheduler fields.)"""
    out = cfg.out
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output_dir {out} is a file, not a directory")
    if not out.is_dir() or not any(out.iterdir()):
        return None
    if not cfg.resume:
        raise ConfigError(f"output_dir {out} already holds an earlier run, and --no-resume does not delete it. "
                          "To start over, delete that directory or choose another --output-dir; to continue the "
                          "run, drop --no-resume")
    saved_path = out / config_file
    if not saved_path.is_file():
        raise ConfigError(f"output_dir {out} already holds {describe(out)} and no {config_file}, so it is not a "
                          f"{command} run to resume; choose a new or empty --output-dir")
    saved = read_json(saved_path, what=f"{command} settings", expect=dict)
    old, new = _comparable(saved), _comparable(cfg.settings())
    differ = sorted(k for k in old.keys() & new.keys() if old[k] != new[k])
    if differ:
        changes = "; ".join(f"{k}: {old[k]!r} -> {new[k]!r}" for k in differ)
        raise ConfigError(f"output_dir {out} holds a run with other settings ({changes}); resuming would mix two "
                          "runs. Use the recorded settings to continue it, or another --output-dir for a new run")
    _check_max_steps(saved, cfg)
    return last_complete_checkpoint(out)


def check_same_episodes(cfg: TrainConfig, task_keys: list[str], protocol: dict) -> None:
    """A resumed run plays the tasks and the run protocol (user and judge as sent, budgets, data checksums) the
    recorded run played (:func:`played_differences`); the policy and its sampling are settings
    (:func:`checkpoint_to_resume`)."""
    differ = played_differences(cfg, {TRAINED_TASKS: task_keys, "protocol": protocol})
    if differ:
        what = " and ".join("tasks" if k == TRAINED_TASKS else "run protocol (user, judge, budgets, data)"
                            for k in differ)
        raise ConfigError(f"output_dir {cfg.out} holds a run that played other {what} than these settings play now "
                          "(changed data or split, or another user or judge); resuming would mix two runs. Restore "
                          "them to continue it, or use another --output-dir for a new run")


def played_differences(cfg: TrainConfig, played: dict, config_file: str = CONFIG_FILE,
                       command: str = "mua train") -> list[str]:
    """The fields of ``played`` (what a run trains on: tasks, protocol, data checksums) in which the run recorded
    in ``config_file`` differs, by `mua eval`'s "same run?" rule (plan.run_differences); `mua train` and
    `mua sft` resume by it. A field the record lacks (written before mua kept it) is not compared."""
    path = cfg.out / config_file
    if not path.is_file():
        return []
    saved = read_json(path, what=f"{command} settings", expect=dict)
    new = {k: _without_policy(v) if k == "protocol" else v for k, v in jsonable(played).items() if k in saved}
    return run_differences({k: _without_policy(saved[k]) if k == "protocol" else saved[k] for k in new}, new)


def _without_policy(protocol: object) -> object:
    """The protocol record without the policy's role (compared as settings, its path as resolved there)."""
    if not isinstance(protocol, dict) or not isinstance(protocol.get("roles"), dict):
        return protocol
    return {**protocol, "roles": {k: v for k, v in protocol["roles"].items() if k != "agent"}}


def _check_max_steps(saved: dict, cfg: TrainConfig) -> None:
    """A learning-rate schedule that depends on max_steps (linear, cosine, warm-up as a ratio) would be cut
    in two by a resume with another max_steps; only a constant schedule may be extended."""
    old = saved.get("max_steps")
    if old is None or old == cfg.max_steps:
        return
    schedule = getattr(cfg.lr_scheduler_type, "value", cfg.lr_scheduler_type)
    ratio_warmup = 0 < cfg.warmup_steps < 1
    if schedule in CONSTANT_SCHEDULES and not ratio_warmup:
        return
    raise ConfigError(f"max_steps: {old} -> {cfg.max_steps} would change the learning-rate schedule of the run in "
                      f"{cfg.output_dir} ({schedule} over max_steps{', warm-up as a ratio' if ratio_warmup else ''})"
                      f", mixing two schedules. Keep max_steps {old}, or train with lr_scheduler_type: constant "
                      "(or constant_with_warmup with warmup_steps >= 1) to be able to extend a run")


def checkpoint_step(checkpoint: Optional[str]) -> int:
    if checkpoint is None:
        return 0
    try:
        state = read_json(Path(checkpoint) / "trainer_state.json", what="trainer state", expect=dict)
        return int(state["global_step"])
    except (DataError, ValueError, KeyError, TypeError, OverflowError) as exc:
        raise ConfigError(f"cannot read the step of {checkpoint}/trainer_state.json: {exc}") from None


def rewind_logs(output_dir: Path, step: int) -> None:
    """Drop what the run logged after ``step`` (the checkpoint it resumes from): metric rows of later steps
    and rollout samples made at or after it, which the resumed run writes again."""
    metrics = output_dir / METRICS_FILE
    if metrics.is_file():
        rows = metrics.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [r for r in rows if (n := _row_step(r)) is not None and n <= step]
        if len(kept) != len(rows):
            metrics.write_text("".join(kept), encoding="utf-8")
    for sample in (output_dir / "samples").glob("step-*.jsonl"):
        match, old = _SAMPLE.fullmatch(sample.name), _OLD_SAMPLE.fullmatch(sample.name)
        if (match and int(match.group(1)) > step) or (old and int(old.group(1)) >= step):
            sample.unlink()


def _row_step(row: str) -> Optional[int]:
    try:
        return int(loads_line(row)["step"])
    except (BadLine, ValueError, KeyError, TypeError, OverflowError):
        return None  # a row cut short by a crash: dropped


def record_config(cfg: TrainConfig, task_keys: Optional[list[str]] = None, protocol: Optional[dict] = None,
                  config_file: str = CONFIG_FILE, played: Optional[dict] = None) -> None:
    """Write the run's settings (with the split protocol it followed: split, split_file, allow_test_split) and
    the keys of the tasks it trains on. The file sits beside the final model, so an evaluation of that model
    records where its training tasks came from. ``protocol``: the run protocol the episodes were played under
    (as config.json records it for an evaluation); ``played``: other fields of what the run trains on (`mua
    sft`'s data checksums). `mua train` and `mua sft` both record their run here."""
    out = cfg.out
    out.mkdir(parents=True, exist_ok=True)
    values = {**cfg.settings(), **(played or {})}
    if task_keys is not None:
        values[TRAINED_TASKS] = task_keys
    if protocol is not None:
        values["protocol"] = protocol
    write_json_atomic(out / config_file, values)


def write_json_atomic(path: Path, values: dict) -> None:
    """``values`` as JSON in ``path``, written under a temporary name and renamed (never half a file)."""
    staged = path.with_name(path.name + ".tmp")
    with staged.open("w", encoding="utf-8") as f:
        f.write(json.dumps(values, indent=2, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(staged, path)
