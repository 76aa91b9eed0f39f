"""Reading benchmark data files with errors that say how to fix a missing or malformed file.

Adapters get a resolved data directory (see ``mua.harness.io.data``) and read through these helpers only.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError
from .files import parse_json, read_bytes, read_text
from .jsonl import BadLine, iter_raw_lines, loads_line

FIX_HINT = ("Point mua at the benchmark data folder with --data-dir or MUA_DATA_DIR (or place it at ../shared/data), "
            "or run `mua data pull` to fetch the files that have pinned upstream sources; files rebuilt or derived "
            "for mua (listed by `mua data pull` as having no upstream copy) come from a data folder or "
            "`mua data pull --mirror DIR_OR_URL`. `mua data verify` checks every file against its sha256.")


def require_file(data_dir: Path, relpath: str) -> Path:
    path = Path(data_dir) / relpath
    if not path.is_file():
        raise DataError(f"missing data file {relpath} (looked in {data_dir}). {FIX_HINT}")
    return path


def load_text(data_dir: Path, relpath: str) -> str:
    """A text data file (a policy, guidelines, TOML): DataError naming it when it is not UTF-8."""
    path = require_file(data_dir, relpath)
    try:
        return read_text(path, what="data file")
    except DataError as e:
        raise DataError(f"{e}; it may be corrupt. {FIX_HINT}") from None


def load_json(data_dir: Path, relpath: str) -> Any:
    """A whole JSON data file, read by the hardened reader (harness/io/files.py): DataError naming the file for
    bad syntax, undecodable bytes, nesting too deep, huge or non-finite numbers."""
    path = require_file(data_dir, relpath)
    try:
        return parse_json(read_bytes(path, what="data file"), where=f"data file {relpath}")
    except DataError as e:
        raise DataError(f"{e}; it may be corrupt. {FIX_HINT}") from None


def load_jsonl(data_dir: Path, relpath: str) -> list[Any]:
    """JSON Lines (BFCL and ACEBench files end in .json but hold one object per line)."""
    path = require_file(data_dir, relpath)
    rows = []
    for lineno, raw, _complete in iter_raw_lines(path):
        try:
            rows.append(loads_line(raw))
        except BadLine as e:
            raise DataError(f"data file {relpath}, line {lineno}: {e}. {FIX_HINT}") from None
    return rows
