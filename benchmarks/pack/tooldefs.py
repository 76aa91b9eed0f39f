"""Tool definitions from a pack's ``tools.py``: plain Python functions ``fn(db, arg1, ...)``.

The first parameter receives the episode's database (a copy-on-write :class:`Overlay`); the others become the
tool's JSON-schema parameters, typed from their annotations (the same mechanism as tau2's tools,
``benchmarks/tau2/toolkit.py``). The description is the docstring up to an
``Args:`` section, whose ``name: text`` lines describe the parameters. Loading tools.py imports code the pack's
author wrote (as installing an adapter does); nothing in a data file is ever evaluated."""
from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from mua.harness.errors import DataError

from ..tau2.domain import Record, ToolDef
from ..tau2.toolkit import docstring_text, make_tool
from .isolation import DEFAULT_TIMEOUT_S, run_isolated


def import_tools(path: Path, relpath: str) -> ModuleType:
    """Import the pack's tools.py under a private module name (DataError naming the file on failure)."""
    if not path.is_file():
        raise DataError(f"pack: missing {relpath} (plain Python functions, one per tool)")
    name = f"_mua_pack_tools_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DataError(f"pack: cannot import {relpath}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)  # the pack author's code, imported like an adapter's
    except (Exception, SystemExit) as e:  # SystemExit at import time must not end mua silently either
        raise DataError(f"pack: importing {relpath} failed: {type(e).__name__}: {e}") from None
    sys.modules[name] = module
    return module


def _returning_records(fn: Callable) -> Callable:
    # A dict a tool returns is shown to the agent verbatim as JSON (tau2 does so for its pydantic records).
    def call(db: Any, **kwargs: Any) -> Any:
        result = fn(db, **kwargs)
        return Record(result) if isinstance(result, dict) and not isinstance(result, Record) else result
    return call


def _isolated(fn: Callable, name: str, timeout_s: float) -> Callable:
    # The author's code runs in its own thread with a time limit; what it returns is serialised there, so the
    # caller gets text or ToolFailed (an "Error: ..." tool result), whatever the code does (isolation.py).
    records = _returning_records(fn)

    def call(db: Any, **kwargs: Any) -> str:
        return run_isolated(records, db, kwargs, name=name, timeout_s=timeout_s)
    return call


def tool_defs(module: ModuleType, relpath: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, ToolDef]:
    """Every public function defined in the module, in source order, as a tool. Each is re-executed when a
    trajectory is scored, so tools must be deterministic functions of the database and their arguments."""
    functions = [f for name, f in vars(module).items()
                 if inspect.isfunction(f) and not name.startswith("_") and f.__module__ == module.__name__]
    if not functions:
        raise DataError(f"pack: {relpath} defines no tool functions (public functions taking db first)")
    tools = {}
    for fn in sorted(functions, key=lambda f: f.__code__.co_firstlineno):
        where = f"{relpath}, tool {fn.__name__}"
        description, docs = docstring_text(fn.__doc__)
        # a pack's schema leaves defaults out (packs have always been shown them that way)
        tool = make_tool(fn, fn.__name__, description, docs, "Tools", "write", where, defaults=False,
                         call=_isolated(fn, fn.__name__, timeout_s))
        if not description:
            raise DataError(f"{where}: needs a docstring (it is the tool's description the agent sees)")
        tools[fn.__name__] = tool
    return tools
