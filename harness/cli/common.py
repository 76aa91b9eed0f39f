"""Flags shared by several commands."""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Optional

from ..build import ModelSpec
from ..errors import ConfigError


def add_data_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", help="benchmark data directory (default: $MUA_DATA_DIR, ../shared/data, "
                                      "then the cache filled by `mua data pull`)")


def add_model_flags(p: argparse.ArgumentParser, role: str, help_text: str) -> None:
    p.add_argument(f"--{role}-model", help=help_text)
    p.add_argument(f"--{role}-base-url", help=f"OpenAI-compatible base URL for the {role} model "
                                              "(default: $OPENAI_BASE_URL, else http://127.0.0.1:8000/v1)")
    p.add_argument(f"--{role}-api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help=f"environment variable holding the {role} endpoint's API key (default OPENAI_API_KEY)")
    p.add_argument(f"--{role}-temperature", type=float, help=f"sampling temperature for the {role} model "
                                                             "(default: the benchmark protocol's)")
    p.add_argument(f"--{role}-params", metavar="JSON", help=f"extra request parameters for the {role} model, "
                                                            'as a JSON object, e.g. \'{"max_tokens": 2048}\'')


def model_spec(args: argparse.Namespace, role: str, default_temperature: Optional[float] = None) -> Optional[ModelSpec]:
    name = getattr(args, f"{role}_model")
    if not name:
        return None
    params = {}
    raw = getattr(args, f"{role}_params")
    if raw:
        try:
            params = json.loads(raw)
        except json.JSONDecodeError as e:
            raise ConfigError(f"--{role}-params is not valid JSON: {e}") from None
        if not isinstance(params, dict):
            raise ConfigError(f"--{role}-params must be a JSON object")
    temperature = getattr(args, f"{role}_temperature")
    if temperature is None:
        temperature = default_temperature
    if temperature is not None:
        params["temperature"] = temperature
    return ModelSpec(name=name, base_url=getattr(args, f"{role}_base_url"), params=params,
                     api_key_env=getattr(args, f"{role}_api_key_env"))


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
