"""A pack whose gold agent no longer passes under the current user says so in one line: by `mua tasks` and
before training starts."""
import json
import shutil
from pathlib import Path

from mua.benchmarks.pack.benchmark import PackBenchmark
from mua.harness.cli import main
from mua.harness.tools.gold_check import gold_check

BOOKINGS = Path(__file__).resolve().parents[2] / "benchmarks" / "pack" / "examples" / "bookings"


def broken_pack(tmp_path: Path, broken: int) -> Path:
    """Four bookings tasks; the first ``broken`` ask in template questions the scripted user does not answer."""
    pack = tmp_path / "pack"
    shutil.copytree(BOOKINGS, pack)
    tasks = json.loads((pack / "tasks.json").read_text())[:4]
    for task in tasks[:broken]:
        task["user_scenario"]["replies"][0]["ask"] = "Is name? Is sit? Is time?"
    (pack / "tasks.json").write_text(json.dumps(tasks))
    (pack / "splits.json").write_text(json.dumps({"test": [t["id"] for t in tasks]}))
    return pack


def test_the_line_counts_passes_and_names_the_first_failure(tmp_path):
    pack = broken_pack(tmp_path, 2)
    bench = PackBenchmark(pack)
    check = gold_check(bench, bench.load_tasks("tasks"))
    assert (check.passed, check.total, check.unknown) == (2, 4, 0)
    assert check.line().startswith("gold 2 of 4: the gold agent fails 2 with the current user (first book-000)")


def test_mua_tasks_says_gold_n_of_m(tmp_path, capsys):
    assert main(["tasks", "pack", "--data-dir", str(broken_pack(tmp_path, 0))]) == 0
    assert "  gold 4 of 4 tasks pass with the gold agent and the current user" in capsys.readouterr().out.splitlines()
    assert main(["tasks", "--data-dir", str(broken_pack(tmp_path / "b", 3))]) == 0
    assert "gold 1 of 4 tasks pass with the gold agent and the current user: the gold agent fails 3" in \
        capsys.readouterr().out
