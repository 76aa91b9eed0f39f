"""Reading benchmark data files with errors that say how to fix a missing or malformed file.

Adapters get a resolved data directory (see ``mua.harness.data``) and read through these helpers only.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import DataError

FIX_HINT = ("Point mua at the benchmark data folder with --data-dir or MUA_DATA_DIR (or place it at ../shared/data), "
            "or run `mua data pull` to fetch the files that have pinned upstream sources; files rebuilt or derived "
            "for mua (listed by `mua data pull` as having no upstream copy) come from a data folder or "
            "`mua data pull --mirror DIR_OR_URL`. `mua data verify` checks every file against its sha256.")


def require_file(data_dir: Path, relpath: str) -> Path:
    path = Path(data_dir) / relpath
    if not path.is_file():
        raise DataError(f"missing data file {relpath} (looked in {data_dir}). {FIX_HINT}")
    return path


def load_json(data_dir: Path, relpath: str) -> Any:
    path = require_file(data_dir, relpath)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(f"data file {relpath} is not valid JSON ({e}); it may be corrupt. {FIX_HINT}") from None


def load_jsonl(data_dir: Path, relpath: str) -> list[Any]:
    """JSON Lines (BFCL and ACEBench files end in .json but hold one object per line)."""
    path = require_file(data_dir, relpath)
    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise DataError(f"data file {relpath}, line {lineno}: not valid JSON ({e}). {FIX_HINT}") from None
    return rows
