"""One line of ``episodes.jsonl`` as a typed record that writes its own line, and the one reader of such files
(and of ``mua score``'s trajectory lines): a single streaming pass that every consumer (resume, summary,
leaderboard, gate, view, export, score) uses.

Versioning. A line is written with exactly the keys it always had (same order, same :func:`dumps`), so
files stay byte-identical to those of earlier mua versions and to the committed baselines. A record format
that changes meaning later says so with a ``"record_version"`` key on each line (and in ``config.json``);
absent means version 1, the format described here. A line or a config.json of a newer version than
:data:`RECORD_VERSION` is refused with one line: guessing at a future format could score it wrongly.

Reading. A line is read with the rules of :mod:`harness.io.jsonl` and then its fields are type-checked. A line
that cannot be read at all (torn, garbled, not a JSON object, no episode key) is *unreadable*; a line whose
key is fine but whose fields are not (a reward of ``"abc"`` or ``1e309``, a trial of ``true``) is *invalid*
and keeps its key, so the episode counts as finished but unscorable and the reason names file, line and
field. Neither stops the read: per-line files isolate bad lines. The latest line of a key wins (a resume
appends re-run episodes after the ones they replace).
"""
from __future__ import annotations

import json
import math
from array import array
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, Callable, Generic, Iterator, Mapping, Optional, TypeVar, cast

from ..errors import DataError
from ..io.files import field, type_name
from ..io.jsonl import BadLine, loads_line
from .stats import is_success

RECORD_VERSION = 1  # the newest episode-record format this mua reads and writes
# A reward or score component beyond this size is no score (they are fractions or small counts); it is refused
# so that sums over many episodes and the bootstrap's resampled means cannot overflow to infinity.
MAX_SCORE = 1e12
VERSION_KEY = "record_version"

EpisodeKey = tuple[str, str, int]  # (subset, task_id, trial)
R = TypeVar("R")


def dumps(obj: Any) -> str:
    """The one JSON form used in result files: stable, compact, non-ASCII kept. Text that is not valid
    Unicode (a lone surrogate from a model's output) is written \\u-escaped, so the line stays valid UTF-8."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text


class InvalidRecord(ValueError):
    """A line that is a JSON object with an episode key but a field of the wrong type or value."""

    def __init__(self, key: Optional[EpisodeKey], reason: str):
        super().__init__(reason)
        self.key = key


@dataclass(frozen=True)
class EpisodeRecord:
    """One finished episode. ``row`` is the JSON object exactly as it is (or will be) on its line: writing it
    back (``to_line``) reproduces the line byte for byte, extra keys of other versions included."""

    benchmark: Optional[str]
    subset: str
    task_id: str
    trial: int
    seed: Optional[int]
    reward: Optional[float]  # None: unknown (errored, or a check the verdict depends on was skipped)
    components: dict[str, Optional[float]]
    termination: Optional[str]
    turns: int
    messages: list[dict]
    usage: dict
    info: dict
    error: Optional[str]
    row: dict
    version: int = RECORD_VERSION  # the record format (VERSION_KEY on the line; absent: 1)

    @property
    def key(self) -> EpisodeKey:
        return (self.subset, self.task_id, self.trial)

    def to_json(self) -> dict:
        """The record as the JSON object on its line (for a page that embeds records as data)."""
        return self.row

    def to_line(self) -> str:
        """The record's line, without its newline: the same bytes it was read from or first written as."""
        return dumps(self.row)

    @classmethod
    def new(cls, *, benchmark: str, subset: str, task_id: str, trial: int, seed: int, reward: Optional[float],
            components: dict, termination: Optional[str], turns: int, messages: list[dict], usage: dict,
            info: dict, error: Optional[str]) -> "EpisodeRecord":
        """A record as ``mua eval`` writes it; the key order here is the order on the line."""
        row = {"benchmark": benchmark, "subset": subset, "task_id": task_id, "trial": trial, "seed": seed,
               "reward": reward, "components": components, "termination": termination, "turns": turns,
               "messages": messages, "usage": usage, "info": info, "error": error}
        if RECORD_VERSION > 1:  # version-1 lines carry no version key: they stay byte-identical to older files
            row[VERSION_KEY] = RECORD_VERSION
        return cls(benchmark, subset, task_id, trial, seed, reward, components, termination, turns, messages,
                   usage, info, error, row)

    @classmethod
    def from_json(cls, obj: Any, where: str) -> "EpisodeRecord":
        """Check a parsed line; InvalidRecord (key kept when it could be read) or, for a line of a newer
        format, DataError (the whole file is refused)."""
        if not isinstance(obj, dict):
            raise InvalidRecord(None, f"{where}: expected a JSON object, found {type_name(obj)}")
        key = _key(obj, where)
        version = obj.get(VERSION_KEY, 1)
        if type(version) is int and version > RECORD_VERSION:  # a wrong type is an invalid field, below
            raise _newer(where, version)
        try:
            version = _get(obj, VERSION_KEY, int, where, 1, nullable=False)
            reward = _get(obj, "reward", float, where)
            reward = None if reward is None else float(reward)
            components = _get(obj, "components", dict, where) or {}
            for name, value in chain((("reward", reward),), components.items()):
                if value is not None and type(value) is not float:
                    value = field(components, name, float, where=f"{where}: components", nullable=True)
                # finite and within ±MAX_SCORE (a lenient parse may bring infinity)
                if value is not None and not (math.isfinite(value) and abs(value) <= MAX_SCORE):
                    raise DataError(f"{where}: field {name!r} is not a number within ±{MAX_SCORE:g} "
                                    f"(found {value:g})")
            # checked in the order they always were: a line with several bad fields is named as before
            benchmark, seed = _get(obj, "benchmark", str, where), _get(obj, "seed", int, where)
            termination, turns = _get(obj, "termination", str, where), _get(obj, "turns", int, where) or 0
            messages = _get(obj, "messages", list, where) or []
            for i, m in enumerate(messages):
                if not isinstance(m, dict):
                    raise DataError(f"{where}: messages[{i}] should be an object, found {type_name(m)}")
            return cls(
                benchmark=benchmark,
                subset=key[0], task_id=key[1], trial=key[2],
                seed=seed,
                reward=reward,
                components={str(k): (None if v is None else float(v)) for k, v in components.items()},
                termination=termination,
                turns=turns,
                messages=messages,
                usage=_get(obj, "usage", dict, where) or {},
                info=_get(obj, "info", dict, where) or {},
                error=_error_text(obj, where),
                row=obj,
                version=version,
            )
        except DataError as e:
            raise InvalidRecord(key, str(e)) from None


