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
from typing import Any, Callable, Iterable, Iterator, Optional

from ..errors import ConfigError, DataError
from ..io.files import field, read_bytes, type_name
from ..io.jsonl import BadLine, loads_line
from .episodes import Index, check_config_version
from .episodes import dumps as dumps  # the results' JSON form, imported from here too

log = logging.getLogger(__name__)


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` (or its pieces, streamed) via a temporary file in the same folder and rename: readers
    see the old or the new file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)  # read by setting it: put back at once
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes 0600; result files get the usual permissions
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            if isinstance(text, str):
                f.write(text)
            else:
                f.writelines(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    write_atomic(path, json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False) + "\n")


class JsonlAppender:
    """Appends one JSON object per line. ``append_line`` writes and flushes at once (the line survives a killed
    process); ``commit`` waits until an fsync covering that line has finished (it survives a machine crash).
    Concurrent committers share one fsync (group commit), run in a thread so the event loop keeps going."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._file = open(self.path, "a", encoding="utf-8")
        self.was_empty = not self._file.tell()  # a fresh file: what is appended is all it holds
        if not self.was_empty:  # a file to resume: its torn last line, if any, goes aside (appends go at the end)
            set_aside_torn_tail(self.path)
        self._written = 0  # lines written
        self._synced = 0  # lines covered by a finished fsync
        self._syncing: Optional[asyncio.Task] = None

    def append_line(self, line: str) -> None:
        """``line``: one JSON line already in the results form (``EpisodeRecord.to_line``, ``dumps``), no
        newline."""
        self._file.write(line + "\n")
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
    fresh line and nothing is lost. Reads only the file's end (back to the last newline), not the file."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        cut, step = size, 1 << 16
        while cut > 0:  # walk back block by block to the last newline
            start = max(0, cut - step)
            f.seek(start)
            block = f.read(cut - start)
            nl = block.rfind(b"\n")
            if nl >= 0:
                cut = start + nl + 1
                break
            cut = start
        f.seek(cut)
        set_aside(path, [f.read()], "its last line was cut short (a crash or a full disk mid-write)")
        f.truncate(cut)
        f.flush()
        os.fsync(f.fileno())


def rewrite_in_order(index: Index[Any], feed: Optional[Callable[[Any], None]] = None) -> None:
    """Rewrite the indexed file atomically, one line per found position in order (then any extra keys), each
    record passed to ``feed`` on the way; unreadable and superseded-invalid lines are set aside first.
    Streams: one record in memory. Each line is the record's own ``to_line()``: byte-identical to what was
    appended."""
    path = index.path
    if index.bad:  # the rewrite keeps only records: keep the rest beside it
        set_aside(path, [b.raw for b in index.bad], "unreadable lines found while writing the final file")
    if index.invalid_offsets:
        _set_aside_invalid(index)
    write_atomic(path, _lines_in_order(index, feed))


def _lines_in_order(index: Index[Any], feed: Optional[Callable[[Any], None]]) -> Iterator[str]:
    for record in index.records(range(index.size)):
        if feed is not None:
            feed(record)
        yield record.to_line() + "\n"
    for record in index.records():
        yield record.to_line() + "\n"


def _set_aside_invalid(index: Index[Any]) -> None:
    """Lines with invalid fields are not rewritten (a later line of their key, if any, wins): their bytes are
    kept beside the file."""
    lines = []
    with open(index.path, "rb") as f:
        for at in index.invalid_offsets:
            f.seek(at)
            lines.append(f.readline().rstrip(b"\r\n"))
    reasons = list(index.invalid.values())
    set_aside(index.path, lines, "lines with invalid fields found while writing the final file"
              + (f" (e.g. {reasons[0]})" if reasons else ""))


class RunDir:
    """Paths and read/write helpers for one run directory."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.config = self.path / "config.json"
        self.episodes = self.path / "episodes.jsonl"
        self.timings = self.path / "timings.jsonl"
        self.summary = self.path / "summary.json"

    def read_config(self) -> Optional[dict]:
        """config.json checked field by field (:func:`check_config`); None when the folder has none."""
        if not self.config.exists():
            return None
        return read_config(self.config)


def read_config(path: Path, required: tuple[str, ...] = ("benchmark",)) -> dict:
    """A run's config.json, its fields type-checked (:func:`check_config`): every failure is one ConfigError
    line naming the file and the field (a config.json of a newer record format is refused: see episodes.py)."""
    raw = read_bytes(path, what="run config")
    try:
        config = loads_line(raw)
    except BadLine as e:
        raise ConfigError(f"{path} is not valid JSON ({str(e).removeprefix('line ')}); use another --out, or "
                          "delete the folder to start over") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{path} is not a mua run config (found {type_name(config)}); use another --out")
    try:
        check_config(config, str(path), required)
    except DataError as e:
        raise ConfigError(str(e)) from None
    return config


def check_config(config: dict, where: str, required: tuple[str, ...] = ("benchmark",)) -> None:
    """The types of the config.json fields that readers use; DataError naming the first wrong one. Fields in
    ``required`` must be there (a reader of episodes needs "trials" and "tasks" too)."""
    check_config_version(config, where)
    for name in required:
        if name not in config:
            raise DataError(f"{where}: field {name!r} is missing")
    field(config, "benchmark", str, where=where)
    trials = field(config, "trials", int, where=where, default=1)
    if trials < 1:
        raise DataError(f"{where}: field 'trials' should be 1 or more, found {trials}")
    field(config, "seed", int, where=where, default=0)
    field(config, "split", str, where=where, default=None, nullable=True)
    _check_task_lists(config, where)
    _check_roles(config, where)
    field(config, "metrics", dict, where=where, default=None, nullable=True)
    field(config, "protocol", dict, where=where, default=None, nullable=True)
    field(config, "data_dir", str, where=where, default=None, nullable=True)
    _check_prices(config, where)


def _check_task_lists(config: dict, where: str) -> None:
    tasks = field(config, "tasks", dict, where=where, default={})
    for subset in tasks:
        ids = field(tasks, subset, list, where=f"{where}: tasks")
        if not all(isinstance(t, (str, int)) and not isinstance(t, bool) for t in ids):
            raise DataError(f"{where}: tasks of {subset!r} should be a list of task ids (text)")
    subsets = field(config, "subsets", list, where=where, default=None, nullable=True)
    if subsets is not None and not all(isinstance(s, str) for s in subsets):
        raise DataError(f"{where}: field 'subsets' should be a list of subset names (text)")


def _check_roles(config: dict, where: str) -> None:
    for role in ("agent", "user", "judge"):
        spec = field(config, role, dict, where=where, default=None, nullable=True)
        if spec is not None:
            field(spec, "name", str, where=f"{where}: {role}", default=None, nullable=True)
            field(spec, "params", dict, where=f"{where}: {role}", default=None, nullable=True)


def _check_prices(config: dict, where: str) -> None:
    prices = field(config, "prices", dict, where=where, default=None, nullable=True) or {}
    for role in prices:
        entry = field(prices, role, dict, where=f"{where}: prices", nullable=True)
        if entry is not None:
            field(entry, "price", dict, where=f"{where}: prices.{role}", default=None, nullable=True)
