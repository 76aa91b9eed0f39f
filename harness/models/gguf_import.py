"""`mua model import`: an ordinary checkpoint directory from a GGUF file or from a Python package that ships one.

transformers reads a GGUF file of a llama-family model (dequantising it to float32) but refuses to save a model
loaded that way, so the weights move into a freshly built model of the same config, which saves as usual:
``model.safetensors``, ``config.json``, ``generation_config.json``, the tokenizer files and its chat template.
``mua_provenance.json`` records where the weights came from (package and version, file name, sha256).

The directory is written under a temporary name beside ``out_dir`` and renamed into place when complete, so an
interrupted import never leaves a half-written checkpoint behind.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from ..errors import ConfigError
from ..io.data import sha256_of
from .gguf_source import find_gguf
from .templates import prepare_tokenizer

PROVENANCE = "mua_provenance.json"


@dataclass
class Provenance:
    """Where an imported checkpoint's weights came from."""

    file: str  # the GGUF file's name
    sha256: str
    package: Optional[str] = None  # the Python package that shipped it, when imported by package name
    version: Optional[str] = None
    chat_template: Optional[str] = None  # the template put on it at import (None: the file's own)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _check_out_dir(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} exists and is not a directory; name a new directory for the checkpoint")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise ConfigError(f"{out} is not empty; name a new directory, or pass --overwrite to replace it")


def import_gguf(source: str, out_dir: str | Path, *, overwrite: bool = False,
                chat_template: Optional[str] = None) -> tuple[Path, Provenance]:
    """Write the checkpoint of ``source`` (a ``.gguf`` or ``.whl`` file, a package: see :mod:`.gguf_source`) to
    ``out_dir``. ``chat_template`` (``hermes``, ``llama3_json`` or a file) replaces the file's own template and
    must then show tool use (see :mod:`.templates`); the file's own template is kept as it is otherwise."""
    out = Path(out_dir)
    _check_out_dir(out, overwrite)
    found = find_gguf(source)
    gguf = found.path
    provenance = Provenance(file=gguf.name, sha256=sha256_of(gguf), package=found.package, version=found.version,
                            chat_template=chat_template)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{out.name}.importing-", dir=out.parent))
    except OSError as exc:
        raise ConfigError(f"cannot create {out}: {exc.strerror or exc}") from None
    try:
        _write_checkpoint(gguf, work, chat_template, str(source))
        (work / PROVENANCE).write_text(json.dumps(asdict(provenance), indent=2, sort_keys=True) + "\n")
        work.chmod(0o777 & ~_umask())  # mkdtemp makes it private; the checkpoint is an ordinary folder
        if out.exists():
            shutil.rmtree(out)  # empty, or --overwrite
        os.replace(work, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out, provenance


def _write_checkpoint(gguf: Path, out: Path, chat_template: Optional[str], source: str) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    folder, name = str(gguf.parent), gguf.name
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    except Exception as exc:  # transformers raises many kinds on a file it cannot read
        raise ConfigError(f"{gguf}: cannot read its tokenizer: {type(exc).__name__}: {exc}") from None
    if chat_template is not None:  # before the weights: a wrong template name costs no loading time
        prepare_tokenizer(tokenizer, source, chat_template)
    try:
        loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype="float32")
    except ImportError as exc:
        raise ConfigError(f'reading GGUF weights needs the extra `real`: pip install -e ".[real]" ({exc})') from None
    except Exception as exc:
        raise ConfigError(f"{gguf}: cannot load it as a causal LM (transformers reads llama-family GGUF "
                          f"files): {type(exc).__name__}: {exc}") from None
    config = loaded.config
    if hasattr(config, "quantization_config"):  # the weights are dequantised now
        delattr(config, "quantization_config")
    model = AutoModelForCausalLM.from_config(config, dtype="float32")
    model.load_state_dict(loaded.state_dict(), strict=True)
    del loaded
    model.generation_config = GenerationConfig(
        bos_token_id=config.bos_token_id, eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    _portable_tokenizer_config(out / "tokenizer_config.json", config)


def _portable_tokenizer_config(path: Path, config) -> None:
    """The saved tokenizer config made loadable by older transformers too (vLLM pins its own version): the
    generic fast-tokenizer class, no machine-local fields, the model's real context length."""
    from ..io.files import read_json

    settings = read_json(path, what="tokenizer config", expect=dict)
    settings["tokenizer_class"] = "PreTrainedTokenizerFast"
    for key in ("is_local", "local_files_only"):
        settings.pop(key, None)
    if getattr(config, "max_position_embeddings", None):
        settings["model_max_length"] = config.max_position_embeddings
    path.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")
