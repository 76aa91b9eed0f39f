"""The test command finds the data as `mua` does and ends with one line counting the skipped tests by reason."""
from __future__ import annotations

from types import SimpleNamespace

from conftest import pytest_terminal_summary
from helpers.data import find_data_dir

from mua.harness.io.data import resolve_data_dir


class _Reporter:
    def __init__(self, skipped):
        self.stats = {"skipped": skipped} if skipped else {}
        self.lines: list[str] = []

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def _skip(reason: str) -> SimpleNamespace:
    return SimpleNamespace(longrepr=("tests/x.py", 3, f"Skipped: {reason}"))


def test_one_line_counts_skips_by_reason():
    reporter = _Reporter([_skip("real trajectories not found"), _skip("needs vllm"),
                          _skip("real trajectories not found")])
    pytest_terminal_summary(reporter)
    assert reporter.lines == ["skipped 3: 2 real trajectories not found; 1 needs vllm"]
    none = _Reporter([])
    pytest_terminal_summary(none)
    assert none.lines == ["skipped: none"]


def test_tests_find_the_data_where_mua_does(tmp_path, monkeypatch):
    monkeypatch.setenv("MUA_DATA_DIR", str(tmp_path))
    assert find_data_dir() == resolve_data_dir() == tmp_path.resolve()
    monkeypatch.setenv("MUA_DATA_DIR", str(tmp_path / "missing"))
    assert find_data_dir() is None  # mua refuses a MUA_DATA_DIR that is not there; the tests skip (or fail in CI)
