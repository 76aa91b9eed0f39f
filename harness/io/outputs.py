"""Nothing a user owns is overwritten: every command that writes a file or a folder asks :func:`check_output`
first, which refuses a path that already holds something (or is the command's own input) unless the user
passed ``--overwrite``, and names what is there.

``--overwrite`` writes into the path anyway (files of the same name are replaced); it never deletes anything
else, so a command can still read an input that it is told to overwrite."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Iterable, Optional

from ..errors import ConfigError, DataError
from .files import read_json

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf")


def add_overwrite_flag(p: argparse.ArgumentParser, what: str = "the output") -> None:
    p.add_argument("--overwrite", action="store_true",
                   help=f"write {what} even where something already is (a file, a checkpoint, a run, the input)")


def describe(path: Path) -> str:
    """What a path holds, in a few words, for a message: a mua run, a training output, a model checkpoint, a
    saved dataset, a file of N bytes, or the first names in a folder."""
    path = Path(path)
    if path.is_file():
        return f"a file of {path.stat().st_size:,} bytes"
    if not path.is_dir():
        return "something that is neither a file nor a folder"
    names = sorted(p.name for p in path.iterdir())
    if "episodes.jsonl" in names:
        return "a mua run (episodes.jsonl)"
    if "train_config.json" in names:
        return "a mua train output (train_config.json)"
    if "config.json" in names and any(n.endswith(WEIGHT_SUFFIXES) for n in names):
        return "a model checkpoint (config.json and weights)"
    if "dataset_info.json" in names or "state.json" in names:
        return "a saved dataset"
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{len(names)} entr{'y' if len(names) == 1 else 'ies'} ({shown})"


def is_mua_run(path: Path) -> bool:
    """A folder ``mua eval`` wrote (which it resumes rather than overwrites)."""
    if (path / "episodes.jsonl").is_file():
        return True
    if not (path / "config.json").is_file():  # a new folder, as most runs start: nothing to read
        return False
    try:
        config = read_json(path / "config.json", what="run config")
    except DataError:
        return False
    return isinstance(config, dict) and "benchmark" in config and "agent" in config


def _same_or_inside(output: Path, given: Path) -> bool:
    try:
        out, inp = output.resolve(), given.resolve()
    except OSError:
        return False
    return out == inp or out in inp.parents


def check_not_input(path: Path | str, *, flag: str, inputs: Iterable[Optional[Path | str]], hint: str = "") -> None:
    """Refuse (ConfigError) to write ``path`` when it is one of ``inputs`` or holds one: it would replace it.
    For commands that resume into their output folder (mua sft, mua train) and so take no --overwrite."""
    for given in inputs:
        if given is not None and _same_or_inside(Path(path), Path(given)):
            raise ConfigError(f"{flag} {path} is this command's own input {given} ({describe(Path(given))}); "
                              f"writing there would replace it: {hint or f'name another {flag}'}")


def check_not_inside(path: Path | str, *, flag: str, folders: Iterable[Path | str], what: str) -> None:
    """Refuse (ConfigError) to write ``path`` inside one of ``folders`` (``what`` they are, e.g. "the run"):
    a file written there would become part of, or replace a file of, something the command reads."""
    try:
        target = Path(path).resolve()
    except OSError:
        return
    for folder in folders:
        where = Path(folder).resolve()
        if target == where or where in target.parents:
            raise ConfigError(f"{flag} {path} is inside {what} {folder}; name a file outside it")


def check_output(path: Path | str, *, flag: str, overwrite: Optional[bool],
                 inputs: Iterable[Optional[Path | str]] = (), command: str = "") -> None:
    """Refuse (ConfigError, before any work) to write ``path`` when it is one of ``inputs`` (or holds one) or
    already holds something, unless ``overwrite``. An empty folder or a missing path is always fine.
    ``overwrite=None``: the command has no --overwrite (what is there must be moved by the user)."""
    path = Path(path)
    hint = f"name another {flag}"
    if overwrite is not None:
        hint += f", or pass --overwrite{f' to `{command}`' if command else ''} to write there anyway"
    if not overwrite and inputs:  # most commands (mua eval) name no input to protect
        check_not_input(path, flag=flag, inputs=inputs, hint=hint)
    if overwrite or not path.exists():
        return
    if path.is_dir() and not any(path.iterdir()):
        return
    if path.is_file() and path.stat().st_size == 0:
        return
    raise ConfigError(f"{flag} {path} already holds {describe(path)}: {hint}")