_EXACT: dict[Any, tuple[type, ...]] = {float: (float, int), int: (int,), str: (str,), dict: (dict,),
                                      list: (list,), (str, int): (str, int)}


def _get(obj: Mapping[str, Any], name: str, expected: Any, where: str, default: Any = None,
         nullable: bool = True) -> Any:
    """``obj[name]`` (``default`` when absent) if its type is ``expected`` (exactly: true is no number), else
    files.field's DataError naming the field. The exact-type test first keeps reading a long file fast."""
    value = obj.get(name, default)
    if (value is None and nullable) or type(value) in _EXACT[expected]:
        return value
    return field(obj, name, expected, where=where, default=default, nullable=nullable)


def _key(obj: Mapping[str, Any], where: str) -> EpisodeKey:
    try:
        subset = _get(obj, "subset", str, where, ..., nullable=False)
        task_id = _get(obj, "task_id", (str, int), where, ..., nullable=False)
        trial = _get(obj, "trial", int, where, ..., nullable=False)
    except DataError as e:
        raise InvalidRecord(None, str(e)) from None
    if trial < 0:
        raise InvalidRecord(None, f"{where}: field 'trial' should be 0 or more, found {trial}")
    return (subset, str(task_id), trial)


def _error_text(obj: Mapping[str, Any], where: str) -> Optional[str]:
    """The error field: text, or null/absent/empty for none (old files wrote "" for none at times)."""
    error = obj.get("error")
    if error is None or error == "" or error is False:
        return None
    if not isinstance(error, str):
        raise DataError(f"{where}: field 'error' should be a string or null, found {type_name(error)}")
    return error


# Status codes of an indexed episode (what resume and the progress bar need without reading the line again).
MISSING, PASSED, FAILED, UNKNOWN, ERRORED, INVALID = range(6)


def status_of(record: EpisodeRecord) -> int:
    if record.error:
        return ERRORED
    if record.reward is None:
        return UNKNOWN
    return PASSED if is_success(record.reward) else FAILED


