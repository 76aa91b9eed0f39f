"""A pack run records the checksums of the pack's files (config.json protocol.data, as a benchmark run records
its data), so `mua gate` refuses to compare runs of two different packs."""
import json
import shutil
from pathlib import Path

from mua.harness.cli import main

EXAMPLE = Path(__file__).resolve().parents[3] / "benchmarks/pack/examples/bookings"


def pack_copy(folder: Path) -> Path:
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", "generate.py"))
    return folder


def gold_run(pack: Path, out: Path) -> Path:
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(pack), "--agent", "gold", "--limit", "4",
                 "--no-progress", "--out", str(out)]) == 0
    return out


def test_gate_refuses_two_different_packs(tmp_path, capsys):
    one, two = pack_copy(tmp_path / "one"), pack_copy(tmp_path / "two")
    tasks = json.loads((two / "tasks.json").read_text())
    tasks[0]["user_scenario"]["instructions"]["reason_for_call"] += " Quickly, please."
    (two / "tasks.json").write_text(json.dumps(tasks))
    a, b, c = gold_run(one, tmp_path / "a"), gold_run(two, tmp_path / "b"), gold_run(one, tmp_path / "c")
    data = json.loads((a / "config.json").read_text())["protocol"]["data"]
    assert sorted(data["files"]) == ["db.json", "pack.json", "policy.md", "splits.json", "tasks.json", "tools.py"]
    assert data["unpinned"] == []  # a pack has no pinned version to differ from: no warning on every run
    capsys.readouterr()
    assert main(["gate", "--baseline", str(a), "--candidate", str(b)]) == 1
    out = capsys.readouterr().out
    assert "different protocols (data: 1 file(s) differ (e.g. tasks.json))" in out, out
    assert main(["gate", "--baseline", str(a), "--candidate", str(c)]) == 0  # the same pack compares
