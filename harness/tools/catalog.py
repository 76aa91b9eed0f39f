"""What can be run: the installed benchmarks with their subsets, splits and task counts, and one task as an
episode of it starts (the user's scenario, expected actions, evaluation criteria, the agent's prompt and
tools). ``mua tasks`` prints these; everything comes through the Benchmark interface."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..errors import ConfigError, MuaError
from ..interfaces import Benchmark, TaskDescription
from ..registry import benchmark_names, open_benchmark
from ..types import Task, ToolSpec
from .gold_check import gold_check


@dataclass
class SplitCount:
    split: Optional[str]  # None: all tasks of a benchmark without named splits
    tasks: Optional[int]  # None: the split could not be read (see error)
    error: Optional[str] = None


@dataclass
class SubsetEntry:
    name: str
    splits: list[SplitCount]


@dataclass
class BenchmarkEntry:
    name: str
    default_split: Optional[str]
    subsets: list[SubsetEntry] = field(default_factory=list)
    error: Optional[str] = None  # the benchmark has no readable data in this data directory
    gold: Optional[str] = None  # "gold N of M" over every task, for a benchmark that declares gold_checked

    def to_dict(self) -> dict:
        return asdict(self)


def benchmark_entry(bench: Benchmark) -> BenchmarkEntry:
    """Subsets, splits and task counts of one benchmark bound to its data; a data problem becomes ``error``
    (the first subset that fails names it), never an exception."""
    entry = BenchmarkEntry(bench.name, bench.default_split)
    try:
        for subset in bench.subsets:
            counts = []
            for split in bench.splits(subset):
                try:
                    counts.append(SplitCount(split, len(bench.load_tasks(subset, split))))
                except ConfigError as e:  # a split this subset lacks (e.g. tau2's telecom-only splits)
                    counts.append(SplitCount(split, None, str(e)))
            entry.subsets.append(SubsetEntry(subset, counts))
        if bench.gold_checked:
            tasks = [t for subset in bench.subsets for t in bench.load_tasks(subset, None)]
            entry.gold = gold_check(bench, tasks).line("tasks pass with the gold agent and the current user")
    except MuaError as e:
        entry.subsets, entry.error = [], str(e)
    return entry


def catalog(data_dir: Path, names: Optional[list[str]] = None) -> list[BenchmarkEntry]:
    """One entry per installed benchmark (or per name in ``names``), read from ``data_dir``."""
    out = []
    for name in names or benchmark_names():
        try:
            bench = open_benchmark(name, data_dir)
        except MuaError as e:
            if names:
                raise
            out.append(BenchmarkEntry(name, None, error=str(e)))
            continue
        out.append(benchmark_entry(bench))
    return out


def find_task(bench: Benchmark, task_id: str, subset: Optional[str] = None) -> Task:
    """The task ``task_id`` of ``subset`` (any split), or of the one subset that has it; ConfigError when no
    subset or several have it."""
    subsets = [subset] if subset else list(bench.subsets)
    if subset and subset not in bench.subsets:
        raise ConfigError(f"{bench.name} has no subset {subset!r}; choose from {', '.join(bench.subsets)}")
    found = []
    for s in subsets:
        try:
            found.append(bench.find_task(s, task_id))
        except KeyError:
            continue
    if not found:
        raise ConfigError(f"{bench.name} {'/'.join(subsets)}: no task with id {task_id!r} (list them with "
                          f"`mua tasks {bench.name} --subset SUBSET`)")
    if len(found) > 1:
        raise ConfigError(f"{bench.name}: task {task_id!r} is in several subsets "
                          f"({', '.join(t.subset for t in found)}); give --subset")
    return found[0]


def tool_dict(tool: ToolSpec) -> dict:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


def describe(bench: Benchmark, task: Task) -> dict:
    """One task as plain JSON: ids, the user's scenario, expected actions, evaluation criteria, and what an
    episode of it starts with (the agent's system prompt, which holds the policy, and the tools)."""
    spec = bench.start(task)
    about = bench.describe_task(task)
    return _jsonable({
        "benchmark": bench.name, "subset": task.subset, "task_id": task.id, "split": task.split,
        "scenario": about.scenario, "expected_actions": about.expected_actions, "criteria": about.criteria,
        "system_prompt": spec.system_prompt,
        "opening": [m.to_dict() for m in spec.opening],
        "tools": [tool_dict(t) for t in spec.env.agent_tools(0)],
        "user_tools": [tool_dict(t) for t in spec.env.user_tools()],
    })


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


# -- plain text ---------------------------------------------------------------------------------------------

def signature(tool: dict) -> str:
    """``name(arg: type, opt?: type)``, from the tool's JSON schema."""
    params = tool.get("parameters") or {}
    props = params.get("properties") or {}
    required = set(params.get("required") or [])
    args = ", ".join(f"{k}{'' if k in required else '?'}: {_type(v)}" for k, v in props.items())
    return f"{tool['name']}({args})"


def _type(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    kind = schema.get("type")
    if kind == "array":
        return f"list[{_type(schema.get('items'))}]"
    if "enum" in schema:
        return "|".join(json.dumps(v) for v in schema["enum"])
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    return str(kind or "any")


def first_line(text: Optional[str], width: int = 100) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= width else line[:width - 3] + "..."


def tool_lines(tools: list[dict]) -> list[str]:
    return [f"  {signature(t)}" + (f"  -- {first_line(t.get('description'), 80)}" if t.get("description") else "")
            for t in tools]


def catalog_text(entries: list[BenchmarkEntry]) -> list[str]:
    lines = []
    for e in entries:
        if e.error:
            lines.append(f"{e.name}: no data here (give its folder with --data-dir): {e.error.split('. ')[0]}")
            continue
        lines.append(f"{e.name}" + (f"  (default split: {e.default_split})" if e.default_split else ""))
        for s in e.subsets:
            parts = [f"{c.split or 'all'}={c.tasks}" for c in s.splits if c.tasks is not None]
            lines.append(f"  {s.name:28} {'  '.join(parts) or '-'}")
        if e.gold:
            lines.append(f"  {e.gold}")
    return lines


def summary_line(task_id: str, about: TaskDescription, width: int = 90) -> str:
    text = about.summary or (about.scenario if isinstance(about.scenario, str)
                             else json.dumps(about.scenario, ensure_ascii=False, default=str))
    return f"{task_id:24} {first_line(text, width)}"


def task_text(view: dict) -> list[str]:
    """The task as sections of readable text (nested records as indented YAML)."""
    lines = [f"{view['benchmark']} / {view['subset']} / {view['task_id']}"
             + (f"  (split {view['split']})" if view.get("split") else "")]
    for title, key in (("User scenario", "scenario"), ("Expected actions", "expected_actions"),
                       ("Evaluation criteria", "criteria")):
        lines += ["", f"== {title} =="] + block(view.get(key))
    lines += ["", "== Agent system prompt (policy) =="] + (view["system_prompt"] or "(none)").splitlines()
    for m in view["opening"]:
        lines.append(f"(the episode opens with the {m['role']} saying: {m.get('content')!r})")
    lines += ["", f"== Agent tools ({len(view['tools'])}) =="] + tool_lines(view["tools"])
    if view["user_tools"]:
        lines += ["", f"== User tools ({len(view['user_tools'])}) =="] + tool_lines(view["user_tools"])
    lines += ["", "(the tools' full JSON schemas: --json)"]
    return lines


def block(value: Any) -> list[str]:
    if value is None:
        return ["(none)"]
    if isinstance(value, str):
        return value.splitlines() or [""]
    import yaml

    return yaml.safe_dump(value, allow_unicode=True, sort_keys=False, width=110).rstrip().splitlines()
