"""What ``mua train`` and ``mua sft`` share about their settings: TRL's parser (a YAML ``--config`` file plus a
flag for every field, ``--max_steps`` or ``--max-steps``), mua's type checks of the values, the LoRA fields as
TRL's :class:`ModelConfig` names them, the device default, and a ``--help`` that lists mua's own settings first
and TRL's after, in groups.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import textwrap
import types
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, Optional, Union, get_args, get_origin, get_type_hints

from trl import ModelConfig

from mua.harness.errors import ConfigError

from .compat import parser_with_groups

LORA_FIELDS = ("use_peft", "lora_r", "lora_alpha", "lora_dropout", "lora_target_modules", "lora_modules_to_save",
               "use_rslora", "use_dora")


def trl_field(base: type, name: str, default: Any) -> Any:
    """TRL's field ``name`` of ``base`` with mua's default (and TRL's help text)."""
    return field(default=default, metadata=dict(_fields_of(base)[name].metadata))


def _fields_of(cls: type) -> dict[str, Field]:
    return {f.name: f for f in fields(cls)}


def mua_field(text: str, default: Any = None, factory: Any = None) -> Any:
    if factory is not None:
        return field(default_factory=factory, metadata={"help": text})
    return field(default=default, metadata={"help": text})


def _lora(name: str) -> Any:
    source: Field = ModelConfig.__dataclass_fields__[name]
    if source.default_factory is not MISSING:
        return field(default_factory=source.default_factory, metadata=dict(source.metadata))
    return field(default=source.default, metadata=dict(source.metadata))


@dataclass
class LoraSettings:
    """LoRA, under TRL's names (``trl.ModelConfig``): ``use_peft: true`` trains a LoRA adapter of rank ``lora_r``
    on ``lora_target_modules`` (default: the model's attention and MLP projections, as PEFT picks them) and
    freezes the base weights. The saved output is the base with the adapter merged into it."""

    use_peft: bool = _lora("use_peft")
    lora_r: int = _lora("lora_r")
    lora_alpha: int = _lora("lora_alpha")
    lora_dropout: float = _lora("lora_dropout")
    lora_target_modules: Optional[list[str]] = _lora("lora_target_modules")
    lora_modules_to_save: Optional[list[str]] = _lora("lora_modules_to_save")
    use_rslora: bool = _lora("use_rslora")
    use_dora: bool = _lora("use_dora")

    def peft_config(self) -> Any:
        """PEFT's LoraConfig built by TRL's own ``get_peft_config``, or None without ``use_peft``."""
        if not self.use_peft:
            return None
        from trl import get_peft_config

        if self.lora_r < 1 or self.lora_alpha < 1 or not 0 <= self.lora_dropout < 1:
            raise ConfigError("lora_r and lora_alpha must be at least 1, lora_dropout in [0, 1)")
        values = {name: getattr(self, name) for name in LORA_FIELDS}
        try:
            return get_peft_config(ModelConfig(**values))
        except ValueError as exc:  # peft missing
            raise ConfigError(f"use_peft: {exc}") from None


def settle_device_and_precision(cfg: Any) -> None:
    """Device and precision are TRL's and accelerate's: on a CUDA machine the run uses the GPU (and TRL's
    precision default); without CUDA it runs on the CPU, where mixed precision is off unless asked for."""
    import torch

    if not torch.cuda.is_available():
        cfg.use_cpu = True
        if getattr(cfg, "bf16", None) is None:
            cfg.bf16 = False


def coerce_fields(cfg: Any, base: type) -> None:
    """Type checks (one ConfigError naming the key) for mua's own fields and for TRL's scalar fields set away
    from TRL's default: settings built in code or read from YAML get the checks a flag gets."""
    hints = get_type_hints(type(cfg))
    base_defaults = {f.name: f.default for f in fields(base)}
    base_hints = get_type_hints(base)
    for f in fields(cfg):
        if f.name in base_defaults:
            if base_hints.get(f.name) not in _SCALARS or getattr(cfg, f.name) == base_defaults[f.name]:
                continue
        setattr(cfg, f.name, coerce(f.name, hints[f.name], getattr(cfg, f.name)))


_SCALARS = (bool, int, float, str, Optional[bool], Optional[int], Optional[float], Optional[str])


def kind_name(kind: Any) -> str:
    if get_origin(kind) is list:
        return "a list of strings (or one comma-separated string)"
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string",
            dict: "a mapping"}.get(kind, str(kind))


