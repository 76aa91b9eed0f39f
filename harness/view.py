"""``mua view``: one self-contained HTML page for a run directory (or two, compared), or a training output.

The page needs no server, network or CDN. The table rows are embedded as JSON; each episode's conversation
and score detail is gzipped and base64-encoded separately and only decoded when it is opened, so a run of
10,000 episodes stays small and opens fast. Everything a model wrote is data: it is embedded as JSON with
``<``, ``>``, ``&``, U+2028/2029 and lone surrogates escaped, and the page renders it with ``textContent``.

Explanations (why an episode scored what it scored) come from the adapter's ``Benchmark.explain`` reading
the stored row; when the adapter is not installed, the generic default names the failed components.
"""
from __future__ import annotations

import base64
import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from .errors import ConfigError
from .jsonl import BadLine, loads_line
from .interfaces import Benchmark
from .results import latest_by_key, read_jsonl
from .stats import is_success

PAGE = (Path(__file__).parent / "view_page.html").read_text(encoding="utf-8")
Explain = Callable[[dict, dict], list]


@dataclass
class Source:
    """One thing to show: a run directory or a training output directory."""

    label: str
    kind: str  # "run" or "training"
    rows: list[dict]  # episode rows (keys of episodes.jsonl)
    explain: Explain = Benchmark.explain
    curves_png: Optional[bytes] = None
    metrics: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _explainer(benchmark: str) -> Explain:
    from .registry import benchmark_class

    try:
        return benchmark_class(benchmark).explain
    except (ConfigError, ImportError):
        return Benchmark.explain


def load_source(path: Path) -> Source:
    path = Path(path)
    if (path / "config.json").is_file():
        try:
            config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(f"{path / 'config.json'} is not valid JSON ({e})") from None
        rows = list(latest_by_key(read_jsonl(path / "episodes.jsonl")).values())
        benchmark = str(config.get("benchmark") or "") if isinstance(config, dict) else ""
        return Source(path.name, "run", rows, _explainer(benchmark) if benchmark else Benchmark.explain)
    if (path / "metrics.jsonl").is_file() or (path / "samples").is_dir():
        return _training_source(path)
    raise ConfigError(f"{path} is neither a run directory (config.json, episodes.jsonl written by `mua eval`) nor "
                      "a training output directory (metrics.jsonl, samples/ written by `mua train`)")


def _training_source(path: Path) -> Source:
    metrics = _read_lines(path / "metrics.jsonl")
    rows = []
    steps = sorted(path.glob("samples/step-*.jsonl"), key=lambda p: _step_number(p.stem))
    for sample_file in steps:
        step = _step_number(sample_file.stem)
        for i, sample in enumerate(_read_lines(sample_file)):
            key = str(sample.get("key") or f"sample {i}")
            rows.append({"subset": f"step {step}", "task_id": key, "trial": i, "reward": sample.get("reward"),
                         "components": {}, "termination": sample.get("termination"),
                         "turns": sample.get("turns"), "messages": sample.get("messages") or [],
                         "usage": {"generated_tokens": sample.get("generated_tokens")},
                         "info": {k: v for k, v in sample.items() if k not in ("messages", "key", "reward")},
                         "error": sample.get("error")})
    notes = []
    curves = None
    from .curves import CURVES_PNG, render_curves  # matplotlib is optional; the viewer says so when missing

    try:
        curves = render_curves(metrics) if metrics else None
    except ImportError:
        png = path / CURVES_PNG
        if png.is_file():
            curves = png.read_bytes()
        else:
            notes.append("training curves need matplotlib (pip install 'mua[plot]'); the metrics table is below")
    return Source(path.name, "training", rows, curves_png=curves, metrics=metrics, notes=notes)


def _step_number(stem: str) -> int:
    digits = stem.rsplit("-", 1)[-1]
    return int(digits) if digits.isdigit() else -1


def _read_lines(path: Path) -> list[dict]:
    out: list[dict] = []
    if not path.is_file():
        return out
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                value = loads_line(line)
            except BadLine:
                continue  # a torn last line of a run still in progress (or a damaged one)
            if isinstance(value, dict):
                out.append(value)
    return out


