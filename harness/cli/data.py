"""`mua data path|verify|pull`: find, check and fetch the benchmark data."""
from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from ..errors import DataError
from ..io import data


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("data", help="find, verify or pull the benchmark data",
                       description="Benchmark data is searched in: --data-dir, $MUA_DATA_DIR, ../shared/data, "
                                   "then the user cache that `mua data pull` fills.")
    p.add_argument("action", choices=("path", "verify", "pull"))
    p.add_argument("--data-dir", help="data directory (default: search order above)")
    p.add_argument("--only", default="", metavar="PREFIX", help="only files under this prefix (a benchmark's folder)")
    p.add_argument("--mirror", help="pull from this directory or URL laid out like the data folder instead of "
                                    "the upstream sources")
    p.set_defaults(func=run)


def _report(checks: list[data.FileCheck]) -> int:
    for c in checks:
        if c.status != "ok":
            print(f"{c.status:8} {c.path}" + (f"  ({c.detail})" if c.detail else ""))
    counts = Counter(c.status for c in checks)
    print(", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return 0 if counts.keys() <= {"ok"} else 1


def run(args: argparse.Namespace) -> int:
    if args.action == "path":
        print(data.resolve_data_dir(args.data_dir))
        return 0
    if args.action == "verify":
        return _report(data.verify(data.resolve_data_dir(args.data_dir), args.only))
    dest = Path(args.data_dir) if args.data_dir else data.cache_dir()
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DataError(f"cannot create {dest}: {e}") from None
    print(f"pulling into {dest}")
    return _report(data.pull(dest, mirror=args.mirror, prefix=args.only,
                             progress=lambda path, what: print(f"{what:8} {path}", flush=True)))
