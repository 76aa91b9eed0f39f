"""The results store of one run directory: config.json, episodes.jsonl, timings.jsonl, summary.json.

episodes.jsonl is append-only while a run is in flight: each finished episode's line is written and flushed
at once, then fsynced (concurrent episodes share one fsync), so a crash loses at most the episodes in flight.
Reading tolerates a torn last line, and the last record of a
(subset, task, trial) wins, so re-running errored episodes never duplicates them. When a run completes the
file is rewritten atomically in canonical order, which makes it byte-identical across reruns with the same
seed and model answers. Wall-clock timings live in timings.jsonl for that reason.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
from pathlib import Path
from array import array
from typing import Any, Callable, Iterable, Iterator, Optional

from .errors import ConfigError
from .jsonl import BadLine, iter_raw_lines, loads_line
from .stats import is_success

log = logging.getLogger(__name__)

EpisodeKey = tuple[str, str, int]  # (subset, task_id, trial)


def dumps(obj: Any) -> str:
    """The one JSON form used in result files: stable, compact, non-ASCII kept. Text that is not valid
    Unicode (a lone surrogate from a model's output) is written \\u-escaped, so the line stays valid UTF-8."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text


def episode_key(record: dict) -> EpisodeKey:
    return (record["subset"], str(record["task_id"]), int(record["trial"]))


def _valid_key(record: Any) -> bool:
    try:
        episode_key(record)
        return True
    except (KeyError, TypeError, ValueError):
        return False


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename: readers see the old or the new file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; result files get the usual permissions
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_json(path: Path, obj: Any) -> None:
    write_atomic(path, json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False) + "\n")