def coerce(name: str, kind: Any, value: Any) -> Any:
    """``value`` checked against type ``kind`` of setting ``name`` (ConfigError naming the key otherwise).
    Numeric strings are accepted for numbers given as floats (PyYAML reads ``1e-6`` as a string), integer
    task ids as their text; lists may be given as comma-separated strings (``--subsets a,b``); mappings as
    their JSON text."""
    kind, optional = _unwrap_optional(kind)
    if value is None:
        if optional:
            return None
        raise ConfigError(f"{name} must be {kind_name(kind)}, not null")
    bad = ConfigError(f"{name} must be {kind_name(kind)}{', or null' if optional else ''}; got {value!r}")
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind in (int, float):
        ok, value = _as_number(kind, value, bad)
    elif kind is str:
        ok = isinstance(value, str)
    elif get_origin(kind) is list:
        ok, value = _as_string_list(value)
    else:  # mappings (model parameters)
        ok, value = _as_mapping(value, bad)
    if not ok:
        raise bad
    return value


def _unwrap_optional(kind: Any) -> tuple[Any, bool]:
    """``Optional[X]`` as (X, True); a union naming dict is a mapping; any other kind is (kind, False)."""
    if get_origin(kind) in (Union, types.UnionType):
        args = [a for a in get_args(kind) if a is not type(None)]
        return (dict if dict in args else args[0]), len(args) < len(get_args(kind))
    return kind, False


def _as_number(kind: type, value: Any, bad: ConfigError) -> tuple[bool, Any]:
    if kind is float and isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise bad from None
    ok = isinstance(value, (int, float) if kind is float else int) and not isinstance(value, bool)
    if ok and kind is float:
        value = float(value)
        if not math.isfinite(value):
            raise bad
    return ok, value


