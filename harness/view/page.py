"""``mua view``: one self-contained HTML page for a run directory (or two, compared), or a training output.

The page needs no server, network or CDN. The table rows are embedded as JSON; each episode's conversation
and score detail is gzipped and base64-encoded separately and only decoded when it is opened, so a run of
10,000 episodes stays small and opens fast. Everything a model wrote is data: it is embedded as JSON with
``<``, ``>``, ``&``, U+2028/2029 and lone surrogates escaped, and the page renders it with ``textContent``.

Explanations (why an episode scored what it scored) come from the adapter's ``Benchmark.explain`` reading
the stored row; when the adapter is not installed, the generic default names the failed components. A run
also gets its headline panel (view_headline: the leaderboard's cells) and, with the benchmark's data at hand,
each task's ground truth, the end-state difference and each turn's request (view_ground). A folder is a run
or a training output by what it holds (``source_kind``). view_watch serves the page while a run goes on.
"""
from __future__ import annotations

import base64
import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from ..errors import ConfigError
from ..interfaces import Benchmark
from ..io.files import read_bytes, read_json
from ..io.jsonl import BadLine, loads_line
from ..results.episodes import latest_episodes
from ..results.stats import is_success
from .ground import GroundTruth
from .panel import headline

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
    headline: Optional[dict] = None  # a run's leaderboard cells, models, protocol departures (view_headline)
    ground: Optional[GroundTruth] = None  # the benchmark opened on its data: task info, end-state diffs
    steps: list[dict] = field(default_factory=list)  # a training run's reward spread per step
    packed: dict[str, str] = field(default_factory=dict)  # packed details by row text (kept while watching)


def explainer(benchmark: str) -> Explain:
    from ..registry import benchmark_class

    try:
        return benchmark_class(benchmark).explain
    except (ConfigError, ImportError):
        return Benchmark.explain


def source_kind(path: Path) -> Optional[str]:
    """"run" or "training", by what the folder holds: episode rows make a run (and so does a run's config.json
    before its first episode); training metrics or samples make a training output, whose saved model's
    config.json must not make it look like a run."""
    if (path / "episodes.jsonl").is_file():
        return "run"
    if (path / "metrics.jsonl").is_file() or (path / "samples").is_dir() or (path / "train_config.json").is_file():
        return "training"
    if (path / "config.json").is_file():
        config = read_json(path / "config.json", what="run config", expect=dict)
        if "benchmark" in config and "tasks" in config:
            return "run"
    return None


def load_source(path: Path, data_dir: Optional[Path] = None, ground: bool = True) -> Source:
    """The run or training output at ``path``. ``ground``: open the run's benchmark on ``data_dir`` (default:
    the data folder the run recorded, else the usual data directory search) to show each task's ground truth;
    without it, or without the data, the page says so and shows the episodes alone."""
    path = Path(path)
    kind = source_kind(path) if path.is_dir() else None
    if kind == "training":
        return _training_source(path)
    if kind != "run":
        raise ConfigError(f"{path} is neither a run directory (config.json, episodes.jsonl written by `mua eval`) "
                          "nor a training output directory (metrics.jsonl, samples/ written by `mua train`)")
    config = read_json(path / "config.json", what="run config", expect=dict)
    benchmark = str(config.get("benchmark") or "")
    source = Source(path.name, "run", episode_rows(path), explainer(benchmark) if benchmark else Benchmark.explain,
                    headline=headline(path, config))
    if ground:
        source.ground, why = GroundTruth.open(config, data_dir, path)
        if why:
            source.notes.append(why)
    return source


def episode_rows(path: Path) -> list[dict]:
    episodes = path / "episodes.jsonl"
    return [r.to_json() for r in latest_episodes(episodes)[0].values()]  # a missing file: no rows


# samples/step-<step>.jsonl (each row carries its "round"); runs of older mua: step-<step>.<round>.jsonl
SAMPLE_FILE = re.compile(r"step-(\d+)(?:\.(\d+))?\.jsonl")


