"""Held-out evaluation inside `mua train` every ``eval_steps`` steps (TRL's ``eval_strategy: steps``, played by
mua's own evaluation): the policy as it stands is saved as a plain checkpoint and scored by ``run_eval``, the
library call behind `mua eval`, on the held-out tasks. Each evaluation is an ordinary run directory
(``OUTPUT/evals/step-N``: `mua view`, `mua leaderboard` and `mua review` read it), and its scores go to
metrics.jsonl as ``eval/*`` keys of a row with the step, which the training curves plot.

Which tasks: ``eval_split`` when given, else the benchmark's ``validation`` split where every subset has one,
else the held-out tasks the printed `mua eval` command scores (the split file's held-out ids, or the
benchmark's held-out split); at most ``eval_limit`` per subset, one trial each.
"""
from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any, Optional

from transformers import TrainerCallback

from mua.harness.interfaces import Benchmark
from mua.harness.run.batch import run_eval
from mua.harness.run.build import ModelSpec
from mua.harness.run.plan import RunPlan, planned
from mua.harness.run.selection import select_tasks

from .config import TrainConfig, protocol_specs
from .hint import held_out
from .stopping import rng_restore, rng_snapshot

EVALS_DIR = "evals"  # OUTPUT/evals/step-N: one `mua eval` run directory per evaluation
SNAPSHOT = ".policy"  # OUTPUT/evals/.policy: the policy as it stands, saved for the evaluation, then removed
VALIDATION = "validation"


def eval_split(cfg: TrainConfig, bench: Benchmark) -> tuple[Optional[str], Optional[list[str]]]:
    """The split and task ids the periodic evaluation plays (see the module docstring)."""
    if cfg.eval_split:
        return cfg.eval_split, None
    subsets = list(cfg.subsets or bench.subsets)
    if not cfg.split_file and all(VALIDATION in bench.splits(s) for s in subsets):
        return VALIDATION, None
    return held_out(cfg, bench)


def eval_plan(cfg: TrainConfig, bench: Benchmark, policy: Path) -> RunPlan:
    """The `mua eval` plan of one evaluation of the checkpoint ``policy``: the user and judge models training
    plays (under the benchmark's protocol), replies as long as in training."""
    user, judge, _ = protocol_specs(cfg, bench)
    split, task_ids = eval_split(cfg, bench)
    agent = ModelSpec(str(policy), params={"max_tokens": cfg.turn_tokens})
    return RunPlan(cfg.benchmark, list(cfg.subsets), agent, user=user, judge=judge, split=split, trials=1,
                    seed=cfg.seed, task_ids=task_ids, limit=cfg.eval_limit)


def check_eval_plan(cfg: TrainConfig, bench: Benchmark) -> int:
    """Before training starts: the evaluation's tasks exist and it has a user to play them with; returns how
    many tasks each evaluation plays (ConfigError naming the setting otherwise)."""
    from mua.harness.errors import ConfigError

    plan, _ = planned(bench, eval_plan(cfg, bench, cfg.out / EVALS_DIR / SNAPSHOT))
    tasks = select_tasks(bench, plan.subsets, plan.split, plan.task_ids, plan.limit)
    if plan.user is None and any(bench.needs_user_model(s) for s in tasks):
        raise ConfigError(f"eval_steps: evaluating {bench.name} needs a user model (the scripted user training "
                          "allows is no evaluation); set user_model, or drop eval_steps")
    count = sum(len(ts) for ts in tasks.values())
    if not count:
        raise ConfigError("eval_steps: the evaluation split has no tasks (see eval_split, eval_limit)")
    return count


def metrics_row(step: int, summary: dict) -> dict[str, Any]:
    """What metrics.jsonl gets of one evaluation (summary.json's overall numbers, as `mua eval` wrote them)."""
    overall = summary.get("overall") or {}
    return {"step": step, "eval/reward": overall.get("mean_reward"), "eval/pass_rate": overall.get("pass^1"),
            "eval/episodes": overall.get("episodes"), "eval/errors": overall.get("errors"),
            "eval/unknown": overall.get("unknown_rewards")}


class PeriodicEval(TrainerCallback):
    """Evaluates at the end of every ``eval_steps``-th step, before that step's checkpoint is saved (so a run
    resumed from it does not evaluate again); only the main process plays episodes, the others wait."""

    def __init__(self, trainer: Any, cfg: TrainConfig, bench: Benchmark):
        self.trainer, self.cfg, self.bench = trainer, cfg, bench

    def on_step_end(self, args, state, control, **kwargs):
        steps = self.cfg.eval_steps
        if steps and state.global_step % int(steps) == 0:
            self.evaluate(state.global_step)

    def evaluate(self, step: int) -> None:
        """Score the policy of ``step``; the random states are put back afterwards, so training goes on
        exactly as it would have without the evaluation (whatever a backend or user model draws)."""
        rng = rng_snapshot()
        try:
            self._evaluate(step)
        finally:
            rng_restore(rng)

    def _evaluate(self, step: int) -> None:
        evals = self.cfg.out / EVALS_DIR
        snapshot, run_dir = evals / SNAPSHOT, evals / f"step-{step}"
        accelerator = self.trainer.accelerator
        if accelerator.is_main_process:
            shutil.rmtree(snapshot, ignore_errors=True)
            shutil.rmtree(run_dir, ignore_errors=True)  # left by a step that was abandoned and is now redone
        save_policy(self.trainer, snapshot)
        if accelerator.is_main_process:
            try:
                outcome = asyncio.run(run_eval(eval_plan(self.cfg, self.bench, snapshot), run_dir,
                                               self.bench.data_dir, concurrency=self.cfg.concurrency,
                                               progress=False))
            finally:
                shutil.rmtree(snapshot, ignore_errors=True)
            row = metrics_row(step, outcome.summary)
            with (self.cfg.out / "metrics.jsonl").open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, sort_keys=True) + "\n")
            if self.cfg.progress:
                from tqdm.auto import tqdm

                tqdm.write(f"step {step}: held-out eval ({run_dir}): " + ", ".join(
                    f"{k.removeprefix('eval/')}={v:.3g}" for k, v in row.items()
                    if k != "step" and isinstance(v, (int, float))))
        accelerator.wait_for_everyone()


def save_policy(trainer: Any, path: Path) -> None:
    """The policy as it stands, as a plain checkpoint (weights, config, tokenizer with its chat template) that
    `mua eval --agent-model` loads; a LoRA adapter is merged into a copy of its base (training goes on)."""
    import copy

    model = trainer.accelerator.unwrap_model(trainer.model)
    if not hasattr(model, "merge_and_unload"):
        trainer.save_model(str(path))
        return
    if trainer.accelerator.is_main_process:
        copy.deepcopy(model).merge_and_unload().save_pretrained(str(path))
        trainer.processing_class.save_pretrained(str(path))


