"""Prices per million tokens, by model name: mua's built-in table (``prices.json``) and a user's own table.

A table is a JSON file ``{"source": "...", "date": "YYYY-MM-DD", "models": {NAME: {"input": USD,
"output": USD}}}`` with USD per million prompt (input) and completion (output) tokens. The built-in one is a
snapshot of LiteLLM's maintained price list (``model_prices_and_context_window_backup.json``, shipped in its
wheel) for the providers mua routes by name, keyed ``provider/model``; regenerate it with

    python -m mua.harness.results.price_table path/to/model_prices_and_context_window_backup.json LITELLM_VERSION

Only the base tier is kept (providers that charge more above 200k prompt tokens per request, and cached
prompt tokens, are not modelled: mua sends no cache markers). A user's table (``--prices``) names the models as
they are passed to ``--*-model`` (local endpoints, private deployments) and wins over the built-in one.
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Optional
from urllib.parse import urlsplit

from ..errors import DataError
from ..io.files import read_json

BUILTIN = Path(__file__).with_name("prices.json")
UNIT = "USD per million tokens"
# LiteLLM's provider names -> mua's prefixes (providers.py); its OpenAI and Anthropic keys carry no prefix.
LITELLM_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "gemini": "gemini", "groq": "groq",
                     "mistral": "mistral", "deepseek": "deepseek", "together_ai": "together_ai", "xai": "xai"}


@dataclass(frozen=True)
class Price:
    input: float  # USD per million prompt tokens
    output: float  # USD per million completion tokens
    source: str  # the table it came from (built-in: LiteLLM's version and the date; else the user's file)

    def to_dict(self) -> dict:
        return {"input": self.input, "output": self.output, "source": self.source}


def _rate(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise DataError(f"{where} must be a non-negative number of USD per million tokens, got {value!r}")
    return float(value)


def read_table(path: Path | str, what: str = "price table") -> dict[str, Price]:
    """The models of a price table file; DataError naming the file and entry when it is malformed."""
    data = read_json(path, what=what, expect=dict)
    models = data.get("models")
    if not isinstance(models, dict):
        raise DataError(f"{path}: a price table needs \"models\": {{NAME: {{\"input\": USD, \"output\": USD}}}} "
                        f"({UNIT})")
    source = str(data.get("source") or Path(path).name) + (f", {data['date']}" if data.get("date") else "")
    table = {}
    for name, entry in models.items():
        if not isinstance(entry, dict):
            raise DataError(f"{path}: models.{name} must be an object with \"input\" and \"output\"")
        table[name] = Price(_rate(entry.get("input"), f"{path}: models.{name}.input"),
                            _rate(entry.get("output"), f"{path}: models.{name}.output"), source)
    return table


@lru_cache(maxsize=1)
def builtin() -> dict[str, Price]:
    return read_table(BUILTIN, "mua's built-in price table")


def provider_name(model: str, base_url: Optional[str] = None) -> str:
    """The name a model's price is listed under: its own when it has a provider prefix, else prefixed by the
    provider whose API host ``base_url`` points at (``gpt-4o`` at api.openai.com is ``openai/gpt-4o``)."""
    from ..models.providers import PROVIDERS, provider_of  # the provider table is defined once, there

    if provider_of(model) is not None or not base_url:
        return model
    host = (urlsplit(base_url).hostname or "").lower()
    for name, p in PROVIDERS.items():
        if host and host == (urlsplit(p.base_url).hostname or "").lower():
            return f"{name}/{model}"
    return model


def price_of(model: str, base_url: Optional[str] = None,
             user: Optional[dict[str, Price]] = None) -> Optional[Price]:
    """The price of ``model`` (as passed to ``--*-model``): the user's table by that name, else the built-in
    table by its provider-prefixed name (``litellm/...``: the installed LiteLLM's map); None when neither
    lists it (its cost is then unknown, never 0)."""
    if user and model in user:
        return user[model]
    if model.startswith("litellm/"):  # LiteLLM's own map, from the installed package
        from ..models.litellm_client import litellm_price
        found = litellm_price(model.split("/", 1)[1])
        return Price(*found) if found else None
    return builtin().get(provider_name(model, base_url))


def from_litellm(data: dict, version: str, today: Optional[str] = None) -> dict:
    """The built-in table's JSON from LiteLLM's price list: chat models of the providers mua routes."""
    models = {}
    for key, entry in data.items():
        if not isinstance(entry, dict) or entry.get("mode") != "chat":
            continue
        prefix = LITELLM_PROVIDERS.get(str(entry.get("litellm_provider")))
        cost_in, cost_out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
        if prefix is None or not isinstance(cost_in, (int, float)) or not isinstance(cost_out, (int, float)):
            continue
        bare = key.split("/", 1)[1] if key.startswith(f"{prefix}/") or key.startswith(
            f"{entry.get('litellm_provider')}/") else key
        models[f"{prefix}/{bare}"] = {"input": round(cost_in * 1e6, 6), "output": round(cost_out * 1e6, 6)}
    return {"source": f"LiteLLM {version} model_prices_and_context_window_backup.json (base tier)",
            "date": today or date.today().isoformat(), "unit": UNIT, "models": dict(sorted(models.items()))}


def _one_model_a_line(table: dict) -> str:
    head = {k: v for k, v in table.items() if k != "models"}
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in table["models"].items()]
    return json.dumps(head, indent=1)[:-2] + ',\n "models": {\n' + ",\n".join(lines) + "\n }\n}\n"


def main(argv: Optional[list[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m mua.harness.results.price_table LITELLM_PRICES_JSON LITELLM_VERSION", file=sys.stderr)
        return 2
    table = from_litellm(read_json(args[0], what="LiteLLM price list", expect=dict), args[1])
    BUILTIN.write_text(_one_model_a_line(table), encoding="utf-8")
    print(f"{len(table['models'])} models -> {BUILTIN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