@dataclass(frozen=True)
class BadLine_:
    """A line the reader could not use: its bytes (for setting aside), 1-based number and reason."""

    lineno: int
    raw: bytes
    reason: str
    complete: bool  # False: a last line without its newline (a write cut short)


def parse_line(raw: bytes, where: str, parse: Callable[[Any, str], R]) -> R:
    """One complete line through the JSON rules and ``parse``; InvalidRecord with the reason otherwise. A line
    with NaN, Infinity or an overflowing number is read again leniently so that its key is known (the
    episode is then finished but invalid, not missing)."""
    try:
        obj = loads_line(raw)
    except BadLine as e:
        try:
            lenient = loads_line(raw, strict=False)
            key = _key(lenient, where) if isinstance(lenient, dict) else None
        except (BadLine, InvalidRecord):
            key = None
        raise InvalidRecord(key, f"{where}: {e}") from None
    return parse(obj, where)


def scan(path: Path, parse: Callable[[Any, str], R], *, where: Optional[Callable[[int], str]] = None,
         appended: bool = True) -> Iterator[tuple[int, int, R | BadLine_ | InvalidRecord]]:
    """THE reader of episode files: (byte offset, line number, what the line holds) for each non-blank line,
    in file order, one line in memory at a time. What it holds is ``parse``'s value, an InvalidRecord (a line
    with a key but bad fields) or a BadLine_ (no usable key). ``where(lineno)`` names a line in the reasons
    (default: ``PATH line N``). ``appended``: a file mua appends to, whose last line without its newline was
    cut short by a crash; False: a file written whole (``mua score``'s input), whose last line may lack it."""
    offset = 0
    with _open(path) as f:
        for lineno, raw in enumerate(f, 1):
            at, offset = offset, offset + len(raw)
            body = raw.rstrip(b"\r\n")
            if not body.strip():
                continue
            here = where(lineno) if where is not None else f"{path} line {lineno}"
            if appended and not raw.endswith(b"\n"):
                yield at, lineno, BadLine_(lineno, body, f"{here}: cut short (a crash or a full disk mid-write)",
                                           False)
                continue
            try:
                yield at, lineno, parse_line(body, here, parse)
            except InvalidRecord as e:
                yield at, lineno, (e if e.key is not None else BadLine_(lineno, body, str(e), True))


def _open(path: Path) -> Any:
    try:
        return open(path, "rb")
    except IsADirectoryError:
        raise DataError(f"{path} is a folder, not a results file") from None
    except OSError as e:
        raise DataError(f"cannot read {path}: {e.strerror or e}") from None


class Positions:
    """Episode positions 0..size-1 in config order (subset, task, trial), computed instead of listed, so a run
    of 100,000 episodes holds one entry per task, not per episode."""

    def __init__(self, tasks: dict[str, list[str]], trials: int):
        self.trials = trials
        self.slot = {(s, t): i for i, (s, t) in enumerate((s, t) for s, ids in tasks.items() for t in ids)}
        self.size = len(self.slot) * trials

    def position(self, key: EpisodeKey) -> Optional[int]:
        i = self.slot.get((key[0], key[1]))
        return None if i is None or not 0 <= key[2] < self.trials else i * self.trials + key[2]


