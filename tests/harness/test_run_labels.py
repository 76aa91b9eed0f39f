"""Runs in tables and gate messages carry a label no other shown run has (given with --label, else the shortest
distinguishing end of the path); plain tables fit 120 columns unless --wide; CSV stays complete."""
import csv
import io

import pytest

from mua.harness.cli import main
from mua.harness.errors import ConfigError
from mua.harness.results.runs import label_runs, read_run
from mua.harness.tools.sweep import leaderboard

RESULTS = {"retail": {f"r{i}": [1, 1, 0, 1] for i in range(4)}, "airline": {"a0": [1, 0, 1, 1]},
           "telecom": {"t0": [0, 1, 1, 1]}}


@pytest.fixture
def twins(make_run):
    """The same run folder name twice: results/baselines/tau2-retail and results/tau2-retail."""
    return (make_run("results/baselines/tau2-retail", "tau2", RESULTS, trials=4),
            make_run("results/tau2-retail", "tau2", RESULTS, trials=4))


def test_labels_are_the_shortest_distinguishing_path_ends(twins, make_run):
    other = make_run("results/other", "tau2", RESULTS, trials=4)
    runs = [read_run(p) for p in (*twins, other)]
    label_runs(runs)
    assert [r.name for r in runs] == ["baselines/tau2-retail", "results/tau2-retail", "other"]
    label_runs(runs, {twins[1]: "candidate"})
    assert [r.name for r in runs] == ["tau2-retail", "candidate", "other"]  # the given one no longer clashes


def test_bad_labels_are_refused_in_one_line(twins, tmp_path):
    runs = [read_run(p) for p in twins]
    with pytest.raises(ConfigError, match="--label names .*elsewhere, which is not one of the runs shown"):
        label_runs(runs, {tmp_path / "elsewhere": "x"})
    with pytest.raises(ConfigError, match="--label gives two runs the same label 'x'"):
        label_runs(runs, {twins[0]: "x", twins[1]: "x"})


def _table(capsys, *argv) -> str:
    assert main(["leaderboard", *argv, "--resamples", "50"]) == 0
    return capsys.readouterr().out


def test_twin_folders_print_as_two_rows_that_differ_and_fit_120_columns(twins, capsys):
    out = _table(capsys, *map(str, twins))
    rows = [line for line in out.splitlines() if line.startswith("model-a")]
    assert len(rows) % 2 == 0 and len(rows) >= 4  # blocks of columns, each with both rows, which differ
    assert all(rows[i] != rows[i + 1] for i in range(0, len(rows), 2))
    assert "baselines/tau2-retail" in rows[0] and "results/tau2-retail" in rows[1]
    assert max(map(len, out.split("Cells:")[0].splitlines())) <= 120  # the notes below are prose
    assert out.count("tau2/retail pass^4") == 1 and out.count("tau2/airline pass^1") == 1  # each column once

    wide = _table(capsys, *map(str, twins), "--wide")
    assert max(map(len, wide.splitlines())) > 120
    assert len([line for line in wide.splitlines() if line.startswith("model-a")]) == 2  # one table

    named = _table(capsys, *map(str, twins), "--label", f"{twins[1]}=candidate")
    assert "candidate" in named and "baselines" not in named.split("Cells:")[0]


def test_csv_keeps_every_column_and_the_labels(twins, capsys):
    out = _table(capsys, *map(str, twins), "--format", "csv")
    lines = list(csv.DictReader(io.StringIO(out)))
    assert {line["source"] for line in lines} == {"baselines/tau2-retail", "results/tau2-retail"}
    assert len(lines) == 2 * 12  # pass^1..4 of three subsets per run


def test_a_bad_label_flag_is_one_line(twins, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["leaderboard", str(twins[0]), "--label", "no-equals-sign"])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert "expected RUN=LABEL" in err and len(err.strip().splitlines()) == 1


def test_gate_names_the_runs_by_their_labels(twins, capsys):
    assert main(["gate", "--baseline", str(twins[0]), "--candidate", str(twins[1]), "--resamples", "50"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "candidate results/tau2-retail (model-a) vs baseline baselines/tau2-retail (model-a)" in first
    assert main(["gate", "--baseline", str(twins[0]), "--candidate", str(twins[1]), "--resamples", "50",
                 "--label", f"{twins[0]}=main"]) == 0
    assert "candidate tau2-retail (model-a) vs baseline main (model-a)" in capsys.readouterr().out


def test_the_sweep_table_fits_120_columns_unless_wide(twins):
    root = twins[1].parent
    table, unreadable = leaderboard(root, [])
    assert not unreadable and max(map(len, table.split("Cells:")[0].splitlines())) <= 120
    assert max(map(len, leaderboard(root, [], wide=True)[0].split("Cells:")[0].splitlines())) > 120