def sample_files(path: Path) -> list[tuple[int, Optional[int], Path]]:
    """(step, round, file) of a training output's sample files, in step then round order (integers: step 10
    after step 9; round None: the rows name theirs); files named otherwise are not samples."""
    found = []
    for f in (path / "samples").glob("step-*.jsonl"):
        if m := SAMPLE_FILE.fullmatch(f.name):
            found.append((int(m.group(1)), int(m.group(2)) if m.group(2) else -1, f))
    return [(step, None if round_ < 0 else round_, f) for step, round_, f in sorted(found)]


def _training_source(path: Path) -> Source:
    metrics = _read_lines(path / "metrics.jsonl")
    rows = []
    per_step: dict[int, list[dict]] = {}
    for step, round_, sample_file in sample_files(path):
        for sample in _read_lines(sample_file):
            trial = len(per_step.setdefault(step, []))
            per_step[step].append(sample)
            key = str(sample.get("key") or f"sample {trial}")
            rows.append({"subset": step, "task_id": key, "trial": trial, "reward": sample.get("reward"),
                         "components": {}, "termination": sample.get("termination"),
                         "turns": sample.get("turns"), "messages": sample.get("messages") or [],
                         "usage": {"generated_tokens": sample.get("generated_tokens")},
                         "info": {"round": sample.get("round") if round_ is None else round_,
                                  **{k: v for k, v in sample.items()
                                                      if k not in ("messages", "key", "reward")}},
                         "error": sample.get("error")})
    notes = []
    curves = None
    from .curves import CURVES_PNG, render_curves  # matplotlib is optional; the viewer says so when missing

    png = path / CURVES_PNG
    if png.is_file():  # what training drew; redrawn from metrics.jsonl only when it is missing
        curves = read_bytes(png, what="training curves")
    elif metrics:
        try:
            curves = render_curves(metrics)
        except ImportError:
            notes.append("training curves need matplotlib (pip install 'mua[plot]'); the metrics table is below")
    if not rows:
        notes.append("no samples yet: samples/step-<step>.jsonl is written after each rollout "
                     "(samples_per_step > 0)")
    return Source(path.name, "training", rows, curves_png=curves, metrics=metrics, notes=notes,
                  steps=[_spread(step, samples) for step, samples in sorted(per_step.items())])


def _spread(step: int, samples: list[dict]) -> dict:
    """The reward spread of one step's written samples (samples_per_step of each rollout, not all of them:
    metrics.jsonl has the means over every episode). Unknown rewards are counted, never taken as 0."""
    rewards = [float(s["reward"]) for s in samples if _number(s.get("reward")) is not None]
    mean = sum(rewards) / len(rewards) if rewards else None
    std = (sum((r - mean) ** 2 for r in rewards) / len(rewards)) ** 0.5 if mean is not None else None
    return {"step": step, "samples": len(samples), "unknown": len(samples) - len(rewards), "mean": mean,
            "std": std, "min": min(rewards) if rewards else None, "max": max(rewards) if rewards else None,
            "passed": sum(1 for s in samples if s.get("passed") is True)}


def _read_lines(path: Path) -> list[dict]:
    out: list[dict] = []
    if not path.is_file():
        return out
    with open(path, "rb") as f:
        for line in f:
            try:
                value = loads_line(line)
            except BadLine:
                continue  # a torn last line of a run still in progress (or a damaged one)
            if isinstance(value, dict):
                out.append(value)
    return out


