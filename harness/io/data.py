"""Where benchmark data lives, checking it, and pulling it from the pinned upstream sources.

Search order: --data-dir, then $MUA_DATA_DIR, then ../shared/data (next to the working directory or to this
checkout), then the user cache ($XDG_CACHE_HOME/mua/data, default ~/.cache/mua/data) that `mua data pull` fills.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

from ..errors import DataError
from .datafiles import FIX_HINT
from .files import parse_json

MANIFEST = Path(__file__).with_name("data_manifest.json")
REPO_ROOT = Path(__file__).resolve().parents[2]


def mua_cache() -> Path:
    """mua's user cache: $XDG_CACHE_HOME/mua, default ~/.cache/mua (data, fetched model files)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")) / "mua"


def cache_dir() -> Path:
    return mua_cache() / "data"


def candidates() -> Iterator[tuple[str, Path]]:
    """(origin, folder) in search order after --data-dir, each made only when the ones before it were not
    found."""
    if os.environ.get("MUA_DATA_DIR"):
        yield "MUA_DATA_DIR", Path(os.environ["MUA_DATA_DIR"])
    yield "../shared/data", Path.cwd().parent / "shared" / "data"
    yield "../shared/data (beside the checkout)", REPO_ROOT.parent / "shared" / "data"
    yield "user cache", cache_dir()


def resolve_data_dir(explicit: Optional[str] = None) -> Path:
    """The first existing data directory in search order. An explicit --data-dir or MUA_DATA_DIR that does not
    exist is an error rather than silently falling through to another copy."""
    # a folder named with --data-dir is the only one looked at: it is found or an error, never searched past
    for origin, path in [("--data-dir", Path(explicit))] if explicit else candidates():
        if path.is_dir():
            return path.resolve()
        if origin in ("--data-dir", "MUA_DATA_DIR"):
            raise DataError(f"{origin} points to {path}, which is not a directory. {FIX_HINT}")
    tried = ", ".join(dict.fromkeys(str(p.resolve()) for _, p in candidates()))
    raise DataError(f"no benchmark data found (tried {tried}). {FIX_HINT}")


def load_manifest() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class FileCheck:
    path: str
    status: str  # ok | missing | corrupt
    detail: str = ""


def verify(data_dir: Path, prefix: str = "") -> list[FileCheck]:
    """Check every manifest file (optionally only those under ``prefix``) against its size and sha256."""
    checks = []
    for entry in load_manifest()["files"]:
        if not entry["path"].startswith(prefix):
            continue
        path = Path(data_dir) / entry["path"]
        if not path.is_file():
            checks.append(FileCheck(entry["path"], "missing"))
        elif (digest := sha256_of(path)) != entry["sha256"]:
            checks.append(FileCheck(entry["path"], "corrupt",
                                    f"sha256 {digest[:12]}…, expected {entry['sha256'][:12]}…"))
        else:
            checks.append(FileCheck(entry["path"], "ok"))
    return checks


Fetch = Callable[[str], bytes]


def _http_fetch(url: str) -> bytes:
    import urllib.request  # lazy, as zipfile below: only `mua data pull` fetches (every run resolves its data)

    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 (pinned https sources)
        return response.read()


def _source_url(entry: dict, mirror: Optional[str]) -> Optional[str]:
    """Where one file comes from. A mirror (a directory or URL laid out like the data folder) wins."""
    if mirror:
        return mirror.rstrip("/") + "/" + entry["path"]
    if entry.get("upstream_copy") is False:
        return None  # rebuilt or derived here: upstream has no copy at the pinned commit
    src = entry["source"]
    if src.startswith("github:"):
        return f"https://raw.githubusercontent.com/{src[len('github:'):]}/{entry['commit']}/{entry['upstream_path']}"
    if src.startswith("pypi:"):
        return "wheel:" + src[len("pypi:"):]
    return None


def _wheel_member(spec: str, member: str, fetch: Fetch, wheels: dict) -> bytes:
    if spec not in wheels:
        name, version = spec.split("==")
        index = parse_json(fetch(f"https://pypi.org/pypi/{name}/{version}/json"), where=f"PyPI index of {spec}")
        url = next(u["url"] for u in index["urls"] if u["packagetype"] == "bdist_wheel")
        import zipfile

        wheels[spec] = zipfile.ZipFile(io.BytesIO(fetch(url)))
    return wheels[spec].read(member)


def pull(dest: Path, *, mirror: Optional[str] = None, fetch: Optional[Fetch] = None,
         prefix: str = "", progress: Optional[Callable[[str, str], None]] = None) -> list[FileCheck]:
    """Fill ``dest`` with every manifest file that is missing or corrupt there, verifying each sha256 before it
    is moved into place (a bad download never replaces anything). Returns one check per file."""
    fetch = fetch or (_read_local if mirror and "://" not in mirror else _http_fetch)
    wheels: dict = {}
    results = []
    for entry in load_manifest()["files"]:
        if not entry["path"].startswith(prefix):
            continue
        target = Path(dest) / entry["path"]
        if target.is_file() and sha256_of(target) == entry["sha256"]:
            results.append(FileCheck(entry["path"], "ok", "already present"))
            continue
        url = _source_url(entry, mirror)
        if url is None:
            results.append(FileCheck(entry["path"], "missing", "no upstream copy at the pinned commit (rebuilt or "
                                     "derived for mua); copy it from a machine that has the data folder"))
            continue
        try:
            blob = (_wheel_member(url[len("wheel:"):], entry["upstream_path"], fetch, wheels)
                    if url.startswith("wheel:") else fetch(url))
        except Exception as e:  # network or archive trouble: report it per file, keep going
            results.append(FileCheck(entry["path"], "missing", f"download failed: {e}"))
            continue
        if hashlib.sha256(blob).hexdigest() != entry["sha256"]:
            results.append(FileCheck(entry["path"], "corrupt", f"downloaded file does not match sha256 ({url})"))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".part")
        tmp.write_bytes(blob)
        os.replace(tmp, target)
        results.append(FileCheck(entry["path"], "ok", "pulled"))
        if progress:
            progress(entry["path"], "pulled")
    return results


def _read_local(path: str) -> bytes:
    return Path(path).read_bytes()

