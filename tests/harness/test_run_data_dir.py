"""A run records its data folder (config.json "data_dir"): `mua view`, `mua export` and `mua score` read a pack
run without --data-dir even where MUA_DATA_DIR names other data, refuse in one line when a file the run
recorded the checksum of changed, take an explicit --data-dir as it is, and read older runs as before."""
import json
import shutil
from pathlib import Path

import pytest

from mua.harness.cli import main
from mua.harness.results.store import RunDir
from mua.harness.run.plan import check_resumable

EXAMPLE = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/appointments"


@pytest.fixture
def pack_run(tmp_path, monkeypatch):
    """A gold run of two tasks of a copied pack, and MUA_DATA_DIR pointing at an unrelated (empty) folder."""
    pack = tmp_path / "pack"
    shutil.copytree(EXAMPLE, pack, ignore=shutil.ignore_patterns("__pycache__"))
    run = tmp_path / "run"
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(pack), "--agent", "gold", "--limit", "2",
                 "--out", str(run)]) == 0
    other = tmp_path / "other-data"
    other.mkdir()
    monkeypatch.setenv("MUA_DATA_DIR", str(other))
    return pack, run


def _commands(run: Path, out: Path) -> dict[str, list[str]]:
    return {"view": ["view", str(run), "--out", str(out / "view.html")],
            "export": ["export", str(run), "--format", "jsonl", "--out", str(out / "rows.jsonl")],
            "score": ["score", "--trajectories", str(run / "episodes.jsonl"), "--out", str(out / "scores.jsonl")]}


def test_a_run_records_its_data_folder_and_every_reader_finds_it(pack_run, tmp_path):
    pack, run = pack_run
    config = json.loads((run / "config.json").read_text())
    assert config["data_dir"] == str(pack.resolve())
    assert set(config["protocol"]["data"]["files"]) >= {"pack.json", "tasks.json", "db.json"}
    out = tmp_path / "out"
    out.mkdir()
    for name, argv in _commands(run, out).items():
        assert main(argv) == 0, name
    page = (out / "view.html").read_text()
    assert "no ground truth" not in page and "missing data file" not in page
    assert len((out / "rows.jsonl").read_text().splitlines()) == 2
    assert [json.loads(line)["reward"] for line in (out / "scores.jsonl").read_text().splitlines()] == [1.0, 1.0]


def test_changed_data_is_refused_in_one_line_naming_the_file(pack_run, tmp_path, capsys):
    pack, run = pack_run
    with open(pack / "tasks.json", "a", encoding="utf-8") as f:
        f.write("\n")
    out = tmp_path / "out"
    out.mkdir()
    for name, argv in _commands(run, out).items():
        capsys.readouterr()
        assert main(argv) == 2, name
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        assert "tasks.json" in err and "changed since the run" in err and "--data-dir" in err, err
        assert "Traceback" not in err
    assert not any(out.iterdir())  # nothing written


def test_a_missing_file_and_a_moved_folder_are_named(pack_run, tmp_path, capsys):
    pack, run = pack_run
    (pack / "policy.md").unlink()
    assert main(["view", str(run), "--out", str(tmp_path / "a.html")]) == 2
    assert "policy.md is missing" in capsys.readouterr().err
    pack.rename(tmp_path / "moved")
    assert main(["view", str(run), "--out", str(tmp_path / "b.html")]) == 2
    err = capsys.readouterr().err
    assert f"its data folder {pack.resolve()} is gone" in err and "is missing" in err


def test_an_explicit_data_dir_wins(pack_run, tmp_path):
    pack, run = pack_run
    moved = tmp_path / "moved"
    pack.rename(moved)
    out = tmp_path / "out"
    out.mkdir()
    for name, argv in _commands(run, out).items():
        assert main(argv + ["--data-dir", str(moved)]) == 0, name


def test_a_run_without_the_record_reads_data_as_before(pack_run, tmp_path, monkeypatch):
    pack, run = pack_run
    config = json.loads((run / "config.json").read_text())
    del config["data_dir"]
    (run / "config.json").write_text(json.dumps(config))
    monkeypatch.setenv("MUA_DATA_DIR", str(pack))
    with open(pack / "tasks.json", "a", encoding="utf-8") as f:
        f.write("\n")  # unchecked: the run recorded no folder to compare with
    out = tmp_path / "out"
    out.mkdir()
    assert main(_commands(run, out)["export"]) == 0


def test_a_moved_data_folder_does_not_stop_a_resume(pack_run, tmp_path):
    pack, run = pack_run
    config = json.loads((run / "config.json").read_text())
    check_resumable(RunDir(run), {**config, "data_dir": str(tmp_path / "elsewhere")})


def test_a_malformed_record_is_one_line(pack_run, tmp_path, capsys):
    _, run = pack_run
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**config, "data_dir": 3}))
    assert main(["export", str(run), "--format", "jsonl", "--out", str(tmp_path / "r.jsonl")]) != 0
    assert "data_dir" in capsys.readouterr().err
