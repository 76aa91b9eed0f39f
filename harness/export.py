"""Finished episodes of a run as training rows: the agent's view (system prompt first) with the tools it was
offered, one row per episode, its reward and score components as columns.

The system prompt and tools are rebuilt from the benchmark (they are not stored in result lines), so export
needs the data directory the run used. Errored and unscored episodes are never exported."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from .episodes import latest_episodes
from .errors import ConfigError
from .interfaces import Benchmark
from .results import RunDir
from .runner import agent_view
from .types import Message

MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")


def message_row(m: Message) -> dict:
    """A message with every key present (None where unset), so all rows share one table schema."""
    d = m.to_dict()
    return {k: d.get(k) for k in MESSAGE_KEYS}


def export_rows(run: Path, bench: Benchmark, min_reward: Optional[float] = None) -> list[dict]:
    config = RunDir(run).read_config()
    if config is None:
        raise ConfigError(f"{run} is not a mua run (no config.json)")
    if config.get("benchmark") != bench.name:
        raise ConfigError(f"{run} is a {config.get('benchmark')} run, not {bench.name}")
    episodes = {k: r.row for k, r in latest_episodes(RunDir(run).episodes)[0].items()}
    names = sorted({k for r in episodes.values() for k in (r.get("components") or {})})
    rows = []
    for row in episodes.values():
        reward = row.get("reward")
        if row.get("error") or not isinstance(reward, (int, float)):
            continue
        if min_reward is not None and reward < min_reward:
            continue
        try:
            task = bench.find_task(row["subset"], str(row["task_id"]))
        except KeyError as e:
            raise ConfigError(f"{run}: {e.args[0]} (is --data-dir the one the run used?)") from None
        spec = bench.start(task)
        messages = [Message.from_dict(m) for m in row.get("messages") or []]
        view = ([Message(role="system", content=spec.system_prompt)] if spec.system_prompt else []) \
            + agent_view(messages)
        components = row.get("components") or {}
        rows.append({
            "benchmark": bench.name, "subset": row["subset"], "task_id": str(row["task_id"]),
            "trial": row.get("trial"), "split": config.get("split"),
            "messages": [message_row(m) for m in view],
            # JSON text: tool schemas differ in shape, which one table column cannot hold
            "tools": json.dumps([t.to_openai() for t in spec.env.agent_tools(0)], ensure_ascii=False),
            "reward": float(reward), "termination": row.get("termination"),
            **{f"component_{n}": components.get(n) for n in names},
        })
    return rows


def write_dataset(rows: list[dict], out: Path, fmt: str) -> None:
    """``datasets``: a Hugging Face dataset saved with ``save_to_disk`` (``datasets.load_from_disk(out)``);
    ``jsonl``: the same rows, one JSON object per line."""
    if fmt == "jsonl":
        from .results import dumps, write_atomic
        write_atomic(out, "".join(dumps(r) + "\n" for r in rows))
        return
    try:
        import datasets
    except ImportError:
        raise ConfigError("--format datasets needs the datasets package: pip install -e '.[train]'") from None
    datasets.Dataset.from_list(rows).save_to_disk(str(out))
