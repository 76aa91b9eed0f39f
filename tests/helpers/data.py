"""Where the tests find benchmark data: MUA_DATA_DIR, else ../shared/data beside the repo. Module-level
benchmark instances bind to :data:`DATA_DIR` (a placeholder when there is no data: the tests that use them
are skipped by the ``data_dir`` fixture)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[2]


def find_data_dir() -> Optional[Path]:
    env = os.environ.get("MUA_DATA_DIR")
    for candidate in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data"]:
        if candidate.is_dir():
            return candidate
    return None


DATA_DIR = find_data_dir() or REPO / "no-benchmark-data"
