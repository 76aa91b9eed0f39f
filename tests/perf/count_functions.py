"""How many of mua's own functions one gold episode touches: `mua eval --benchmark tau2 --subset retail --agent
gold --task-ids 0` under cProfile, counting the named functions of mua's source outside tests/ (class bodies
included, as cProfile sees them; module bodies, comprehensions and lambdas not). mua's command module is
imported before the profile starts, as an installed `mua` has it loaded before it parses flags.

    python tests/perf/count_functions.py [DATA_DIR] [--list]

Target (issue 39): at most 280.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
from collections import Counter
from pathlib import Path

from mock_endpoint import ROOT  # noqa: E402 - beside this file

from mua.harness.cli import main


def project_functions(stats: pstats.Stats) -> set[tuple[str, int, str]]:
    out = set()
    for filename, line, name in stats.stats:  # type: ignore[attr-defined]
        path = Path(filename)
        if not path.is_absolute() or name.startswith("<"):
            continue
        try:
            rel = path.resolve().relative_to(ROOT)
        except ValueError:
            continue
        if rel.parts[0] in ("tests", ".venv") or rel.parts[0].startswith("."):
            continue
        out.add((str(rel), line, name))
    return out


def main_() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data_dir", nargs="?", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--list", action="store_true", help="every function, by module")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["eval", "--benchmark", "tau2", "--subset", "retail", "--agent", "gold", "--task-ids", "0",
                "--no-progress", "--data-dir", args.data_dir, "--out", str(Path(tmp) / "run")]
        prof = cProfile.Profile()
        code = prof.runcall(main, argv)
    if code != 0:
        raise SystemExit(f"mua eval exited {code}")
    funcs = project_functions(pstats.Stats(prof))
    per_module = Counter(f[0] for f in funcs)
    if args.list:
        for module, n in per_module.most_common():
            names = " ".join(f[2] for f in sorted(funcs) if f[0] == module)
            print(f"{n:3d} {module}: {names}")
    print(f"{len(funcs)} project functions in {len(per_module)} modules")


if __name__ == "__main__":
    main_()
