"""A fixture that writes synthetic run directories in the `mua eval` results format (config.json +
episodes.jsonl), for the leaderboard, gate and stats tests."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Optional

import pytest

from mua.harness.build import ModelSpec
from mua.harness.metrics import generic
from mua.harness.registry import installed_declaration

MISSING = "missing"  # trial has no episode row (a crashed run)
ERROR = "error"  # trial finished with an error


def _spec(name: Optional[str]) -> Optional[dict]:
    """A model as config.json records it (the ModelSpec `mua eval` builds); None when not used."""
    return None if name is None else ModelSpec(name).to_dict()


def write_run(root: Path, name: str, benchmark: str, results: dict, *, model: str = "model-a",
              trials: int = 1, user: Optional[str] = None, judge: Optional[str] = None,
              split: Optional[str] = None, metrics: bool = True) -> Path:
    """``results``: {subset: {task_id: [outcome per trial]}}; an outcome is a reward, MISSING, ERROR, or a
    dict {"reward": r, "components": {...}}. ``model`` "gold" is the gold agent; ``user`` and ``judge`` name
    the user simulator and judge models (None: not passed). ``metrics`` False writes a config.json of the
    format before metrics declarations were recorded."""
    run = root / name
    if run.exists():  # a test may rewrite a run under the same name
        shutil.rmtree(run)
    run.mkdir(parents=True)
    config = {"mua_version": "0.1.0", "benchmark": benchmark, "subsets": list(results), "split": split,
              "trials": trials, "seed": 0, "agent": _spec(model), "user": _spec(user), "judge": _spec(judge),
              "tasks": {s: list(tasks) for s, tasks in results.items()}}
    if metrics:  # what `mua eval` records: the installed adapter's declaration
        config["metrics"] = (installed_declaration(benchmark) or generic(benchmark)).to_dict()
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    lines = []
    for subset, tasks in results.items():
        for task_id, outcomes in tasks.items():
            assert len(outcomes) == trials, "one outcome per trial"
            for trial, out in enumerate(outcomes):
                if out == MISSING:
                    continue
                row = {"benchmark": benchmark, "subset": subset, "task_id": task_id, "trial": trial, "seed": 0,
                       "reward": None, "components": {}, "termination": None, "turns": 1, "messages": [],
                       "usage": {}, "info": {}, "error": None}
                if out == ERROR:
                    row["error"] = "ModelError: endpoint failed"
                elif isinstance(out, dict):
                    row.update(out)
                else:
                    row["reward"] = float(out)
                lines.append(json.dumps(row))
    (run / "episodes.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return run


@pytest.fixture
def make_run(tmp_path):
    def make(name: str, benchmark: str, results: dict, **kw) -> Path:
        return write_run(tmp_path, name, benchmark, results, **kw)
    return make
