"""Rendering leaderboard rows: text tables (tabulate), tidy CSV, and a bar chart (matplotlib, optional)."""
from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Optional, Sequence

from ..errors import ConfigError
from .leaderboard import (
    FLAG_ORDER,
    FLAG_PROTOCOL,
    LEGEND,
    Row,
    display_label,
    fmt_cell,
    fmt_cost,
    has_costs,
    legend,
    protocol_refs,
)

# "plain" is tabulate's "simple" style: plain text with a rule under the header.
TABLE_FORMATS = {"plain": "simple", "github": "github"}
FORMATS = ("plain", "github", "csv")


WIDTH = 120  # a plain table's widest line, unless --wide
LABEL_WRAP = 40  # the model and source columns wrap here in a width-limited table


def render_table(rows: Sequence[Row], cols: Sequence[str], fmt: str, confidence: float,
                 width: Optional[int] = WIDTH) -> str:
    """The table and its notes. ``width``: a plain table wider than this is drawn in blocks of metric
    columns, each with the model and source columns (None: one table however wide; a GitHub table is always
    one, markdown renders it). The notes are sentences, left for the terminal to wrap."""
    header = ["model", "source"] + list(cols)
    refs = protocol_refs(rows)
    body = [[display_label(r, refs), r.source] + [fmt_cell(r.cells.get(c)) for c in cols] for r in rows]
    notes = legend(rows, cols, confidence)
    if has_costs(rows):  # the column only where some run recorded a cost
        header.append("$")
        body = [line + [fmt_cost(r)] for line, r in zip(body, rows)]
        notes.append("  $ = USD the row's runs cost (summary.json), ? = some model's price is unknown (mua eval "
                     "--prices)")
    if fmt == "github":  # keep the notes readable as markdown under the table
        table = _draw(header, body, fmt, list(range(len(header))))
        notes = [n.strip() if n.startswith("  ") else n for n in notes]
        return table + "\n\n" + "\n".join(f"- {n}" if i else n for i, n in enumerate(notes)) + "\n"
    table = _draw(header, body, fmt, list(range(len(header)))) if width is None else _blocks(header, body, fmt, width)
    return table + "\n\n" + "\n".join(notes) + "\n"


def _draw(header: list[str], body: list[list[str]], fmt: str, columns: list[int],
          wrap: Optional[int] = None) -> str:
    """The table of ``columns`` (indices); ``wrap``: the two label columns wrap at this many characters."""
    from tabulate import tabulate

    widths = [wrap if i < 2 else None for i in columns] if wrap else None
    return tabulate([[line[i] for i in columns] for line in body], headers=[header[i] for i in columns],
                    tablefmt=TABLE_FORMATS[fmt], disable_numparse=True, maxcolwidths=widths)


def _blocks(header: list[str], body: list[list[str]], fmt: str, width: int) -> str:
    """The table in as few blocks of metric columns as fit ``width`` (a column too wide for any block gets
    one of its own), each led by the model and source columns."""
    def fits(columns: list[int]) -> bool:
        return max(map(len, _draw(header, body, fmt, columns, LABEL_WRAP).splitlines())) <= width

    if fits(list(range(len(header)))):
        return _draw(header, body, fmt, list(range(len(header))), LABEL_WRAP)
    blocks: list[list[int]] = [[]]
    for i in range(2, len(header)):
        if blocks[-1] and not fits([0, 1] + blocks[-1] + [i]):
            blocks.append([])
        blocks[-1].append(i)
    return "\n\n".join(_draw(header, body, fmt, [0, 1] + b, LABEL_WRAP) for b in blocks)


def render_csv(rows: Sequence[Row], cols: Sequence[str]) -> str:
    """One line per (row, metric): easy to load into a spreadsheet or pandas. Percent, 4 decimals."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["model", "published", "source", "metric", "value", "ci_low", "ci_high", "n_tasks", "flags",
                "protocol"] + (["cost_usd"] if has_costs(rows) else []))
    pct = lambda x: "" if x is None else f"{100 * x:.4f}"  # noqa: E731
    for r in rows:
        for c in cols:
            cell = r.cells.get(c)
            if cell is None:
                continue
            w.writerow([r.label, "yes" if r.published else "no", r.source, c, pct(cell.value), pct(cell.low),
                        pct(cell.high), "" if cell.n is None else cell.n, cell.flags, " | ".join(r.protocol)]
                       + ([fmt_cost(r).replace("-", "")] if has_costs(rows) else []))
    return out.getvalue()


def render(rows: Sequence[Row], cols: Sequence[str], fmt: str, confidence: float = 0.95,
           width: Optional[int] = WIDTH) -> str:
    """The rows as ``fmt``; ``width``: a plain table's widest line (None: --wide; CSV is always complete)."""
    if fmt == "csv":
        return render_csv(rows, cols)
    if fmt in TABLE_FORMATS:
        return render_table(rows, cols, fmt, confidence, width)
    raise ConfigError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


