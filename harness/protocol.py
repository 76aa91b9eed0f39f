"""A benchmark's official run protocol, as its adapter declares it, and the protocol a run actually used.

The adapter fills a :class:`RunProtocol` (``Benchmark.protocol``) with what the benchmark's own runner does
by default: the request parameters each role sends (agent, user simulator, judge), whether a seed goes with
every request, the default user-simulator and judge models, the budgets, the trials its leaderboard asks for,
and which data files make up the benchmark. ``mua eval`` starts from it; flags override a value, and every
override is recorded. ``config.json`` holds the result under ``"protocol"`` (:func:`record`): the values used,
the official ones, the overrides and the data checksums. The leaderboard and the gate read that record only
(:func:`differences`), so reading results needs neither the adapter nor the data.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional

ROLES = ("agent", "user", "judge")


@dataclass(frozen=True)
class RoleProtocol:
    """What one role sends with every request. ``params`` go into the request body as they are (temperature,
    top_p, max_tokens, store, ...); a param set to None is not sent at all (e.g. ``tool_choice: None`` for a
    runner that never sends one). ``seed``: whether the episode's seed is sent. ``model``: the model the
    official runner plays this role with by default (recorded for comparison; mua never picks a model)."""

    params: dict[str, Any] = field(default_factory=dict)
    seed: bool = True
    model: Optional[str] = None


@dataclass(frozen=True)
class RunProtocol:
    """A benchmark's official run protocol. ``source`` says where the values were read (repository, commit,
    files). ``limits`` names the budgets the adapter enforces (``Limits`` field names). ``trials``: trials per
    task the benchmark's leaderboard asks for. ``data``: data-file path prefixes (relative to the data
    directory; ``{subset}`` stands for a subset's name) whose checksums a run records."""

    source: str
    agent: RoleProtocol = field(default_factory=RoleProtocol)
    user: RoleProtocol = field(default_factory=RoleProtocol)
    judge: RoleProtocol = field(default_factory=RoleProtocol)
    limits: dict[str, int] = field(default_factory=dict)
    trials: int = 1
    data: tuple[str, ...] = ()

    def role(self, name: str) -> RoleProtocol:
        return getattr(self, name)

    def to_dict(self) -> dict:
        """Plain JSON data (lists, not tuples): what config.json holds."""
        return json.loads(json.dumps(asdict(self)))


def generic() -> RunProtocol:
    """The protocol of a benchmark that declares none: the agent sends no decoding params (the server's
    defaults), the user simulator and judge decode greedily (temperature 0.0), one trial."""
    return RunProtocol(source="none declared (mua defaults)", user=RoleProtocol({"temperature": 0.0}),
                       judge=RoleProtocol({"temperature": 0.0}))


