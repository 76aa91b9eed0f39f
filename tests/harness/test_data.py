import hashlib

import pytest

from mua.harness.cli import main
from mua.harness.errors import DataError
from mua.harness.io import data


def test_explicit_dir_wins_and_missing_explicit_dir_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MUA_DATA_DIR", str(tmp_path))
    assert data.resolve_data_dir() == tmp_path.resolve()
    other = tmp_path / "other"
    other.mkdir()
    assert data.resolve_data_dir(str(other)) == other.resolve()
    with pytest.raises(DataError, match="--data-dir points to .*nope.*mua data pull"):
        data.resolve_data_dir(str(tmp_path / "nope"))
    monkeypatch.setenv("MUA_DATA_DIR", str(tmp_path / "gone"))
    with pytest.raises(DataError, match="MUA_DATA_DIR"):
        data.resolve_data_dir()


def test_verify_reports_missing_and_corrupt_files(tmp_path, data_dir):
    (tmp_path / "tau2" / "domains" / "mock").mkdir(parents=True)
    src = data_dir / "tau2" / "domains" / "mock"
    for name in ("db.json", "policy.md"):
        (tmp_path / "tau2/domains/mock" / name).write_bytes((src / name).read_bytes())
    (tmp_path / "tau2/domains/mock/policy.md").write_text("tampered")
    checks = {c.path: c.status for c in data.verify(tmp_path, "tau2/domains/mock/")}
    assert checks["tau2/domains/mock/db.json"] == "ok"
    assert checks["tau2/domains/mock/policy.md"] == "corrupt"
    assert checks["tau2/domains/mock/tasks.json"] == "missing"


def test_shared_data_matches_the_manifest(data_dir):
    bad = [c for c in data.verify(data_dir) if c.status != "ok"]
    assert not bad, bad


def test_pull_from_mirror_verifies_sha256_and_never_installs_a_bad_file(tmp_path, data_dir):
    mirror = tmp_path / "mirror"
    for rel in ("tau2/domains/mock/db.json", "tau2/domains/mock/policy.md"):
        (mirror / rel).parent.mkdir(parents=True, exist_ok=True)
        (mirror / rel).write_bytes((data_dir / rel).read_bytes())
    (mirror / "tau2/domains/mock/policy.md").write_text("evil")
    dest = tmp_path / "cache"
    results = {c.path: c for c in data.pull(dest, mirror=str(mirror), prefix="tau2/domains/mock/")}
    assert results["tau2/domains/mock/db.json"].status == "ok"
    assert results["tau2/domains/mock/policy.md"].status == "corrupt"
    assert results["tau2/domains/mock/tasks.json"].status == "missing"
    assert not (dest / "tau2/domains/mock/policy.md").exists()
    digest = hashlib.sha256((dest / "tau2/domains/mock/db.json").read_bytes()).hexdigest()
    assert digest == next(e for e in data.load_manifest()["files"] if e["path"].endswith("mock/db.json"))["sha256"]


def test_pull_from_upstream_uses_pinned_sources(tmp_path):
    seen = []

    def fake_fetch(url):
        seen.append(url)
        raise OSError("offline")

    results = data.pull(tmp_path, fetch=fake_fetch, prefix="tau2/domains/retail/policy.md")
    assert results[0].status == "missing" and "download failed" in results[0].detail
    assert seen == ["https://raw.githubusercontent.com/sierra-research/tau2-bench/"
                    "a2c024725189473d2d7cea3a5cfdbcc67478e41f/data/tau2/domains/retail/policy.md"]
    derived = data.pull(tmp_path, fetch=fake_fetch, prefix="bfcl_v3/default_states.json")
    assert derived[0].status == "missing" and "no upstream copy" in derived[0].detail


def test_cli_data_path_and_verify(data_dir, capsys):
    assert main(["data", "path", "--data-dir", str(data_dir)]) == 0
    assert capsys.readouterr().out.strip() == str(data_dir.resolve())
    assert main(["data", "verify", "--data-dir", str(data_dir), "--only", "acebench/"]) == 0
    assert "ok" in capsys.readouterr().out


def test_manifest_is_well_formed():
    files = data.load_manifest()["files"]
    assert len(files) == len({e["path"] for e in files}) == 74
    assert all(len(e["sha256"]) == 64 and e["bytes"] > 0 for e in files)
    pullable = [e for e in files if e.get("upstream_copy") is not False]
    assert all(e["upstream_path"] and e["source"].split(":")[0] in ("github", "pypi") for e in pullable)
    assert all(e.get("commit") for e in pullable if e["source"].startswith("github:"))