PLOT_SUFFIXES = (".png", ".svg", ".svgz", ".pdf", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff", ".webp")


def check_plot_path(path: Path) -> None:
    """ConfigError naming --plot unless the file name says an image format the chart can be drawn in."""
    if Path(path).suffix.lower() not in PLOT_SUFFIXES:
        raise ConfigError(f"--plot {path}: the chart is an image; give a file name ending in "
                          f"{', '.join(PLOT_SUFFIXES)}")


def plot(rows: Sequence[Row], cols: Sequence[str], path: Path, confidence: float = 0.95) -> None:
    """Grouped bars, one group per metric column; measured bars carry their interval, published ones are
    hatched. The PNG carries no software-version metadata, so the same rows give the same file."""
    fig = figure(rows, cols, confidence)
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, metadata={"Software": None} if path.suffix.lower() == ".png" else None)
    plt.close(fig)


def _short(text: str) -> str:
    """A flag's meaning up to its first explanation, for the chart's footnote."""
    return text.split(" (")[0].split(":")[0]


def _draw_row(ax, r: Row, slots: list[tuple[float, str]], width: float, label: str) -> set[str]:
    """Row ``r``'s bars at the x positions of its columns in ``slots``, with their value marks and flags; the
    flags it wrote."""
    xs, ys, err_lo, err_hi, cells = [], [], [], [], []
    for x, c in slots:
        cell = r.cells.get(c)
        if cell is None:
            continue
        xs.append(x)
        ys.append(100 * cell.value)
        err_lo.append(0.0 if cell.low is None else 100 * (cell.value - cell.low))
        err_hi.append(0.0 if cell.high is None else 100 * (cell.high - cell.value))
        cells.append(cell)
    bars = ax.bar(xs, ys, width, label=label, hatch="//" if r.published else None,
                  alpha=0.6 if r.published else 0.9,
                  yerr=None if r.published else [err_lo, err_hi], capsize=2)
    color = bars.patches[0].get_facecolor() if bars.patches else None
    used: set[str] = set()
    for x, y, hi, cell in zip(xs, ys, err_hi, cells):
        text = ("0" if y == 0 else "") + (f" {cell.flags}" if cell.flags else "")
        used.update(cell.flags)
        if y == 0:  # a bar of height 0 is invisible: mark the value on the axis
            ax.plot([x], [0], marker="D", markersize=5, color=color, clip_on=False, zorder=3)
        if text.strip():
            ax.text(x, y + (0 if r.published else hi) + 1.5, text.strip(), ha="center", va="bottom",
                    fontsize=7, color="#b3261e" if cell.flags else "black", rotation=90 if cell.flags else 0)
    return used


def figure(rows: Sequence[Row], cols: Sequence[str], confidence: float = 0.95):
    """The chart as a matplotlib Figure. A 0 value gets a mark and a "0" label (a bar of height 0 would look
    missing); a cell's flags are written above its bar and a row's protocol footnote (†N) follows its name in
    the legend, as in the table; the flags used are explained under the chart."""
    try:
        import matplotlib
    except ImportError:
        raise ConfigError("--plot needs matplotlib: pip install 'mua[plot]' (or pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not rows or not cols:
        raise ConfigError("nothing to plot: no metric values in the given runs")
    width = 0.8 / len(rows)
    refs = protocol_refs(rows)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(cols) + 0.3 * len(rows)) + 3.0, 5.2))
    used: set[str] = set()
    for i, r in enumerate(rows):
        used.update(_draw_row(ax, r, [(j - 0.4 + width * (i + 0.5), c) for j, c in enumerate(cols)], width,
                              display_label(r, refs)))
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("percent")
    ax.set_ylim(0, 115)  # room for the flags above a bar at 100
    ax.set_title(f"error bars: {confidence:.0%} bootstrap interval over tasks; hatched: published, not measured",
                 fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: never hides bars
    notes = [f"{f} = {_short(LEGEND[f])}" for f in FLAG_ORDER if f in used]
    if refs:
        notes.append(f"{FLAG_PROTOCOL}N = run protocol departs from the official one (see the table)")
    if notes:
        fig.text(0.01, 0.01, "flags: " + "; ".join(notes), fontsize=7, ha="left", va="bottom", wrap=True)
    fig.tight_layout(rect=(0, 0.05 if notes else 0, 1, 1))
    return fig
