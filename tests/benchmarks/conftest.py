"""Shared fixtures for the adapter tests: broken copies of data files, never touching the shared data."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

import pytest


def _link_children(src: Path, dst: Path) -> None:
    for entry in src.iterdir():
        (dst / entry.name).symlink_to(entry)


def _make_real(data_dir: Path, root: Path, relpath: str) -> Path:
    """Turn the symlinked folders on the way to ``relpath`` into real folders of links, and the file itself
    into a private copy that the test may edit or delete."""
    src, dst = Path(data_dir), root
    parts = Path(relpath).parts
    for part in parts[:-1]:
        src, dst = src / part, dst / part
        if dst.is_symlink():
            dst.unlink()
            dst.mkdir()
            _link_children(src, dst)
    src, dst = src / parts[-1], dst / parts[-1]
    if dst.is_symlink():
        dst.unlink()
        shutil.copyfile(src, dst)
    return dst


class ShadowData:
    """A data dir under tmp_path that links to the shared data, except the files a test copies to break."""

    def __init__(self, data_dir: Path, root: Path):
        self.data_dir, self.root = Path(data_dir), root
        root.mkdir()
        _link_children(self.data_dir, root)

    def path(self, relpath: str) -> Path:
        return _make_real(self.data_dir, self.root, relpath)

    def write(self, relpath: str, text: str) -> Path:
        path = self.path(relpath)
        path.write_text(text, encoding="utf-8")
        return path

    def remove(self, relpath: str) -> None:
        self.path(relpath).unlink()

    def edit_json(self, relpath: str, change: Callable[[object], object]) -> None:
        """``change(doc)`` edits the parsed document in place (its return value is ignored)."""
        path = self.path(relpath)
        doc = json.loads(path.read_text(encoding="utf-8"))
        change(doc)
        path.write_text(json.dumps(doc), encoding="utf-8")

    def edit_jsonl(self, relpath: str, number: int, change: Callable[[object], object] = lambda r: None,
                   replace: object = None) -> None:
        """Edit record ``number`` (1-based) of a JSON Lines file in place, or ``replace`` it with a value."""
        path = self.path(relpath)
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        change(rows[number - 1])
        if replace is not None:
            rows[number - 1] = replace
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def shadow(data_dir, tmp_path) -> ShadowData:
    return ShadowData(data_dir, tmp_path / "data")
