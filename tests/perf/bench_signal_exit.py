"""How `mua eval` ends on SIGINT / SIGTERM sent at different moments (start-up, mid-run): exit codes, the last
stderr line, and seconds from the signal to the exit. A script, not a test:
``python tests/perf/bench_signal_exit.py [tries per moment]``."""
from __future__ import annotations

import json
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "benchmarks/pack/examples/bookings"
MUA = [sys.executable, "-c", "import sys; from mua.harness.cli import main; sys.exit(main(sys.argv[1:]))"]


def slow_pack(tmp: Path) -> Path:
    """The bookings pack whose booking tool takes 50 ms, so that a run lasts a few seconds."""
    folder = tmp / "pack"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", "generate.py"))
    tools = (folder / "tools.py").read_text()
    (folder / "tools.py").write_text(tools.replace("    if name not in NAMES:\n",
                                                  "    import time; time.sleep(0.05)\n    if name not in NAMES:\n", 1))
    return folder


def one(pack: Path, out: Path, sig: int, moment: float | str) -> tuple[int, float, str]:
    shutil.rmtree(out, ignore_errors=True)
    argv = [*MUA, "eval", "--benchmark", "pack", "--data-dir", str(pack), "--agent", "gold", "--limit", "40",
            "--no-progress", "--out", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if moment == "mid-run":
        episodes = out / "episodes.jsonl"
        while proc.poll() is None and not (episodes.is_file() and episodes.stat().st_size):
            time.sleep(0.01)
    else:
        time.sleep(float(moment))
    sent = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    lines = [line for line in err.splitlines() if line.strip()]
    ending = "traceback" if "Traceback" in err else (lines[-1] if len(lines) == 1 else f"{len(lines)} lines")
    return proc.returncode, time.monotonic() - sent, ending


tries = int(sys.argv[1]) if len(sys.argv) > 1 else 5
with tempfile.TemporaryDirectory() as tmp:
    pack = slow_pack(Path(tmp))
    for sig in (signal.SIGINT, signal.SIGTERM):
        for moment in (0.3, 0.8, 1.2, "mid-run"):
            results = [one(pack, Path(tmp) / "run", sig, moment) for _ in range(tries)]
            took = [t for _, t, _ in results]
            endings = sorted({f"{code}: {ending}" for code, _, ending in results})
            print(json.dumps({"signal": sig.name, "moment": moment, "tries": tries,
                              "max_s": round(max(took), 3), "median_s": round(statistics.median(took), 3),
                              "endings": endings}))
