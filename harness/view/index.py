"""``mua view FOLDER``: one page listing every run below a folder (benchmark, split, model, headline scores,
date, episodes, flags), each linked to its own `mua view` page, which is written beside it as
``RUN/view.html``.

The page is static HTML with no script (its Content-Security-Policy allows none): every value is escaped
on the way in, so a run or model name cannot add markup. The same rows ride along as JSON in a
``<script type="application/json">`` block (data, never run) for tools that read the page.
A run that cannot be read is listed with the reason instead of stopping the page.
"""
from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from ..errors import ConfigError, MuaError
from ..results.results_api import find_runs, load_run

STYLE = """body{font:13px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{padding:8px 12px;background:#24292f;color:#fff}header h1{font-size:15px;margin:0}
main{padding:8px 12px}table{border-collapse:collapse}th,td{padding:3px 8px;border-bottom:1px solid #e3e3e3;
text-align:left;vertical-align:top}th{background:#f3f3f3}td.num{font-variant-numeric:tabular-nums}
.flag{color:#b3261e}.note{color:#8a6d00}h2{font-size:14px;margin:14px 0 4px}"""


def page(title: str, body: str, data: Any = None) -> str:
    """A static page (no script may run): ``body`` is HTML already escaped; ``data`` rides along as JSON."""
    from .page import safe_json

    blob = (f'<script type="application/json" id="data">{safe_json(data)}</script>\n' if data is not None else "")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
            f"<title>{esc(title)}</title>\n<style>{STYLE}</style></head>\n<body>\n<header><h1>{esc(title)}</h1>"
            f"</header>\n<main>\n{body}</main>\n{blob}</body></html>\n")


def esc(text: Any) -> str:
    from .page import LONE_SURROGATE

    return html.escape(LONE_SURROGATE.sub("\ufffd", str(text)), quote=True)


def link(href: str, text: str) -> str:
    return f'<a href="{esc(href)}">{esc(text)}</a>'


@dataclass
class RunEntry:
    """One row of the index: a run below the folder and what the leaderboard says of it."""

    path: str  # relative to the folder, with /
    page: Optional[str]  # its view page, relative to the index page; None when it was not written
    benchmark: str = ""
    split: Optional[str] = None
    subsets: list[str] = field(default_factory=list)
    model: str = ""
    date: str = ""
    finished: int = 0
    expected: int = 0
    scores: dict[str, str] = field(default_factory=dict)  # column -> the leaderboard's cell text
    flags: list[str] = field(default_factory=list)  # problems, protocol departures, an unreadable run


def entry(folder: Path, run_path: Path, page_path: Optional[Path], here: Path) -> RunEntry:
    """``here``: the folder the index page is written to (its links are relative to it)."""
    from ..results.leaderboard import fmt_cell

    rel = run_path.relative_to(folder).as_posix() or "."
    href = Path(os.path.relpath(page_path.resolve(), here.resolve())).as_posix() if page_path is not None else None
    out = RunEntry(rel, href)
    try:
        run = load_run(run_path)
        out.benchmark, out.split, out.subsets, out.model = run.benchmark, run.split, run.subsets, run.model
        out.date = run.date.strftime("%Y-%m-%d %H:%M UTC")
        out.finished, out.expected = run.run.finished, run.run.expected_episodes
        out.scores = {column: fmt_cell(cell) for column, cell in run.cells.items()}
        out.flags = run.problems + [f"protocol departs: {d}" for d in run.protocol_departures]
    except MuaError as e:
        out.flags = [f"unreadable: {e}"]
    return out


def render_index(folder: Path, entries: list[RunEntry]) -> str:
    columns = list(dict.fromkeys(c for e in entries for c in e.scores))
    head = "".join(f"<th>{esc(h)}</th>" for h in
                   ["run", "benchmark", "split", "subsets", "model", *columns, "episodes", "date", "flags"])
    rows = []
    for e in entries:
        name = link(e.page, e.path) if e.page else esc(e.path)
        cells = [name, esc(e.benchmark), esc(e.split or ""), esc(", ".join(e.subsets)), esc(e.model),
                 *(f'<td class="num">{esc(e.scores.get(c, "-"))}' for c in columns),
                 f'<td class="num">{e.finished}/{e.expected}', esc(e.date),
                 "<br>".join(f'<span class="flag">{esc(f)}</span>' for f in e.flags)]
        rows.append('<tr class="run">' + "".join(c if c.startswith("<td") else f"<td>{c}" for c in cells) + "</tr>")
    body = (f'<p id="count" data-total="{len(entries)}">{len(entries)} runs below {esc(folder)}</p>\n'
            f"<table><thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody></table>\n"
            '<p class="note">Cells as `mua leaderboard` prints them: value [95% bootstrap interval over tasks] '
            "n=tasks, percent. Errored episodes and unknown (null) rewards are never scored; they are flagged.</p>\n")
    return page(f"mua view: runs below {folder}", body, [e.__dict__ for e in entries])


def write_index(folder: Path, out: Optional[Path] = None,
                write_run_page: Optional[Callable[[Path], Path]] = None) -> tuple[Path, int]:
    """Write ``out`` (default FOLDER/index.html) listing every run below ``folder``; ``write_run_page`` writes
    one run's page and returns where (None: the runs are listed without pages). Returns (page, runs)."""
    from ..results.store import write_atomic

    runs = find_runs(folder)
    if not runs:
        raise ConfigError(f"{folder} is neither a run directory (config.json, episodes.jsonl written by `mua eval`) "
                          "nor a training output directory (metrics.jsonl, samples/ written by `mua train`), and "
                          "holds no run directory below it")
    out = out or folder / "index.html"
    entries = [entry(folder, r, _page_of(r, write_run_page), out.parent) for r in runs]
    write_atomic(out, render_index(folder, entries))
    return out, len(entries)


def _page_of(run: Path, write_run_page: Optional[Callable[[Path], Path]]) -> Optional[Path]:
    if write_run_page is None:
        return None
    try:
        return write_run_page(run)
    except MuaError:  # the row says why the run is unreadable; the other pages are still written
        return None