def role_params(official: RoleProtocol, given: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The params a role sends: the official ones with ``given`` (flags) on top, and the names of the params
    where the result departs from the official value (the overrides to record)."""
    used = {**official.params, **given}
    overrides = sorted(k for k in given if k not in official.params or official.params[k] != given[k])
    return used, overrides


def record(official: RunProtocol, used: dict[str, Optional[dict]], trials: int, limits: dict[str, Any],
           overrides: list[str], data: dict) -> dict:
    """The ``"protocol"`` entry of config.json. ``used`` maps each role to what it sent ({"model", "params",
    "seed"}), or None where no model played it (the gold agent, a scripted user, no judge)."""
    return {
        "source": official.source,
        "roles": used,
        "limits": limits,
        "trials": trials,
        "overrides": overrides,
        "data": data,
        "official": official.to_dict(),
    }


def data_record(data_dir: Path, prefixes: list[str]) -> dict:
    """sha256 of every data file under ``prefixes`` (relative to ``data_dir``), and whether each matches the
    pinned manifest: {"files": {path: sha256}, "sources": ["source@commit"...], "unpinned": [paths]}."""
    from .io.data import load_manifest  # lazy: reading results never needs the data

    pinned = {e["path"]: e for e in load_manifest()["files"]}
    files: dict[str, str] = {}
    for prefix in sorted(set(prefixes)):
        base = Path(data_dir) / prefix
        found = sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() else (
            [base] if base.is_file() else [])
        for path in found:
            rel = path.relative_to(data_dir).as_posix()
            files[rel] = _sha256_cached(path)
    sources = sorted({f"{pinned[p]['source']}@{pinned[p].get('commit') or pinned[p]['source']}"
                      for p in files if p in pinned})
    # a file the manifest pins with another digest, or a file it does not list where it pins others (a pack's
    # own files, in a folder the manifest knows nothing of, have no pinned version to differ from)
    known = {p.split("/")[0] for p in pinned}
    unpinned = sorted(p for p, digest in files.items() if (p in pinned and pinned[p]["sha256"] != digest)
                      or (p not in pinned and p.split("/")[0] in known))
    return {"files": files, "sources": sources, "unpinned": unpinned}


def data_location(data_dir: Path) -> dict:
    """config.json's ``"data_dir"``: the absolute data folder a run read (a pack's folder), so the commands
    that read the run later open the same data without --data-dir (:func:`recorded_data_dir`). Beside the
    protocol, not in it: where the data lies is no part of what was played (runs of one pack copied to
    two places compare, and a run resumes after its data folder moved)."""
    return {"data_dir": str(Path(data_dir).resolve())}


def recorded_data_dir(config: dict, run: Path, explicit: Optional[str] = None) -> Path:
    """The data folder to read the run at ``run`` (its config.json ``config``) with: ``explicit``
    (--data-dir) first; else the folder the run recorded (:func:`data_location`), or the usual search
    (data.resolve_data_dir) where it is gone or the run is older than the record. The files the run recorded
    checksums of (``protocol.data.files``) must still be there unchanged: else :class:`StaleData`, one line
    naming the first file that differs. An explicit folder is taken as it is (the person chose other data);
    an old run without the record is read as before."""
    from .errors import StaleData
    from .io.data import resolve_data_dir  # lazy: reading results needs no data unless a command opens it

    if explicit:
        return resolve_data_dir(explicit)
    recorded = config.get("data_dir")
    if not isinstance(recorded, str):
        return resolve_data_dir(None)
    where = Path(recorded)
    gone = not where.is_dir()
    if gone:
        where = resolve_data_dir(None)
    data = config.get("protocol", {}).get("data") if isinstance(config.get("protocol"), dict) else None
    files = data.get("files") if isinstance(data, dict) else None
    for rel, digest in sorted(files.items()) if isinstance(files, dict) else []:
        path = where / str(rel)
        now = _sha256_cached(path) if path.is_file() else None
        if now == digest:
            continue
        what = (f"{rel} is missing" if now is None
                else f"{rel} has sha256 {now[:12]}…, the run recorded {str(digest)[:12]}…")
        place = (f"its data folder {recorded} is gone and the data found at {where} differs" if gone
                 else f"its data folder {where} changed since the run")
        raise StaleData(f"{run}: {place}: {what}; restore it, or name the data folder to read with --data-dir")
    return where


_HASHES: dict[tuple[str, int, int], str] = {}


def _sha256_cached(path: Path) -> str:
    from .io.data import sha256_of

    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        _HASHES[key] = sha256_of(path)
    return _HASHES[key]


def _role_text(role: str, used: Optional[dict], official: dict) -> list[str]:
    """How one role departs from the official protocol, as short phrases (none when it matches or when no
    model played the role)."""
    if not used:
        return []
    out = []
    params, off_params = used.get("params") or {}, official.get("params") or {}
    for k in sorted(set(params) | set(off_params)):
        if params.get(k, "unset") != off_params.get(k, "unset"):
            out.append(f"{role} {k} {_show(params.get(k, 'unset'))} (official {_show(off_params.get(k, 'unset'))})")
    if bool(used.get("seed")) != bool(official.get("seed")):
        out.append(f"{role} seed {'sent' if used.get('seed') else 'not sent'} (official "
                   f"{'sent' if official.get('seed') else 'not sent'})")
    if role != "agent" and official.get("model") and used.get("model") != official.get("model"):
        out.append(f"{role} model {used.get('model')} (official default {official['model']})")
    return out


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def differences(recorded: Optional[dict]) -> list[str]:
    """Where a run's recorded protocol departs from the benchmark's official one, as short phrases. A run
    recorded before protocols were (no record) gives one phrase saying so."""
    if not recorded:
        return ["protocol not recorded (run made before mua recorded it)"]
    official = recorded.get("official") or {}
    out = []
    for role in ROLES:
        out += _role_text(role, (recorded.get("roles") or {}).get(role), official.get(role) or {})
    off_limits = official.get("limits") or {}
    for k in sorted(set(off_limits) | set(recorded.get("limits") or {})):
        value = (recorded.get("limits") or {}).get(k)
        if value != off_limits.get(k):
            out.append(f"limit {k} {value} (official {off_limits.get(k)})")
    # trials matter where a model samples; the gold agent replays the same actions every trial
    if ((recorded.get("roles") or {}).get("agent") and recorded.get("trials") is not None
            and official.get("trials") and recorded["trials"] < official["trials"]):
        out.append(f"{recorded['trials']} trial(s) (official {official['trials']})")
    unpinned = (recorded.get("data") or {}).get("unpinned") or []
    if unpinned:
        out.append(f"{len(unpinned)} data file(s) differ from the pinned data (e.g. {unpinned[0]})")
    return out


STATED = ("user_model", "judge_model", "agent_params", "user_params", "trials", "version")


def stated_differences(stated: dict, official: RunProtocol) -> list[str]:
    """Where what a published source says it used departs from the official protocol, and what it does not
    say. ``stated`` keys: user_model, judge_model, agent_params, user_params, trials, version (the benchmark
    code version it ran), note."""
    out = []
    for role in ("user", "judge"):
        model, default = stated.get(f"{role}_model"), official.role(role).model
        if model and default and model != default:
            out.append(f"{role} model {model} (official default {default})")
    for role in ("agent", "user"):
        params = stated.get(f"{role}_params")
        if params is None:
            continue
        off = official.role(role).params
        out += [f"{role} {k} {_show(params.get(k, 'unset'))} (official {_show(off.get(k, 'unset'))})"
                for k in sorted(set(params) | set(off)) if params.get(k, "unset") != off.get(k, "unset")]
    if stated.get("trials") is not None and stated["trials"] < official.trials:
        out.append(f"{stated['trials']} trial(s) (official {official.trials})")
    if stated.get("version"):
        out.append(f"benchmark code {stated['version']} (mua's data: {official.source.split(' (')[0]})")
    missing = ["agent decoding"] if stated.get("agent_params") is None else []
    if stated.get("trials") is None and official.trials > 1:
        missing.append("trials")
    if official.user.model and not stated.get("user_model"):
        missing.insert(0, "user simulator")
    if missing:
        out.append(f"not stated: {', '.join(missing)}")
    return out


def mismatches(a: Optional[dict], b: Optional[dict]) -> list[str]:
    """Where two runs' recorded protocols differ (for the gate): request params and seed of each role that a
    model plays in both runs (a gold agent or a scripted user has none to compare; the models themselves
    are the gate's own checks), limits, data checksums, and trials when both agents are models. mua's
    version may change between a baseline and a candidate; it does not count."""
    if not a or not b:
        return [] if a == b else ["one run records no protocol (made before mua recorded one)"]
    out = []
    roles_a, roles_b = a.get("roles") or {}, b.get("roles") or {}
    for role in ROLES:
        ra, rb = roles_a.get(role), roles_b.get(role)
        if not ra or not rb:
            continue
        for k in ("params", "seed"):
            if ra.get(k) != rb.get(k):
                out.append(f"{role} {k}: baseline {_show(ra.get(k))}, candidate {_show(rb.get(k))}")
    if a.get("limits") != b.get("limits"):
        out.append(f"limits: baseline {_show(a.get('limits'))}, candidate {_show(b.get('limits'))}")
    if roles_a.get("agent") and roles_b.get("agent") and a.get("trials") != b.get("trials"):
        out.append(f"trials: baseline {a.get('trials')}, candidate {b.get('trials')}")
    fa, fb = (a.get("data") or {}).get("files") or {}, (b.get("data") or {}).get("files") or {}
    changed = sorted(p for p in set(fa) & set(fb) if fa[p] != fb[p])
    if changed:
        out.append(f"data: {len(changed)} file(s) differ (e.g. {changed[0]})")
    return out
