"""What a run cost: each role's tokens (the "usage" of every episode record) times that role's model price.

The prices are resolved once, when the run starts (price_table.py: the user's ``--prices`` table, then mua's
built-in one), and recorded in config.json's "prices" (per model role: the model and its price, the price
null when unknown). summary.json's "cost" block (only for runs that play a model) holds, in USD, the run's total, each
role's tokens and cost, and the mean and largest cost of an episode. A role that used tokens at an unknown
price has cost null and is listed under "unknown"; every total it feeds is null too, never 0. Errored
episodes record no usage, so the tokens they spent before failing are not counted ("errored_episodes" says
how many).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional

from ..errors import DataError
from ..io.files import read_json
from .episodes import EpisodeRecord
from .price_table import Price, price_of, read_table

CURRENCY = "USD"
DIGITS = 6  # a millionth of a dollar
PER_TOKEN = 1e-6  # prices are per million tokens


def user_table(path: Optional[str | Path]) -> Optional[dict[str, Price]]:
    """The user's price table (``--prices FILE``), read and checked before the run starts."""
    return read_table(path, "--prices table") if path else None


def prices_record(models: Mapping[str, Any], table: Optional[dict[str, Price]] = None) -> Optional[dict]:
    """config.json's "prices": ``{role: {"model": NAME, "price": {"input", "output", "source"} or None}}`` for
    each role that has a model (``models``: role -> ModelSpec or None; the gold agent is no model); None when
    no role has one."""
    out: dict[str, dict] = {}
    for role, spec in models.items():
        if spec is None or spec.gold:
            continue
        price = price_of(spec.name, spec.base_url, table)
        out[role] = {"model": spec.name, "price": price.to_dict() if price else None}
    return out or None


def role_cost(price: Optional[Mapping[str, Any]], prompt_tokens: int, completion_tokens: int) -> Optional[float]:
    """USD for these tokens at ``price`` (per million); None when the price is unknown and tokens were used."""
    if not prompt_tokens and not completion_tokens:
        return 0.0
    if price is None:
        return None
    return (prompt_tokens * float(price["input"]) + completion_tokens * float(price["output"])) * PER_TOKEN


def _tokens(usage: Any) -> tuple[int, int, int]:
    if not isinstance(usage, dict):
        return 0, 0, 0
    return tuple(int(v) if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0  # type: ignore[return-value]
                 for v in (usage.get("requests"), usage.get("prompt_tokens"), usage.get("completion_tokens")))


def episode_cost(usage: Any, prices: Mapping[str, Optional[Mapping[str, Any]]]) -> Optional[float]:
    """USD one episode cost: its record's "usage" (role -> tokens) at ``prices`` (role -> the "price" of
    config.json's "prices", or None); None when a role used tokens at an unknown price."""
    cost: Optional[float] = 0.0
    for role, price in prices.items():
        _, prompt, completion = _tokens(usage.get(role) if isinstance(usage, dict) else None)
        part = role_cost(price, prompt, completion)
        cost = None if part is None or cost is None else cost + part
    return cost


def _round(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, DIGITS)


class RunCost:
    """summary.json's "cost", accumulated one episode record at a time (fed by runs.Aggregate)."""

    def __init__(self, config: Mapping[str, Any]):
        prices = config.get("prices")
        entries = prices if isinstance(prices, dict) else {}
        self.models = {role: (e or {}).get("model") for role, e in entries.items()}
        self.prices: dict[str, Optional[dict]] = {role: (e or {}).get("price") for role, e in entries.items()}
        self.tokens = {role: [0, 0, 0] for role in self.prices}
        self.episodes = self.errored = 0
        self.episode_total = 0.0
        self.episode_max = 0.0
        self.episode_unknown = False

    def add(self, record: EpisodeRecord) -> None:
        if not self.prices:
            return
        if record.error:
            self.errored += 1
            return
        self.episodes += 1
        for role in self.prices:
            counts = self.tokens[role]
            for i, n in enumerate(_tokens(record.usage.get(role))):
                counts[i] += n
        cost = episode_cost(record.usage, self.prices)
        if cost is None:
            self.episode_unknown = True
        else:
            self.episode_total += cost
            self.episode_max = max(self.episode_max, cost)

    def result(self) -> Optional[dict]:
        """The "cost" block, or None for a run that plays no model (nothing is added to its summary)."""
        if not self.prices:
            return None
        roles, unknown, total = {}, [], 0.0
        for role, price in self.prices.items():
            requests, prompt, completion = self.tokens[role]
            cost = role_cost(price, prompt, completion)
            if cost is None:
                unknown.append(role)
            total = total + cost if cost is not None else total
            roles[role] = {"model": self.models[role], "price": price, "requests": requests,
                           "prompt_tokens": prompt, "completion_tokens": completion, "cost": _round(cost)}
        known = not unknown
        mean = self.episode_total / self.episodes if self.episodes and not self.episode_unknown else None
        return {"currency": CURRENCY, "total": _round(total) if known else None, "roles": roles,
                "per_episode": {"mean": _round(mean), "max": None if self.episode_unknown else _round(self.episode_max),
                                "episodes": self.episodes},
                "errored_episodes": self.errored, "unknown": unknown}



def recorded_block(run_dir: Path | str, name: str = "cost") -> Optional[dict]:
    """The ``name`` block of a run's summary.json ("cost" by default), None when there is none (or the summary
    is unreadable)."""
    path = Path(run_dir) / "summary.json"
    if not path.is_file():
        return None
    try:
        block = read_json(path, what="run summary", expect=dict).get(name)
    except DataError:
        return None
    return block if isinstance(block, dict) else None


def cost_text(block: dict) -> str:
    """One line for people: the total, each role's share and the per-episode mean and max; "?" where a price
    is unknown (never 0)."""
    def usd(value: Any) -> str:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return f"${value:.4f}" if ok else "?"
    roles = block.get("roles")
    roles = roles if isinstance(roles, dict) else {}
    shares = ", ".join(f"{role} {usd(r.get('cost'))}" for role, r in roles.items() if isinstance(r, dict))
    per = block.get("per_episode")
    per = per if isinstance(per, dict) else {}
    line = f"cost {usd(block.get('total'))}" + (f" ({shares})" if shares else "")
    line += f"; per episode mean {usd(per.get('mean'))}, max {usd(per.get('max'))}"
    unknown = block.get("unknown") or []
    if unknown:
        line += f"; no price for {', '.join(map(str, unknown))} (mua eval --prices)"
    return line


def recorded_total(run_dir: Path | str) -> tuple[Optional[float], bool]:
    """A finished run's cost from its summary.json (the leaderboard's "$"): (total USD or None, whether a cost
    is recorded at all). A run without one (gold, unfinished, older mua) or with an unreadable summary records
    none; a recorded null total is a known-unknown."""
    block = recorded_block(run_dir)
    if block is None:
        return None, False
    total = block.get("total")
    if isinstance(total, (int, float)) and not isinstance(total, bool) and total >= 0:
        return float(total), True
    return None, True
