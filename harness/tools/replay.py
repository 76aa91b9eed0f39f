"""Re-scoring given trajectories (``mua score``): mua's own JSONL input, or a benchmark's own results files.

Each trajectory is replayed through ``run_episode`` in a fresh environment (recorded tool results are never
trusted) and scored by its benchmark's scorer. A line that cannot be read becomes an error row, never a crash.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from ..errors import ConfigError, DataError, MuaError
from ..interfaces import Benchmark, ChatModel, ReplayItem
from ..registry import benchmark_names, open_benchmark
from ..results.episodes import BadLine_, InvalidRecord, scan
from ..results.episodes import parse_line as parse_record
from ..runner import run_episode
from ..types import Message, Score, Task
from .transcript import ReplayAgent, ReplayUser, Transcript

REQUIRED = ("benchmark", "subset", "task_id", "messages")


class TaskIndex:
    """Tasks by (benchmark, subset, id), each subset's task file loaded once; benchmarks bound to data_dir."""

    def __init__(self, data_dir: Path):
        self.data_dir = data_dir
        self._by_subset: dict[tuple, dict[str, Task]] = {}

    def get(self, bench: Benchmark, subset: str, task_id: str, variant: Optional[str] = None) -> Task:
        split = bench.split_for_variant(variant)
        key = (bench.name, subset, split)
        if key not in self._by_subset:
            if subset not in bench.subsets:
                raise KeyError(f"{bench.name} has no subset {subset!r} (known: {', '.join(bench.subsets)})")
            self._by_subset[key] = {t.id: t for t in bench.load_tasks(subset, split=split)}
        tasks = self._by_subset[key]
        if task_id not in tasks:
            raise KeyError(f"{bench.name}/{subset} has no task {task_id!r}")
        return tasks[task_id]


@dataclass(frozen=True)
class Trajectory:
    """One line of mua's trajectory format (an episodes.jsonl line is one): what can be checked without the
    benchmark's data. ``problem``: why the line cannot be scored (keys missing or not text), named by its line;
    the ids are kept as text all the same, for the output row."""

    subset: str
    task_id: str
    benchmark: str = ""
    variant: Optional[str] = None
    messages: Any = None  # checked once the task is found (the order the errors were always reported in)
    problem: Optional[str] = None

    @classmethod
    def from_json(cls, obj: Any, where: str) -> "Trajectory":
        if not isinstance(obj, dict):
            raise InvalidRecord(None, f"{where}: line is not a JSON object")
        fields = {k: obj.get(k) for k in ("subset", "task_id", "variant")}
        ids = {"subset": _text(fields["subset"]), "task_id": _text(fields["task_id"])}
        missing = [k for k in REQUIRED if k not in obj]
        wrong = [k for k, v in fields.items() if v is not None and not isinstance(v, (str, int))
                 or isinstance(v, bool) or (k == "variant" and isinstance(v, int))]
        if missing:
            return cls(**ids, problem=f"{where}: missing keys: {', '.join(missing)}")
        if wrong:
            return cls(**ids, problem=f"{where}: {', '.join(wrong)} must be text")
        return cls(**ids, benchmark=str(obj["benchmark"]), variant=fields["variant"], messages=obj["messages"])


def parse_line(line: bytes | str, index: TaskIndex, lineno: int = 1) -> tuple[Optional[Benchmark], ReplayItem]:
    """One input line (line ``lineno`` of its file) -> (benchmark, item); problems are reported in
    ``item.error`` (prefixed "line N:")."""
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    where = f"line {lineno}"
    try:
        return _resolve(parse_record(raw, where, Trajectory.from_json), index, where)
    except InvalidRecord as e:
        return None, _error_item(str(e))


def _error_item(error: str) -> ReplayItem:
    return ReplayItem(None, [], subset="", task_id="", error=error)


def _resolve(line: Trajectory, index: TaskIndex, where: str) -> tuple[Optional[Benchmark], ReplayItem]:
    """The line's benchmark, task and messages (each problem one error naming the line)."""
    item = ReplayItem(None, [], subset=line.subset, task_id=line.task_id, error=line.problem)
    if line.problem is not None:
        return None, item
    item.variant = line.variant
    try:
        bench = open_benchmark(line.benchmark, index.data_dir)
        item.task = index.get(bench, item.subset, item.task_id, item.variant)
        if not isinstance(line.messages, list):
            raise ValueError("messages must be a list")
        item.messages = [Message.from_dict(m) for m in line.messages]
    except (MuaError, KeyError, ValueError, TypeError, AttributeError) as e:
        reason = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
        item.error = f"{where}: {reason}"
        return None, item
    return bench, item


def _named_by_line(lineno: int) -> str:
    return f"line {lineno}"


