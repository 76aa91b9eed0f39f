"""Headless Chromium for tests of the pages ``mua view`` writes: the DOM after the page's script ran, and a
screenshot. Standard library only; a fresh profile per call; bounded by a timeout."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         "--virtual-time-budget=10000"]  # lets the page's async work (unpacking an episode) finish first


def chromium() -> str:
    """The browser's path; skips the test when there is none, unless MUA_REQUIRE_BROWSER is set (CI sets it:
    there a missing browser is a failure, never a pass)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    if os.environ.get("MUA_REQUIRE_BROWSER"):
        pytest.fail("no chromium on PATH (apt-get install -y chromium) and MUA_REQUIRE_BROWSER is set")
    pytest.skip("no chromium on PATH (apt-get install -y chromium)")


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="mua-chromium-") as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                              text=True, timeout=timeout, check=True)


def dump_dom(page: Path, fragment: str = "", timeout: float = 120, size: Optional[tuple[int, int]] = None) -> str:
    """The serialised DOM of ``page`` (a file) after its script ran; ``fragment`` e.g. "ep=3"; ``size``: the
    window's width and height."""
    return dump_url(Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else ""), timeout, size)


def dump_url(url: str, timeout: float = 120, size: Optional[tuple[int, int]] = None) -> str:
    """The serialised DOM of the page at ``url`` (a file or a local server) after its script ran."""
    window = [f"--window-size={size[0]},{size[1]}"] if size else []
    return _run([*window, "--dump-dom", url], timeout).stdout


def screenshot(page: Path, out: Path, fragment: str = "", size: tuple[int, int] = (1280, 720),
               timeout: Optional[float] = 120) -> Path:
    url = Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else "")
    _run([f"--screenshot={Path(out).resolve()}", f"--window-size={size[0]},{size[1]}", "--hide-scrollbars", url],
         timeout or 120)
    return Path(out)
