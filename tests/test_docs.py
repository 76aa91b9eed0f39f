"""Every command in the README's ```bash blocks runs, offline, in a scratch folder, block by block and in order
(a block's variables carry to its later lines). A line marked ``# needs: WHAT`` (an install, an endpoint, a
terminal, a long run) is skipped by that visible rule and counted; only the reasons in NEEDS may be used."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
NEEDS = {"install": "a fresh virtual environment", "long": "the whole test suite (about 20 minutes)",
         "terminal": "a person typing", "endpoint": "a model endpoint and its key",
         "runs": "runs of your own models"}
_MARK = re.compile(r"#\s*needs:\s*([a-z]+)")


def bash_blocks(text: str) -> list[list[str]]:
    """The commands of each ```bash block: continuation lines joined, blank and comment-only lines dropped."""
    blocks, current, inside = [], [], False
    for line in text.splitlines():
        if line.startswith("```"):
            if inside:
                blocks.append(_joined(current))
                current = []
            inside = line.strip() == "```bash" and not inside
            continue
        if inside:
            current.append(line)
    return blocks


def _joined(lines: list[str]) -> list[str]:
    commands, pending = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


def test_bash_blocks_join_continuations_and_read_marks():
    text = "x\n```bash\nA=1\n# a comment\nmua eval \\\n  --limit 2   # needs: endpoint\n```\n```\nnot bash\n```\n"
    assert bash_blocks(text) == [["A=1", "mua eval    --limit 2   # needs: endpoint"]]
    assert _MARK.search(bash_blocks(text)[0][1]).group(1) == "endpoint"


def _sandbox(root: Path) -> Path:
    """A working folder that sees the repository's inputs (packs, configs, baselines) and writes only to itself."""
    for name in ("benchmarks", "docs", "training"):
        (root / name).symlink_to(REPO / name)
    (root / "results").mkdir()
    (root / "results" / "baselines").symlink_to(REPO / "results" / "baselines")
    return root


@pytest.mark.slow
def test_readme_commands_run(data_dir, tmp_path):
    blocks = bash_blocks(README.read_text(encoding="utf-8"))
    sandbox = _sandbox(tmp_path)
    env = dict(os.environ, MUA_DATA_DIR=str(data_dir), HF_HUB_OFFLINE="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    skipped: Counter[str] = Counter()
    ran = 0
    for block in blocks:
        script = ["set -euo pipefail"]
        for command in block:
            mark = _MARK.search(command)
            if mark:
                assert mark.group(1) in NEEDS, f"unknown mark in README: {command}"
                skipped[mark.group(1)] += 1
                continue
            script.append(command)
            ran += 1
        if len(script) == 1:
            continue
        done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=sandbox, env=env, capture_output=True,
                              text=True, timeout=600, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"README block failed:\n{chr(10).join(script)}\n--- stderr ---\n" \
                                     f"{done.stderr[-3000:]}"
    print(f"README commands: {ran} run, {sum(skipped.values())} skipped by their mark "
          f"({', '.join(f'{n} {k}: {NEEDS[k]}' for k, n in sorted(skipped.items()))})")
    assert ran >= 12 and skipped["endpoint"] >= 1  # the rule is applied, and most commands do run


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_between_the_readme_and_the_docs_resolve():
    pages = [README, *sorted((REPO / "docs").glob("*.md"))]
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://")):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            assert file.exists(), f"{page.name}: link to {target}: no such file"
            if anchor:
                headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.M)
                assert anchor in {_slug(h) for h in headings}, f"{page.name}: link to {target}: no such heading"
