"""Where the tests find benchmark data: where `mua` finds it (harness/io/data.py: $MUA_DATA_DIR, ../shared/data
beside the working directory or the checkout, then the user cache `mua data pull` fills). Module-level
benchmark instances bind to :data:`DATA_DIR` (a placeholder when there is no data: the tests that use them
are skipped by the ``data_dir`` fixture)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from mua.harness.errors import DataError
from mua.harness.io.data import resolve_data_dir

REPO = Path(__file__).resolve().parents[2]


def find_data_dir() -> Optional[Path]:
    try:
        return resolve_data_dir()
    except DataError:
        return None


def find_real_dir() -> Path:
    """Real trajectories with official verdicts: $MUA_REAL_DIR, else ../shared/real beside the checkout."""
    return Path(os.environ.get("MUA_REAL_DIR") or REPO.parent / "shared" / "real")


DATA_DIR = find_data_dir() or REPO / "no-benchmark-data"
