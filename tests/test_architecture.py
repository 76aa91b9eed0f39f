"""The import rules of ARCHITECTURE.md, checked on the source: which part may import which, and no cycles."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("harness", "benchmarks", "training")
# part -> parts it may import (besides itself). The command line (harness.cli) is the one place that puts the
# parts together: `mua train` imports training. Benchmarks are found through the registry, never imported.
ALLOWED = {"harness": set(), "harness.cli": {"training"}, "benchmarks": {"harness"}, "training": {"harness"}}


def _part(module: str) -> str:
    return "harness.cli" if module.startswith("mua.harness.cli") else module.split(".")[1]


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts[:-1]) if rel.name == "__init__" else list(rel.parts)
    return "mua." + ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Modules of mua that ``path`` imports anywhere (module level or inside functions)."""
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("mua.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("mua."):
                continue
            found.add(target)
            found |= {f"{target}.{a.name}" for a in node.names}  # `from . import x` imports a module
    return found


def _graph() -> dict[str, set[str]]:
    files = [p for part in PARTS for p in sorted((ROOT / part).rglob("*.py"))]
    modules = {_module(p): p for p in files}
    return {m: {t for t in _imports(p) if t in modules and t != m} for m, p in modules.items()}


def test_parts_import_only_what_architecture_allows():
    bad = [f"{m} imports {t}" for m, targets in _graph().items() for t in sorted(targets)
           if t.split(".")[1] != m.split(".")[1] and t.split(".")[1] not in ALLOWED[_part(m)]]
    assert bad == []


# Inside the harness, folders are layers, lowest first: a module imports only its own layer and the ones below.
# The interface core is the modules at the top of harness/ (types, interfaces, metrics, registry, runner, ...).
LAYERS = ("errors", "io", "core", "models", "users", "results", "run", "view", "tools", "cli")


def _layer(module: str) -> int:
    name = module.split(".")[2] if module.count(".") >= 2 else "core"
    return LAYERS.index(name) if name in LAYERS else LAYERS.index("core")


def _layer_violations(graph: dict[str, set[str]]) -> list[str]:
    return [f"{m} imports {t}" for m, targets in graph.items() if m.startswith("mua.harness.")
            for t in sorted(targets) if t.startswith("mua.harness.") and _layer(t) > _layer(m)]


def test_harness_imports_run_down_its_layers():
    assert _layer_violations(_graph()) == []
    # the check sees an import that runs back up
    assert _layer_violations({"mua.harness.io.files": {"mua.harness.types", "mua.harness.errors"},
                              "mua.harness.results.stats": {"mua.harness.run.plan"},
                              "mua.harness.view.page": {"mua.harness.results.store"}}) == [
        "mua.harness.io.files imports mua.harness.types", "mua.harness.results.stats imports mua.harness.run.plan"]


def test_harness_top_is_the_interface_core():
    """At most 12 modules at the top of harness/; the rest sit in the folder of their job (a layer above)."""
    top = sorted(p.name for p in (ROOT / "harness").glob("*.py") if p.name != "__init__.py")
    assert len(top) <= 12, top
    folders = sorted(p.name for p in (ROOT / "harness").iterdir() if (p / "__init__.py").is_file())
    assert set(folders) <= set(LAYERS), folders


# Between adapters (packages under benchmarks/): an adapter imports only itself, the shared layers (modules
# directly under benchmarks/, e.g. records.py) and the adapters it declares it builds on. A task pack is a tau2
# domain read from data, so benchmarks/pack builds on benchmarks/tau2 (its domain contract, environment, scorer,
# toolkit and users). Shared layers import no adapter.
BUILDS_ON = {"pack": {"tau2"}}


def _adapter_violations(graph: dict[str, set[str]]) -> list[str]:
    adapters = {m.split(".")[2] for m in graph if m.count(".") >= 3 and m.startswith("mua.benchmarks.")}

    def adapter(module: str) -> str | None:  # None: a shared layer (or the benchmarks package itself)
        parts = module.split(".")
        return parts[2] if len(parts) > 2 and parts[2] in adapters else None

    bad = []
    for m, targets in graph.items():
        if not m.startswith("mua.benchmarks"):
            continue
        for t in sorted(targets):
            if not t.startswith("mua.benchmarks"):
                continue
            source, target = adapter(m), adapter(t)
            if target is not None and target != source and target not in BUILDS_ON.get(source or "", set()):
                bad.append(f"{m} imports {t}")
    return bad


def test_adapters_import_only_shared_layers_and_what_they_build_on():
    assert _adapter_violations(_graph()) == []
    # the check sees a violation when there is one (the graph's modules name their adapter)
    assert _adapter_violations({"mua.benchmarks.bfcl.data": {"mua.benchmarks.tau2.domain"},
                                "mua.benchmarks.tau2.domain": set(),
                                "mua.benchmarks.records": {"mua.benchmarks.bfcl.data"},
                                "mua.benchmarks.pack.loader": {"mua.benchmarks.tau2.domain",
                                                               "mua.benchmarks.records"}}) == [
        "mua.benchmarks.bfcl.data imports mua.benchmarks.tau2.domain",
        "mua.benchmarks.records imports mua.benchmarks.bfcl.data"]


def test_no_import_cycles_between_modules():
    graph = _graph()
    # a package's __init__ re-exporting its own modules is not a cycle worth reporting
    edges = {m: {t for t in ts if not (m.endswith("__init__") or t.startswith(m + "."))} for m, ts in graph.items()}
    cycles, state = [], {}

    def visit(m: str, stack: list[str]) -> None:
        state[m] = "open"
        for t in sorted(edges[m]):
            if state.get(t) == "open":
                cycles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in state:
                visit(t, stack + [t])
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_harness_code_names_no_benchmark_or_subset():
    """Benchmark knowledge lives in the adapters: no string in harness code (docstrings and comments aside)
    names an installed benchmark or one of its subsets."""
    from mua.harness.registry import benchmark_class, benchmark_names

    words = set(benchmark_names()) | {"bfcl", "acebench"}
    words |= {s for name in benchmark_names() for s in benchmark_class(name).subsets}
    words -= {"tasks"}  # the task-pack adapter's one subset is a plain word the harness uses for itself
    found = []
    for path in sorted((ROOT / "harness").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        found += [f"{path.relative_to(ROOT)}:{n.lineno}: {n.value[:60]!r}" for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
                  and any(re.search(rf"(?<![a-z0-9]){re.escape(w.lower())}(?![a-z0-9])", n.value.lower())
                          for w in words)]
    assert found == []


def test_architecture_document_names_every_part():
    """ARCHITECTURE.md names every module of the harness, its model backends and training (by file name), every
    adapter (``benchmarks/<name>/``) and every shared layer under benchmarks/ (``benchmarks/<name>.py``)."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    folders = [ROOT / "training", *sorted(p.parent for p in (ROOT / "harness").rglob("__init__.py"))]
    modules = [p for folder in folders for p in sorted(folder.glob("*"))
               if p.suffix in (".py", ".json", ".html") and p.name != "__init__.py" and folder.name != "cli"]
    missing = [str(p.relative_to(ROOT)) for p in modules if f"`{p.name}`" not in text and
               f"{p.relative_to(ROOT)}`" not in text and f"/{p.name}`" not in text]
    adapters = [p for p in sorted((ROOT / "benchmarks").iterdir()) if (p / "__init__.py").is_file()]
    missing += [f"benchmarks/{p.name}/" for p in adapters if f"benchmarks/{p.name}" not in text]
    shared = [p for p in sorted((ROOT / "benchmarks").glob("*.py")) if p.name != "__init__.py"]
    missing += [f"benchmarks/{p.name}" for p in shared if p.name not in text]
    assert missing == []
