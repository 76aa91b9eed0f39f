"""The leaderboard chart marks a 0 value (a mark and a "0" label, never just a missing bar) and carries the
table's flags: a cell's flags above its bar, a row's protocol footnote after its name, the flags explained."""
from __future__ import annotations

import pytest

from mua.harness.results.leaderboard import Cell, Row
from mua.harness.results.leaderboard_render import figure, plot


def _rows() -> list[Row]:
    measured = Row("model-a", False, "run-a", {"tau2/airline pass^1": Cell(0.0, 0.0, 0.0, 5, "t"),
                                              "tau2/retail pass^1": Cell(0.6, 0.4, 0.8, 114, "s")},
                   protocol=["run-a: user temperature 0.7 (official 0.0)"])
    published = Row("model-b", True, "published: x", {"tau2/airline pass^1": Cell(0.5),
                                                     "tau2/retail pass^1": Cell(0.0)})
    return [measured, published]


def test_zero_values_are_marked_and_flags_carried():
    pytest.importorskip("matplotlib", reason="the plot needs the 'plot' extra")
    fig = figure(_rows(), ["tau2/airline pass^1", "tau2/retail pass^1"])
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("0 t") == 1 and texts.count("0") == 1  # the measured 0 (flagged) and the published 0
    assert "s" in texts
    marks = [line for line in ax.lines if line.get_marker() == "D"]
    assert len(marks) == 2 and all(list(m.get_ydata()) == [0] for m in marks)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["model-a \u20201", "model-b (published)"]
    footnote = " ".join(t.get_text() for t in fig.texts)
    assert "s = some checks were skipped" in footnote and "t = run on a task selection" in footnote
    assert "\u2020N = run protocol departs" in footnote


def test_a_chart_without_zero_or_flags_has_no_marks(tmp_path):
    pytest.importorskip("matplotlib", reason="the plot needs the 'plot' extra")
    rows = [Row("m", False, "r", {"c": Cell(0.5, 0.4, 0.6, 10, "")})]
    fig = figure(rows, ["c"])
    assert not fig.axes[0].texts and not [x for x in fig.axes[0].lines if x.get_marker() == "D"] and not fig.texts
    plot(rows, ["c"], tmp_path / "board.png")
    assert (tmp_path / "board.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
