"""Tool definitions from a pack's ``tools.py``: plain Python functions ``fn(db, arg1, ...)``.

The first parameter receives the episode's database (a copy-on-write :class:`Overlay`); the others become the
tool's JSON-schema parameters, typed from their annotations (the same mechanism as tau2's tools,
``benchmarks/tau2/toolkit.py``). The description is the docstring up to an
``Args:`` section, whose ``name: text`` lines describe the parameters. Loading tools.py imports code the pack's
author wrote (as installing an adapter does), in a process of its own (``isolation.py``, ``worker.py``);
nothing in a data file is ever evaluated."""
from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

from mua.harness.errors import DataError

from ..tau2.domain import ToolDef
from ..tau2.toolkit import docstring_text, make_tool


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


def tool_defs(module: ModuleType, relpath: str) -> dict[str, ToolDef]:
    """Every public function defined in the module, in source order, as a tool (in the worker process, whose
    dispatch is the function itself). Each is re-executed when a trajectory is scored, so tools must be
    deterministic functions of the database and their arguments."""
    functions = [f for name, f in vars(module).items()
                 if inspect.isfunction(f) and not name.startswith("_") and f.__module__ == module.__name__]
    if not functions:
        raise DataError(f"pack: {relpath} defines no tool functions (public functions taking db first)")
    tools = {}
    for fn in sorted(functions, key=lambda f: f.__code__.co_firstlineno):
        where = f"{relpath}, tool {fn.__name__}"
        description, docs = docstring_text(fn.__doc__)
        # a pack's schema leaves defaults out (packs have always been shown them that way)
        tool = make_tool(fn, fn.__name__, description, docs, "Tools", "write", where, defaults=False)
        if not description:
            raise DataError(f"{where}: needs a docstring (it is the tool's description the agent sees)")
        tools[fn.__name__] = tool
    return tools
