"""Copy accuracy per tool argument, read from a `mua eval` run: did the policy write the names and ids it had to
copy (from the user, from tool results) exactly?

For every expected action of a task (``evaluation["actions"]``: ``name`` and ``arguments``, the tau2 format the
task packs share) and each of its arguments whose gold value is a name or an id (a string with a capital letter
or a digit; lower-case words such as days or services are choices, not copies), an episode that called that tool
counts once: copied when one of its calls of that tool has exactly the gold value. Episodes that never called
the tool are counted apart (the policy did not get that far, which is not a copying error).

    python -m mua.training.copying RUN_DIR     # one line per argument: "tool.argument: copied exactly N/M (P%)"
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from mua.harness.errors import MuaError
from mua.harness.results.results_api import load_run
from mua.harness.types import ToolCall


@dataclass
class CopyCount:
    copied: int = 0  # episodes whose call of the tool had exactly the gold value
    calls: int = 0  # episodes that called the tool
    missing: int = 0  # episodes that never called it

    def line(self, key: str) -> str:
        share = f"{100 * self.copied / self.calls:.1f}%" if self.calls else "n/a"
        return (f"{key}: copied exactly {self.copied}/{self.calls} ({share})"
                + (f"; {self.missing} episode(s) never called {key.split('.')[0]}" if self.missing else ""))


def is_copied_value(value: object) -> bool:
    """A name or an id: a string with a capital letter or a digit."""
    return isinstance(value, str) and any(c.isupper() or c.isdigit() for c in value)


def expected_copies(evaluation: Any) -> list[tuple[str, str, str]]:
    """(tool, argument, gold value) for each name or id a task's expected actions (its evaluation record) pass."""
    actions = evaluation.get("actions") if isinstance(evaluation, dict) else None
    return [(a["name"], key, value) for a in actions or [] if isinstance(a, dict) and a.get("name")
            for key, value in (a.get("arguments") or {}).items() if is_copied_value(value)]


def _calls(messages: list[dict]) -> list[ToolCall]:
    return [ToolCall.from_dict(c) for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
            for c in m.get("tool_calls") or [] if isinstance(c, dict)]


def _arguments(call: ToolCall) -> dict:
    try:
        return call.parsed_arguments()
    except ValueError:  # a malformed call copied nothing
        return {}


def run_evaluations(run: Path | str) -> dict[str, Any]:
    """Task id -> evaluation record of every task the run at ``run`` played, read through its own benchmark and
    the data folder it recorded."""
    from mua.harness.protocol import recorded_data_dir
    from mua.harness.registry import open_benchmark

    results = load_run(run)
    bench = open_benchmark(results.benchmark, recorded_data_dir(results.config, results.path))
    return {t.id: t.evaluation for subset in results.subsets for t in bench.load_tasks(subset, results.split)}


def copy_accuracy(run: Path | str, evaluations: Optional[dict[str, Any]] = None) -> dict[str, CopyCount]:
    """``tool.argument`` -> its CopyCount over the episodes of the run at ``run`` (every trial); ``evaluations``:
    task id -> evaluation record (default: the run's own tasks, :func:`run_evaluations`). Keys in the order the
    episodes first name them."""
    if evaluations is None:
        evaluations = run_evaluations(run)
    counts: dict[str, CopyCount] = {}
    for episode in load_run(run).episodes():
        if episode.task_id not in evaluations:
            continue
        calls = _calls(episode.messages)
        for tool, key, value in expected_copies(evaluations[episode.task_id]):
            count = counts.setdefault(f"{tool}.{key}", CopyCount())
            made = [_arguments(c) for c in calls if c.name == tool]
            if not made:
                count.missing += 1
                continue
            count.calls += 1
            count.copied += any(m.get(key) == value for m in made)
    return counts


def copy_lines(counts: dict[str, CopyCount]) -> list[str]:
    return [count.line(key) for key, count in counts.items()] or ["no name or id among the expected arguments"]


def main(argv: Optional[list[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m mua.training.copying RUN_DIR", file=sys.stderr)
        return 2
    try:
        counts = copy_accuracy(args[0])
    except MuaError as e:
        print(f"copying: {e}", file=sys.stderr)
        return 2
    print("\n".join(copy_lines(counts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
