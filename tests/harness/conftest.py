"""A fixture that writes synthetic run directories in the `mua eval` results format (config.json +
episodes.jsonl), for the leaderboard, gate and stats tests."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Optional

import pytest

from mua.harness.metrics import generic
from mua.harness.protocol import generic as generic_protocol
from mua.harness.protocol import record
from mua.harness.registry import benchmark_class, installed_declaration
from mua.harness.results.cost import prices_record
from mua.harness.run.build import ModelSpec

MISSING = "missing"  # trial has no episode row (a crashed run)
ERROR = "error"  # trial finished with an error


def _official(benchmark: str):
    try:
        return benchmark_class(benchmark).declared_protocol()
    except Exception:  # an adapter that is not installed: the generic protocol
        return generic_protocol()


def _spec(name: Optional[str], role) -> Optional[dict]:
    """A model as config.json records it (the ModelSpec `mua eval` builds, with the protocol's request
    params); None when not used."""
    if name is None:
        return None
    return ModelSpec(name).to_dict() if name == "gold" else ModelSpec(name, params=dict(role.params),
                                                                      seed=role.seed).to_dict()


def _protocol(benchmark: str, trials: int, model: str, user: Optional[str], judge: Optional[str]) -> dict:
    """config.json's "protocol" for a run played under the official protocol (no data files recorded)."""
    official = _official(benchmark)
    roles = {}
    for role, name in (("agent", model), ("user", user), ("judge", judge)):
        r = official.role(role)
        roles[role] = None if name in (None, "gold") else {"model": name, "params": dict(r.params), "seed": r.seed}
    return record(official, roles, trials, dict(official.limits), [], {"files": {}, "sources": [], "unpinned": []})


def write_run(root: Path, name: str, benchmark: str, results: dict, *, model: str = "model-a",
              trials: int = 1, user: Optional[str] = None, judge: Optional[str] = None,
              split: Optional[str] = None, metrics: bool = True, protocol: bool | dict = True,
              data_dir: Optional[Path] = None) -> Path:
    """``results``: {subset: {task_id: [outcome per trial]}}; an outcome is a reward, MISSING, ERROR, or a
    dict {"reward": r, "components": {...}}. ``model`` "gold" is the gold agent; ``user`` and ``judge`` name
    the user simulator and judge models (None: not passed). ``metrics`` False writes a config.json of the
    format before metrics declarations were recorded; ``protocol`` False one without a protocol record, a
    dict replaces the record; ``data_dir``: the data folder the run records (none by default, as older runs)."""
    run = root / name
    if run.exists():  # a test may rewrite a run under the same name
        shutil.rmtree(run)
    run.mkdir(parents=True)
    config = {"mua_version": "0.1.0", "benchmark": benchmark, "subsets": list(results), "split": split,
              "trials": trials, "seed": 0, "agent": _spec(model, _official(benchmark).agent),
              "user": _spec(user, _official(benchmark).user), "judge": _spec(judge, _official(benchmark).judge),
              "tasks": {s: list(tasks) for s, tasks in results.items()}}
    if metrics:  # what `mua eval` records: the installed adapter's declaration
        config["metrics"] = (installed_declaration(benchmark) or generic(benchmark)).to_dict()
    if protocol:
        config["protocol"] = protocol if isinstance(protocol, dict) else _protocol(benchmark, trials, model, user,
                                                                                  judge)
    if data_dir is not None:
        config["data_dir"] = str(Path(data_dir).resolve())
    specs = {"agent": model, "user": user, "judge": judge}
    if prices := prices_record({r: ModelSpec(n) if n else None for r, n in specs.items()}):
        config["prices"] = prices  # as `mua eval` records them (cost.py)
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    lines = _episode_lines(benchmark, results, trials)
    (run / "episodes.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return run


def _episode_lines(benchmark: str, results: dict, trials: int) -> list[str]:
    """episodes.jsonl's lines for ``results`` (see write_run)."""
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
    return lines


@pytest.fixture
def make_run(tmp_path):
    def make(name: str, benchmark: str, results: dict, **kw) -> Path:
        return write_run(tmp_path, name, benchmark, results, **kw)
    return make