# -- the payload --------------------------------------------------------------------------------------------
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def safe_json(value: Any) -> str:
    """JSON that can sit inside a <script> element and is valid UTF-8 whatever a model wrote. A lone surrogate
    (invalid Unicode a model emitted) becomes U+FFFD, as a browser would show it; Chromium's DOM
    serialisation even crashes on one kept as is."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    text = _LONE_SURROGATE.sub("\ufffd", text)
    return re.sub("[<>&\u2028\u2029]", lambda m: _UNSAFE[m.group()], text)


def _packed(value: Any) -> str:
    raw = safe_json(value).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def _tokens(usage: Any) -> Optional[int]:
    if not isinstance(usage, dict):
        return None
    if isinstance(usage.get("generated_tokens"), int):
        return usage["generated_tokens"]
    agent = usage.get("agent") or {}
    total = [agent.get("prompt_tokens"), agent.get("completion_tokens")]
    return sum(t for t in total if isinstance(t, int)) if any(isinstance(t, int) for t in total) else None


def _number(value: Any) -> Optional[float]:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _summary(row: dict) -> dict:
    reward = _number(row.get("reward"))
    return {"reward": reward, "pass": None if reward is None else is_success(reward),
            "termination": row.get("termination"), "turns": row.get("turns"), "tokens": _tokens(row.get("usage")),
            "error": row.get("error")}


def _detail(row: dict, explain: Explain) -> dict:
    components: dict = row["components"] if isinstance(row.get("components"), dict) else {}
    info: dict = row["info"] if isinstance(row.get("info"), dict) else {}
    try:
        why = [str(line) for line in explain(components, info)]
    except Exception as e:  # an adapter's explain must never stop the page from being written
        why = [f"(the adapter's explanation failed: {type(e).__name__}: {e})"]
    return {"messages": row.get("messages") or [], "components": components, "info": info, "why": why,
            "usage": row.get("usage"), "seed": row.get("seed"), "error": row.get("error"),
            "termination": row.get("termination"), "reward": _number(row.get("reward"))}


def _key(row: dict) -> tuple[str, str, int]:
    trial = row.get("trial")
    return (str(row.get("subset")), str(row.get("task_id")), trial if isinstance(trial, int) else 0)


def build_payload(sources: list[Source]) -> dict:
    """Table rows (one per (subset, task, trial) across the sources) and each source's packed details."""
    keys: dict[tuple[str, str, int], list[Optional[int]]] = {}
    runs = []
    for n, source in enumerate(sources):
        details: list[str] = []
        for row in source.rows:
            keys.setdefault(_key(row), [None] * len(sources))[n] = len(details)
            details.append(_packed(_detail(row, source.explain)))
        runs.append({"label": source.label, "kind": source.kind, "details": details, "notes": source.notes,
                     "metrics": source.metrics,
                     "curves": base64.b64encode(source.curves_png).decode("ascii") if source.curves_png else None})
    summaries = [[_summary(row) for row in source.rows] for source in sources]
    rows = []
    for (subset, task, trial), where in keys.items():
        per_run = [summaries[n][i] if i is not None else None for n, i in enumerate(where)]
        rows.append({"subset": subset, "task": task, "trial": trial, "at": where, "runs": per_run})
    return {"runs": runs, "rows": rows}


def render_page(sources: list[Source]) -> str:
    title = _html_text("mua view: " + " vs ".join(s.label for s in sources))
    head, tail = PAGE.split("__DATA__")
    return head.replace("__TITLE__", title) + safe_json(build_payload(sources)) + tail


def _html_text(text: str) -> str:
    text = _LONE_SURROGATE.sub("\ufffd", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def write_view(paths: list[Path], out: Path) -> Path:
    from .results import write_atomic

    if not 1 <= len(paths) <= 2:
        raise ConfigError("give one run directory, or two to compare")
    page = render_page([load_source(p) for p in paths])
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name")
    if not out.parent.is_dir():
        raise ConfigError(f"--out {out}: folder {out.parent} does not exist")
    write_atomic(out, page)
    return out