def _as_string_list(value: Any) -> tuple[bool, Any]:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):  # ids written as YAML integers: 105 means "105"
        value = [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
    ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    if ok:
        value = [part.strip() for v in value for part in v.split(",") if part.strip()]
    return ok, value


def _as_mapping(value: Any, bad: ConfigError) -> tuple[bool, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise bad from None
    return isinstance(value, dict) and all(isinstance(k, str) for k in value), value


def parse_settings(cls: type, base: type, argv: list[str], prog: str, description: str) -> Any:
    """``argv`` (``--config FILE`` and flags) read by TRL's parser into ``cls`` (a subclass of TRL's ``base``
    config with mua's fields); bad keys, flags and values are a ConfigError naming them. ``--help`` groups the
    settings: mua's, then LoRA, then TRL's."""
    import yaml
    from trl import TrlParser

    # mua's own fields and the TRL fields it gives its own defaults: those declared in the class itself
    declared = _fields_of(cls)
    own = [name for name in vars(cls).get("__annotations__", {}) if name in declared and name not in LORA_FIELDS]
    lora = [name for name in LORA_FIELDS if name in declared]

    def groups(parser, dtype) -> list:
        return [(parser.add_argument_group(f"{prog}'s settings"), own),
                (parser.add_argument_group("LoRA (TRL's ModelConfig names)"), lora),
                (parser.add_argument_group(f"TRL's {base.__name__} settings (see TRL's documentation)"),
                 [f.name for f in fields(dtype) if f.name not in own and f.name not in lora])]

    class Parser(parser_with_groups(TrlParser, groups)):  # type: ignore[misc]
        def error(self, message):  # argparse would print usage and exit; mua reports one line
            raise ConfigError(message)

    usage = f"{prog} [--config FILE.yaml] [--KEY VALUE ...]"
    parser = Parser(cls, prog=prog, usage=usage, description=description, allow_abbrev=False,
                    formatter_class=_DefaultOnceFormatter)
    try:
        (cfg,) = parser.parse_args_and_config(list(argv))
    except OSError as exc:
        raise ConfigError(f"cannot read the config file: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"the config file is not valid YAML: {exc}") from None
    except ValueError as exc:
        raise _settings_error(str(exc), prog, base) from None
    return cfg


class _DefaultOnceFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's "(default: X)" only where the help text does not already say its default, and not on the
    ``--no-KEY`` twin of a boolean (its default is the setting's own)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or any(o.startswith("--no") for o in action.option_strings):
            return text
        return super()._get_help_string(action) or text


def short_help(cls: type, prog: str, description: str, common: tuple[str, ...], width: int = 100) -> str:
    """The short ``--help`` of ``mua train``/``mua sft``: mua's own settings, LoRA, and the TRL settings people
    set most (``common``), one per line where it fits; ``--help-all`` lists every TRL field. Written once into
    ``harness/cli/help_*.txt`` (``python -m mua.training.help``) so that ``--help`` imports nothing heavy."""
    declared = _fields_of(cls)
    hints = get_type_hints(cls)
    own = [n for n in vars(cls).get("__annotations__", {}) if n in declared and n not in LORA_FIELDS]
    groups = [(f"{prog}'s settings", own), ("LoRA (TRL's ModelConfig names)", list(LORA_FIELDS)),
              ("TRL's settings people set most (every other one: --help-all)", [n for n in common if n not in own])]
    wrap = textwrap.TextWrapper(width=width)
    lines = [f"usage: {prog} [--config FILE.yaml] [--KEY VALUE ...] [--help-all]", "",
             *wrap.wrap(description), "",
             *wrap.wrap("Every setting is a key of the --config YAML file and a flag, spelt --key-name or "
                        "--key_name; flags override the file.")]
    for title, names in groups:
        lines += ["", f"{title}:"]
        for name in names:
            lines += _help_entry(name, hints[name], declared[name], width)
    return "\n".join(lines) + "\n"


_COLUMN = 34


def _help_entry(name: str, kind: Any, spec: Field, width: int) -> list[str]:
    flag = f"  --{name.replace('_', '-')} {_metavar(kind)}"
    text = " ".join(str(spec.metadata.get("help", "")).split())
    text = re.split(r"(?<=[.!?])\s+(?=[A-Z`])", text, maxsplit=1)[0]  # TRL's help runs on: its first sentence
    default = spec.default_factory() if spec.default_factory is not MISSING else spec.default
    if "default" not in text and default not in (None, "", [], {}):
        text += f" (default: {default})"
    body = textwrap.wrap(text, width=width - _COLUMN) or [""]
    if len(flag) > _COLUMN - 2:
        return [flag] + [" " * _COLUMN + part for part in body]
    return [flag.ljust(_COLUMN) + body[0]] + [" " * _COLUMN + part for part in body[1:]]


def _metavar(kind: Any) -> str:
    kind, _ = _unwrap_optional(kind)
    if get_origin(kind) is list:
        return "A,B"
    return {bool: "true|false", int: "N", float: "X", dict: "JSON"}.get(kind, "TEXT")  # str and enums: TEXT


def _settings_error(text: str, prog: str, base: type) -> ConfigError:
    """TrlParser's ValueError text as mua's one-line ConfigError."""
    if text.startswith("Unknown arguments from config file"):
        return ConfigError(f"unknown {prog.split()[-1]} setting in the config file: {text.split(':', 1)[1].strip()}; "
                           f"every key must be one of `{prog} --help` (mua's or TRL's {base.__name__} fields)")
    if text.startswith("Some specified arguments are not used"):
        return ConfigError(f"unknown flags: {text.split(':', 1)[1].strip()}")
    return ConfigError(text)


def setting(name: str) -> str:
    """A setting as messages name it: the config key and the flag (both spellings are accepted)."""
    return f"{name} (--{name.replace('_', '-')})"

