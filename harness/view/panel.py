"""The headline panel of `mua view`: the run's leaderboard cells (value, interval, tasks, flags), the models
of each role and where the run's protocol departs from the benchmark's official one.

It is the leaderboard's own reading of the run (runs.read_run, leaderboard.build_rows and its formatting),
called here and nowhere else in the viewer, so the page and `mua leaderboard` always agree."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import MuaError

ROLES = ("agent", "user", "judge")


def headline(path: Path, config: dict) -> dict[str, Any]:
    """{"cells": [{"column", "text", "value", "low", "high", "n", "flags"}], "legend": [...], "models": {role:
    label}, "protocol": [departures], "cost": the run's cost line (summary.json) or None, "users": the user
    audit's line (summary.json) or None, "error": why the cells are missing, or None}."""
    from ..results.cost import cost_text, recorded_block
    from ..results.leaderboard import build_rows, columns, declarations, fmt_cell, legend
    from ..results.runs import read_run, spec_label
    from ..users.audit import summary_text

    models = {role: spec_label(config.get(role)) for role in ROLES if isinstance(config.get(role), dict)}
    block = recorded_block(path)
    users = recorded_block(path, "users")
    out: dict[str, Any] = {"cells": [], "legend": [], "models": models, "protocol": [], "error": None,
                           "cost": cost_text(block) if block is not None else None,
                           "users": summary_text(users) if users is not None else None}
    try:
        run = read_run(path)
        rows = build_rows([run])
    except MuaError as e:  # a damaged or foreign run: the episodes are still worth showing
        out["error"] = f"no leaderboard cells: {e}"
        return out
    cols = columns(rows, detail=False, decls=declarations([run]))
    for row in rows:
        for col in cols:
            cell = row.cells.get(col)
            if cell is not None:
                out["cells"].append({"column": col, "text": fmt_cell(cell), "value": cell.value, "low": cell.low,
                                     "high": cell.high, "n": cell.n, "flags": cell.flags})
        out["protocol"] += row.protocol
    out["legend"] = legend(rows, cols, 0.95)[1:]  # the first line explains the cell format, shown as a title
    return out