# -- the payload --------------------------------------------------------------------------------------------
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def safe_json(value: Any) -> str:
    """JSON that can sit inside a <script> element and is valid UTF-8 whatever a model wrote. A lone surrogate
    (invalid Unicode a model emitted) becomes U+FFFD, as a browser would show it; Chromium's DOM
    serialisation even crashes on one kept as is."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    text = LONE_SURROGATE.sub("\ufffd", text)
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


def _detail(row: dict, source: Source) -> dict:
    components: dict = row["components"] if isinstance(row.get("components"), dict) else {}
    info: dict = row["info"] if isinstance(row.get("info"), dict) else {}
    try:
        why = [str(line) for line in source.explain(components, info)]
    except Exception as e:  # an adapter's explain must never stop the page from being written
        why = [f"(the adapter's explanation failed: {type(e).__name__}: {e})"]
    detail = {"messages": row.get("messages") or [], "components": components, "info": info, "why": why,
              "usage": row.get("usage"), "seed": row.get("seed"), "error": row.get("error"),
              "termination": row.get("termination"), "reward": _number(row.get("reward"))}
    if source.ground is not None:
        detail.update(source.ground.episode(row))
    return detail


def _packed_detail(row: dict, source: Source) -> str:
    """The row's packed detail, made once per row text (a watched run rebuilds only its new rows)."""
    text = safe_json(row)
    if text not in source.packed:
        source.packed[text] = _packed(_detail(row, source))
    return source.packed[text]


def _key(row: dict) -> tuple[Any, str, int]:
    trial, subset = row.get("trial"), row.get("subset")
    return (subset if isinstance(subset, int) else str(subset), str(row.get("task_id")),
            trial if isinstance(trial, int) else 0)


def build_payload(sources: list[Source]) -> dict:
    """Table rows (one per (subset, task, trial) across the sources) and each source's packed details, task
    descriptions and shared request parts."""
    keys: dict[tuple[Any, str, int], list[Optional[int]]] = {}
    runs = []
    for n, source in enumerate(sources):
        details: list[str] = []
        tasks: dict[str, str] = {}
        for row in source.rows:
            keys.setdefault(_key(row), [None] * len(sources))[n] = len(details)
            details.append(_packed_detail(row, source))
            subset, task_id = str(row.get("subset")), str(row.get("task_id"))
            if source.ground is not None and f"{subset}/{task_id}" not in tasks:
                tasks[f"{subset}/{task_id}"] = _packed(source.ground.describe(subset, task_id))
        runs.append({"label": source.label, "kind": source.kind, "details": details, "notes": source.notes,
                     "metrics": source.metrics, "headline": source.headline, "steps": source.steps,
                     "tasks": tasks, "blobs": [_packed(b) for b in source.ground.blobs] if source.ground else [],
                     "curves": base64.b64encode(source.curves_png).decode("ascii") if source.curves_png else None})
    summaries = [[_summary(row) for row in source.rows] for source in sources]
    rows = []
    for (subset, task, trial), where in keys.items():
        per_run = [summaries[n][i] if i is not None else None for n, i in enumerate(where)]
        rows.append({"subset": subset, "task": task, "trial": trial, "at": where, "runs": per_run})
    return {"runs": runs, "rows": rows}


def render_page(sources: list[Source], watch: Optional[dict] = None) -> str:
    """The page. ``watch``: {"version": ..., "poll_ms": ...} when a local server (view_watch) serves it: the page
    then asks that server for newer payloads (the only connection it may make: to its own origin)."""
    title = _html_text("mua view: " + " vs ".join(s.label for s in sources))
    payload = build_payload(sources)
    if watch:
        payload["watch"] = watch
    head, tail = PAGE.split("__DATA__")
    connect = "connect-src 'self'" if watch else "connect-src 'none'"
    head = head.replace("__TITLE__", title).replace("__CONNECT__", connect)
    return head + safe_json(payload) + tail


def _html_text(text: str) -> str:
    text = LONE_SURROGATE.sub("\ufffd", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def check_sources(paths: list[Path]) -> None:
    if not 1 <= len(paths) <= 2:
        raise ConfigError("give one run directory, or two to compare")


def write_view(paths: list[Path], out: Path, data_dir: Optional[Path] = None, ground: bool = True) -> Path:
    from ..results.store import write_atomic

    check_sources(paths)
    if out.is_dir():
        raise ConfigError(f"--out {out} is a directory; give a file name")
    if not out.parent.is_dir():
        raise ConfigError(f"--out {out}: folder {out.parent} does not exist")
    page = render_page([load_source(p, data_dir, ground) for p in paths])
    write_atomic(out, page)
    return out