def read_items(path: Path, data_dir: Path, index: TaskIndex) -> Iterator[tuple[Optional[Benchmark], ReplayItem]]:
    """Items from ``path``: mua's JSONL format, else the first benchmark whose own results format it is."""
    if _looks_like_mua_jsonl(path):
        for _at, lineno, line in scan(path, Trajectory.from_json, where=_named_by_line, appended=False):
            if isinstance(line, Trajectory):
                yield _resolve(line, index, _named_by_line(lineno))
            else:  # not JSON, or not an object
                yield None, _error_item(line.reason if isinstance(line, BadLine_) else str(line))
        return
    for name in benchmark_names():
        bench = open_benchmark(name, data_dir)
        try:
            items = bench.read_official(path)
        except MuaError:
            raise
        except Exception as e:  # an adapter's reader meeting a shape it did not foresee: one line, no traceback
            raise DataError(f"{path}: cannot be read as a {name} results file ({type(e).__name__}: {e})") from None
        if items is not None:
            yield from _guarded(name, path, items, bench)
            return
    raise ConfigError(f"{path}: neither mua trajectory lines ({{\"benchmark\", \"subset\", \"task_id\", "
                      f"\"messages\"}} per line) nor a results file of a known benchmark")


def _guarded(name: str, path: Path, items: Iterable[ReplayItem],
             bench: Benchmark) -> Iterator[tuple[Optional[Benchmark], ReplayItem]]:
    """The items an official reader yields; if the reader fails part-way, the items read so far are kept and
    the failure ends the file with one error row (a hostile file must not cost a traceback or earlier rows)."""
    iterator = iter(items)
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return
        except MuaError:
            raise
        except Exception as e:
            yield None, ReplayItem(None, [], subset="", task_id="", error=f"the rest of {path} cannot be read as "
                                   f"a {name} results file ({type(e).__name__}: {e})")
            return
        yield (bench if item.error is None else None), item


def _looks_like_mua_jsonl(path: Path) -> bool:
    """By the first line: a JSON object with a "benchmark" key, or a damaged line that looks like one."""
    for _at, _lineno, first in scan(path, _as_read, appended=False):
        if isinstance(first, BadLine_):
            return first.raw.lstrip().startswith(b"{") and b'"benchmark"' in first.raw
        if isinstance(first, InvalidRecord):  # an episode line (subset, task_id, trial) with a bad number
            return True
        return isinstance(first, dict) and "benchmark" in first
    return True  # an empty file: zero lines in, zero lines out


def _as_read(obj: Any, where: str) -> Any:
    return obj


def _text(value: Any) -> str:
    """A short printable form of an id read from a hostile line (it is echoed in the output row)."""
    if value is None or isinstance(value, (dict, list)):
        return ""
    return str(value)


async def replay(bench: Benchmark, item: ReplayItem, judge: Optional[ChatModel]) -> Score:
    """Play the recorded messages through ``run_episode`` (tool calls re-executed in a fresh environment, no
    budgets), then score with the recorded termination, or the one the adapter derives when none was given."""
    if item.task is None:
        raise ValueError(f"no task for {item.subset}/{item.task_id}")
    transcript = Transcript(item.messages)
    result = await run_episode(bench, item.task, ReplayAgent(transcript), ReplayUser(transcript),
                               score=False, replaying=True)
    if (problem := transcript.leftover()) is not None:
        raise ValueError(problem)
    return await bench.score(item.task, result.messages, env=result.env, termination=item.termination,
                                   judge=judge)


async def score_item(bench: Optional[Benchmark], item: ReplayItem, judge: Optional[ChatModel]) -> dict:
    row: dict[str, Any] = {"task_id": item.task_id, "subset": item.subset, "variant": item.variant,
           "reward": None, "components": {}, "error": item.error}
    if bench is not None and item.error is None:
        try:
            score = await replay(bench, item, judge)
            reward = None if score.reward is None else float(score.reward)  # None: unknown (a check skipped)
            row.update(reward=reward, components=dict(score.components))
        except MuaError:
            raise  # bad data or configuration: reported once to the person running mua
        except Exception as e:  # a trajectory that cannot be replayed or scored is that row's error
            row["error"] = f"{type(e).__name__}: {e}"
    if item.official is not None:
        row["official"] = item.official
    return row


async def score_all(pairs: Iterable[tuple[Optional[Benchmark], ReplayItem]], judge: Optional[ChatModel],
                    concurrency: int = 8) -> list[dict]:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(pair: tuple[Optional[Benchmark], ReplayItem]) -> dict:
        bench, item = pair
        async with semaphore:
            return await score_item(bench, item, judge)

    return await asyncio.gather(*(one(p) for p in pairs))