class Index(Generic[R]):
    """Where the latest line of each episode lies in a file, from one :func:`scan`. Expected episodes
    (``position(key)`` in 0..size-1) get one file offset and a status byte each, so memory is proportional to
    the episode count, not the file; other keys (``extra``) are kept by offset in a dict. A key whose latest
    line is invalid has status INVALID and its reason in ``invalid``. ``canonical`` says the file is already
    one valid line per expected position, in order, with nothing else: rewriting it would change nothing."""

    def __init__(self, path: Path, parse: Callable[[Any, str], R], status: Callable[[R], int],
                 position: Optional[Callable[[EpisodeKey], Optional[int]]] = None, size: int = 0,
                 in_order: Optional[Callable[[R], None]] = None):
        """``in_order`` is given each record while the file is still canonical so far; when ``canonical``
        holds at the end it has seen every record once, in order (a finished run is then read only once)."""
        self.path = Path(path)
        self.parse = parse
        self.size = size
        self.offsets = array("q", [-1]) * size
        self.status = bytearray(size)
        self.extra: dict[EpisodeKey, tuple[int, int]] = {}  # key -> (offset, status), unexpected keys
        self.invalid: dict[EpisodeKey, str] = {}  # key -> reason, where the key's latest line is invalid
        self.invalid_offsets: list[int] = []  # every invalid line, superseded or not (set aside on a rewrite)
        self.bad: list[BadLine_] = []
        self.lines = 0
        ordered = True
        if not self.path.exists():
            self.ordered, self.canonical = True, size == 0
            return
        for at, _lineno, item in scan(self.path, parse):
            if isinstance(item, BadLine_):
                self.bad.append(item)
                ordered = False
                continue
            key = cast(EpisodeKey, item.key)  # type: ignore[union-attr]  # R has a key; scan keeps keyless lines as BadLine_
            code = INVALID if isinstance(item, InvalidRecord) else status(item)
            if isinstance(item, InvalidRecord):
                self.invalid[key] = str(item)
                self.invalid_offsets.append(at)
            else:
                self.invalid.pop(key, None)
            p = position(key) if position is not None else None
            if p is None:
                self.extra[key] = (at, code)
                ordered = False
                continue
            ordered = ordered and p == self.lines and code != INVALID
            if ordered and in_order is not None:
                in_order(item)  # type: ignore[arg-type]  # not an InvalidRecord: code != INVALID
            self.lines += 1
            self.offsets[p] = at
            self.status[p] = code
        self.ordered = ordered  # ``in_order`` saw every line, each key once (nothing unreadable, extra or invalid)
        self.canonical = ordered and self.lines == size

    def records(self, positions: Any = None) -> Iterator[R]:
        """The valid indexed records at ``positions`` (missing and invalid ones skipped), read back one by one;
        without ``positions``, those of the extra keys."""
        if positions is None and not self.extra:
            return
        places = (self.extra.values() if positions is None else
                  ((self.offsets[p], self.status[p]) for p in positions if self.offsets[p] >= 0))
        with _open(self.path) as f:
            for at, code in places:
                if code != INVALID:
                    f.seek(at)
                    yield parse_line(f.readline().rstrip(b"\r\n"), f"{self.path}", self.parse)


def episode_index(path: Path, position: Optional[Callable[[EpisodeKey], Optional[int]]] = None,
                  size: int = 0, in_order: Optional[Callable[[EpisodeRecord], None]] = None
                  ) -> Index[EpisodeRecord]:
    """The index of an episodes file (see :class:`Index`); a line of a newer format raises DataError."""
    return Index(path, EpisodeRecord.from_json, status_of, position, size, in_order)


def latest_episodes(path: Path) -> tuple[dict[EpisodeKey, EpisodeRecord], Index[EpisodeRecord]]:
    """The latest valid record of every episode in the file, in first-seen order, and the index (its ``bad``
    and ``invalid`` say what was left out and why). A missing file has no episodes."""
    index = episode_index(path)
    return {r.key: r for r in index.records()}, index


@dataclass(frozen=True)
class KeyedRow:
    """A line of a file keyed like episodes but holding something else (timings.jsonl): its key and object."""

    key: EpisodeKey
    row: dict

    def to_line(self) -> str:
        return dumps(self.row)

    @classmethod
    def from_json(cls, obj: Any, where: str) -> "KeyedRow":
        if not isinstance(obj, dict):
            raise InvalidRecord(None, f"{where}: expected a JSON object, found {type_name(obj)}")
        return cls(_key(obj, where), obj)


def keyed_index(path: Path, position: Callable[[EpisodeKey], Optional[int]], size: int) -> Index[KeyedRow]:
    return Index(path, KeyedRow.from_json, lambda r: PASSED, position, size)


def check_config_version(config: Mapping[str, Any], where: str) -> None:
    """Refuse a run whose config.json says its records are of a newer format than this mua reads."""
    version = field(config, VERSION_KEY, int, where=where, default=1)
    if version > RECORD_VERSION:
        raise _newer(where, version)


def _newer(where: str, version: int) -> DataError:
    """A line or config.json of a newer record format than this mua reads: the whole file is refused."""
    return DataError(f"{where}: written by a newer mua (record version {version}; this mua reads up to "
                     f"{RECORD_VERSION}): upgrade mua to read it")