class JsonlAppender:
    """Appends one JSON object per line. ``append`` writes and flushes at once (the line survives a killed
    process); ``commit`` waits until an fsync covering that line has finished (it survives a machine crash).
    Concurrent committers share one fsync (group commit), run in a thread so the event loop keeps going."""

    def __init__(self, path: Path):
        self.path = Path(path)
        set_aside_torn_tail(self.path)
        self._file = open(self.path, "a", encoding="utf-8")
        self._written = 0  # lines written
        self._synced = 0  # lines covered by a finished fsync
        self._syncing: Optional[asyncio.Task] = None

    def append(self, obj: Any) -> None:
        self._file.write(dumps(obj) + "\n")
        self._file.flush()
        self._written += 1

    async def commit(self) -> None:
        target = self._written
        while self._synced < target:
            if self._syncing is None:
                self._syncing = asyncio.create_task(self._sync())
            await asyncio.shield(self._syncing)

    async def _sync(self) -> None:
        upto = self._written
        try:
            await asyncio.to_thread(os.fsync, self._file.fileno())
            self._synced = max(self._synced, upto)
        finally:
            self._syncing = None

    def close(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()


def set_aside(path: Path, lines: list[bytes], why: str) -> Path:
    """Append damaged bytes to ``<path>.setaside`` (never deleted silently) and say so on the log."""
    side = path.with_name(path.name + ".setaside")
    with open(side, "ab") as f:
        for raw in lines:
            f.write(raw if raw.endswith(b"\n") else raw + b"\n")
        f.flush()
        os.fsync(f.fileno())
    log.warning("%s: %s; %d line(s) set aside in %s", path, why, len(lines), side)
    return side


def set_aside_torn_tail(path: Path) -> None:
    """Move a partial last line left by a crash mid-write to the side file, so the next append starts on a
    fresh line and nothing is lost."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        data = f.read()
        if data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        set_aside(path, [data[cut:]], "its last line was cut short (a crash or a full disk mid-write)")
        f.truncate(cut)
        f.flush()
        os.fsync(f.fileno())


def read_records(path: Path) -> tuple[list[dict], list[bytes]]:
    """Complete episode records of a JSONL file, and the raw lines that are not (garbled, non-UTF-8, foreign
    or a torn tail). Never raises for bad content."""
    records: list[dict] = []
    bad: list[bytes] = []
    if not Path(path).exists():
        return records, bad
    for _lineno, raw, complete in iter_raw_lines(Path(path)):
        try:
            record = loads_line(raw) if complete else None
        except BadLine:
            record = None
        if _valid_key(record):
            records.append(record)  # type: ignore[arg-type]
        else:
            bad.append(raw)
    return records, bad


def read_jsonl(path: Path) -> list[dict]:
    """All complete records of a JSONL file; a torn, garbled or foreign line is skipped."""
    return read_records(path)[0]


def latest_by_key(records: Iterable[dict]) -> dict[EpisodeKey, dict]:
    latest: dict[EpisodeKey, dict] = {}
    for r in records:
        latest[episode_key(r)] = r
    return latest


class EpisodeIndex:
    """Where the latest complete record of each expected episode lies in a JSONL file, found in one streaming
    pass: one file offset per expected episode (positions 0..size-1, from ``position(key)``), plus a small
    status code each, so a run of any length is indexed in memory proportional to its episode count in bytes,
    not in records. Lines for keys outside the expected set are kept by offset too; unreadable ones are
    collected for setting aside."""

    MISSING, PASSED, FAILED, UNKNOWN, ERRORED = range(5)

    def __init__(self, path: Path, position: Callable[[EpisodeKey], Optional[int]], size: int):
        self.path = Path(path)
        self.offsets = array("q", [-1]) * size
        self.status = bytearray(size)
        self.extra: dict[EpisodeKey, int] = {}  # keys not expected (a hand-edited or older file)
        self.bad: list[bytes] = []
        if not self.path.exists():
            return
        offset = 0
        with open(self.path, "rb") as f:
            for raw in f:
                at, offset = offset, offset + len(raw)
                if not raw.strip():
                    continue
                try:
                    record: Any = loads_line(raw) if raw.endswith(b"\n") else None
                    key = episode_key(record)
                except (BadLine, KeyError, TypeError, ValueError):
                    self.bad.append(raw.rstrip(b"\r\n"))
                    continue
                p = position(key)
                if p is None:
                    self.extra[key] = at
                    continue
                self.offsets[p] = at
                self.status[p] = _status(record)

    def found(self, p: int) -> bool:
        return self.offsets[p] >= 0

    def records(self, positions: Iterable[int]) -> Iterator[dict]:
        """The indexed records at ``positions`` (skipping missing ones), read back one at a time."""
        with open(self.path, "rb") as f:
            for p in positions:
                if self.offsets[p] >= 0:
                    f.seek(self.offsets[p])
                    yield json.loads(f.readline())

    def extra_records(self) -> Iterator[dict]:
        with open(self.path, "rb") as f:
            for at in self.extra.values():
                f.seek(at)
                yield json.loads(f.readline())


def _status(record: dict) -> int:
    if record.get("error"):
        return EpisodeIndex.ERRORED
    reward = record.get("reward")
    if reward is None:
        return EpisodeIndex.UNKNOWN
    return EpisodeIndex.PASSED if is_success(reward) else EpisodeIndex.FAILED


def rewrite_in_order(index: EpisodeIndex, size: int, feed: Optional[Callable[[dict], None]] = None) -> None:
    """Rewrite the indexed file atomically, one line per found position in order (then any extra keys), each
    record passed to ``feed`` on the way; unreadable lines are set aside first. Streams: one record in memory."""
    path = index.path
    if index.bad:  # the rewrite keeps only records: keep the rest beside it
        set_aside(path, index.bad, "unreadable lines found while writing the final file")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(fd, 0o666 & ~_umask())
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for record in index.records(range(size)):
                if feed is not None:
                    feed(record)
                out.write(dumps(record) + "\n")
            for record in index.extra_records():
                out.write(dumps(record) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class RunDir:
    """Paths and read/write helpers for one run directory."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.config = self.path / "config.json"
        self.episodes = self.path / "episodes.jsonl"
        self.timings = self.path / "timings.jsonl"
        self.summary = self.path / "summary.json"

    def read_config(self) -> Optional[dict]:
        if not self.config.exists():
            return None
        try:
            config = json.loads(self.config.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"{self.config} is not valid JSON ({e}); use another --out, or delete the folder "
                              "to start over") from None
        if not isinstance(config, dict):
            raise ConfigError(f"{self.config} is not a mua run config; use another --out")
        return config

    def config_missing_but_results_present(self) -> bool:
        """A folder with episodes or timings but no config.json is someone else's: never adopt it."""
        if self.config.exists():
            return False
        return any(p.exists() and p.stat().st_size > 0 for p in (self.episodes, self.timings))

    def read_episodes(self) -> dict[EpisodeKey, dict]:
        return latest_by_key(read_jsonl(self.episodes))

    def canonicalize(self, order: list[EpisodeKey]) -> None:
        """Rewrite episodes.jsonl and timings.jsonl atomically: one line per key, in ``order``."""
        for path in (self.episodes, self.timings):
            records, bad = read_records(path)
            if bad:  # the rewrite below keeps only records: keep the rest beside it
                set_aside(path, bad, "unreadable lines found while writing the final file")
            latest = latest_by_key(records)
            lines = [dumps(latest[k]) + "\n" for k in order if k in latest]
            known = set(order)
            lines += [dumps(v) + "\n" for k, v in latest.items() if k not in known]
            write_atomic(path, "".join(lines))
