"""Flags shared by several commands."""
from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Optional

from ..errors import ConfigError
from ..io.jsonl import BadLine, loads_line
from ..run.build import ModelSpec, looks_like_path


# -- numeric flags, checked as they are parsed (argparse reports a bad value in one line: see cli/__init__.py) --
def _parsed(text: str, kind: type) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {'a whole number' if kind is int else 'a number'}: {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def positive_int(text: str) -> int:
    value = int(_parsed(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = int(_parsed(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def finite_float(text: str) -> float:
    return _parsed(text, float)


def non_negative_float(text: str) -> float:
    value = _parsed(text, float)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def positive_float(text: str) -> float:
    value = _parsed(text, float)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def run_label(text: str) -> tuple[Path, str]:
    """``RUN=LABEL`` (a --label value): the run folder and the label it is shown with."""
    run, eq, label = text.rpartition("=")
    if not eq or not run or not label.strip():
        raise argparse.ArgumentTypeError(f"expected RUN=LABEL (a run folder, '=', its label), got {text!r}")
    return Path(run), label.strip()


def add_label_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--label", type=run_label, action="append", default=[], metavar="RUN=LABEL",
                   help="show the run folder RUN as LABEL (repeatable); default: the shortest end of its path "
                        "that no other run's path ends with (baselines/x and results/x)")


def add_wide_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--wide", action="store_true",
                   help="print the table in one piece however wide (default: blocks of columns that fit 120 "
                        "characters)")


def add_data_dir(p: argparse.ArgumentParser, run: bool = False) -> None:
    """``run``: the command reads a run, whose config.json records its data folder (found before the rest)."""
    first = "the data folder the run recorded, then " if run else ""
    p.add_argument("--data-dir", help=f"benchmark data directory (default: {first}$MUA_DATA_DIR, ../shared/data, "
                                      "then the cache filled by `mua data pull`)")


def add_model_flags(p: argparse.ArgumentParser, roles: dict[str, str], shared: bool = False,
                    temperature_default: str = "the benchmark protocol's") -> None:
    """The ``--ROLE-*`` flags of each role (role -> the help of its --ROLE-model), after, with ``shared``,
    --model/--base-url/--api-key-env: one model for every role (agent, user, judge) not given its own;
    ``temperature_default`` says in the help what an unset --ROLE-temperature means."""
    if shared:
        p.add_argument("--model", help="model for the agent, the user simulator and the judge, unless "
                                       "--agent-model, --user-model or --judge-model name another (or the benchmark "
                                       "names its own user model); a provider prefix routes it (anthropic/..., "
                                       "gemini/..., openai/..., groq/..., ...)")
        p.add_argument("--base-url", help="base URL for every role without its own --ROLE-base-url")
        p.add_argument("--api-key-env", metavar="VAR", help="API key variable for every role without its own")
    for role, help_text in roles.items():
        p.add_argument(f"--{role}-model", help=help_text)
        p.add_argument(f"--{role}-base-url", help=f"base URL for the {role} model (default: the provider's for a "
                                                  "provider/model name, else $OPENAI_BASE_URL, else "
                                                  "http://127.0.0.1:8000/v1)")
        p.add_argument(f"--{role}-api-key-env", metavar="VAR",
                       help=f"environment variable holding the {role} endpoint's API key (default: the provider's, "
                            "e.g. ANTHROPIC_API_KEY, GEMINI_API_KEY; else OPENAI_API_KEY)")
        # the float flags of a model are checked by model_spec, with its other flags, before any work
        p.add_argument(f"--{role}-temperature", type=float, help=f"sampling temperature for the {role} model "
                                                                 f"(default: {temperature_default})")
        p.add_argument(f"--{role}-chat-template", metavar="hermes|llama3_json|FILE",
                       help=f"chat template for a local {role} checkpoint whose own one drops tool use")
        p.add_argument(f"--{role}-params", metavar="JSON", help=f"extra request parameters for the {role} model, "
                                                                'as a JSON object, e.g. \'{"max_tokens": 2048}\'')


def add_timeouts(p: argparse.ArgumentParser, stall: bool = True) -> None:
    """--request-timeout, then (``stall``: a command that runs many requests) --stall-timeout."""
    p.add_argument("--request-timeout", type=float, metavar="S",  # checked by model_spec too
                   help="seconds one model request may take before it is retried (default 600; per attempt)")
    if not stall:
        return
    p.add_argument("--stall-timeout", type=non_negative_float, default=120.0, metavar="S",
                   help="stop (resumable) when an endpoint answers nothing for S seconds while requests wait "
                        "(default 120; 0: never). Every endpoint is also checked once before the first request")


def finite(flag: str, value: Optional[float], *, positive: bool = False) -> Optional[float]:
    """``value`` when it is a finite number (and > 0 with ``positive``); ConfigError naming the flag otherwise."""
    if value is not None and (not math.isfinite(value) or (positive and value <= 0)):
        raise ConfigError(f"{flag} must be a finite{' positive' if positive else ''} number, got {value}")
    return value


def _params(role: str, raw: Optional[str]) -> dict:
    if not raw:
        return {}
    try:
        params = loads_line(raw)
    except BadLine as e:
        raise ConfigError(f"--{role}-params is not valid JSON: {e}") from None
    if not isinstance(params, dict):
        raise ConfigError(f"--{role}-params must be a JSON object")
    return params


def model_spec(args: argparse.Namespace, role: str, default_temperature: Optional[float] = None) -> Optional[ModelSpec]:
    """The model named by the ``--ROLE-*`` flags, checked up front: finite numbers, valid JSON without NaN, a
    well-formed base URL, a checkpoint path that exists."""
    timeout = finite("--request-timeout", getattr(args, "request_timeout", None), positive=True)  # even unused
    name = getattr(args, f"{role}_model") or getattr(args, "model", None)
    if not name:
        return None
    from ..models.openai_client import check_base_url, check_client_options  # lazy: a gold run needs no client
    from ..models.providers import key_env

    params = _params(role, getattr(args, f"{role}_params"))
    temperature = finite(f"--{role}-temperature", getattr(args, f"{role}_temperature"))
    if temperature is not None and temperature < 0:
        raise ConfigError(f"--{role}-temperature must be 0 or more, got {temperature:g}")
    if temperature is None:
        temperature = default_temperature
    if temperature is not None:
        params["temperature"] = temperature
    template = getattr(args, f"{role}_chat_template", None)
    if template is not None:
        params["chat_template"] = template  # recorded in config.json with the other params
    try:  # typed here, so that a bad one names the flag (not a traceback in a retry loop or connection pool)
        check_client_options(params)
    except ConfigError as e:
        raise ConfigError(f"--{role}-params {e}") from None
    if timeout is not None:
        params.setdefault("timeout_s", timeout)
    base_url = getattr(args, f"{role}_base_url") or getattr(args, "base_url", None)
    if base_url is not None:
        check_base_url(base_url)
    elif looks_like_path(name) and not Path(name).expanduser().exists():
        raise ConfigError(f"--{role}-model {name}: no such checkpoint directory (to name a served model this way, "
                          f"give --{role}-base-url)")
    key_var = getattr(args, f"{role}_api_key_env") or getattr(args, "api_key_env", None) or key_env(name, base_url)
    return ModelSpec(name=name, base_url=base_url, params=params, api_key_env=key_var)


def check_output_file(flag: str, path: Path) -> None:
    """Fail before any work when an output file cannot be written (missing or read-only folder, a directory
    in its place): a long run must not end in an unwritable path."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ConfigError(f"{flag} {path} is a directory; give a file name")
    if not folder.is_dir():
        raise ConfigError(f"{flag} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ConfigError(f"{flag} {path}: not writable")
