"""How close `mua eval` comes to the endpoint's own limit (the replay ceiling), as ratios measured in one run.

Method (the tools are in ../shared/tools, see their README):
1. Start the instant mock endpoint (mock_openai.py) and a recording proxy in front of it (ceiling_load.py capture).
   Run `mua eval` through the proxy at concurrency 1 for each workload: the capture holds, episode by episode, the
   exact request bodies mua sends (tau2 retail, agent + user simulator + NL judge all on the mock).
2. Interleaved repeats, each of them:
   - steady: `mua eval` on the 800-episode workload at --concurrency 32 straight to the mock. Its steady rate is
     episodes / (time of the endpoint's first request -> time the endpoint has answered every request of the run),
     read by polling the mock's /stats every 20 ms; so it leaves out process start-up and the final file writes.
     Then `ceiling_load.py replay` of the same captured requests at the same concurrency: a client that does
     nothing else (requests prepared before its clock starts), while /stats is polled the same way.
   - start-up: `mua eval` on the 80-episode workload, wall clock from spawn to exit (everything included), and
     the replay of its requests. Ratios: mua episodes/s / replay episodes/s of the same repeat.
   The order of mua and replay alternates between repeats so that load drift hits both alike. mua starts from
   cached bytecode (as an installed package), kept in a scratch PYTHONPYCACHEPREFIX that the capture runs fill.
3. Prints each ratio as median [min-max] over the repeats, with CPU seconds per episode of mua, the replay client
   and the mock endpoint (from /proc), and the machine's load average before and after.

    python tests/perf/bench_ceiling.py [--repeats 5] [--steady-tasks 100 --steady-trials 8] [--startup-tasks 80]

Targets (issue 17): steady >= 0.8 of the ceiling, wall clock incl. start-up >= 0.5.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mock_endpoint import MOCK, ROOT, TOOLS, free_port, requests_seen, start_mock  # noqa: E402 - beside this file

CEILING = TOOLS / "ceiling_load.py"
POLL_S = 0.02
CLK_TCK = os.sysconf("SC_CLK_TCK")








def wait_port(port: int) -> None:
    for _ in range(400):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.025)
    raise SystemExit(f"nothing listening on port {port}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


@dataclass(frozen=True)
class Workload:
    name: str
    tasks: int
    trials: int

    @property
    def episodes(self) -> int:
        return self.tasks * self.trials


def eval_cmd(work: Workload, base_url: str, out: str, concurrency: int, data_dir: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from mua.harness.cli import main; sys.exit(main())", "eval", "--benchmark", "tau2", "--subset", "retail",
            "--limit", str(work.tasks), "--trials", str(work.trials),
            "--agent-model", "mock", "--agent-base-url", base_url, "--user-model", "mock", "--user-base-url", base_url,
            "--judge-model", "mock", "--judge-base-url", base_url,
            "--concurrency", str(concurrency), "--no-progress", "--out", out, "--data-dir", data_dir]


ENV = dict(os.environ, OPENAI_API_KEY="x")
# mua's modules start from cached bytecode, as an installed package does (pip compiles on install), even where the
# environment sets PYTHONDONTWRITEBYTECODE: the cache goes to a scratch folder (PYTHONPYCACHEPREFIX, set in main)
ENV.pop("PYTHONDONTWRITEBYTECODE", None)


def capture(work: Workload, mock_port: int, data_dir: str, scratch: Path) -> tuple[Path, int]:
    """Record mua's request bodies for a workload at concurrency 1; (bodies file, number of requests)."""
    bodies, port = scratch / f"bodies-{work.name}.jsonl", free_port()
    proxy = subprocess.Popen([sys.executable, str(CEILING), "capture", "--listen", str(port), "--upstream",
                              str(mock_port), "--out", str(bodies)], stdout=subprocess.DEVNULL)
    try:
        wait_port(port)
        with tempfile.TemporaryDirectory(dir=scratch) as out:
            subprocess.run(eval_cmd(work, f"http://127.0.0.1:{port}/v1", out, 1, data_dir), env=ENV, check=True,
                           stdout=subprocess.DEVNULL)
    finally:
        proxy.terminate()
        proxy.wait()
    with bodies.open() as f:
        n = sum(1 for line in f if '"/v1/chat/completions"' in line)
    return bodies, n


@dataclass
class Measured:
    eps: float
    cpu_per_episode_ms: float
    endpoint_cpu_per_episode_ms: float


def watch(proc: subprocess.Popen, mock: subprocess.Popen, port: int, expected: int, episodes: int,
          t_spawn: float) -> tuple[float, float, float]:
    """Poll /stats while proc runs: (time of first request, time all requests answered, time of exit)."""
    before = requests_seen(port)
    first = last = None
    while True:
        seen = requests_seen(port) - before
        now = time.perf_counter()
        if first is None and seen > 0:
            first = now
        if last is None and seen >= expected:
            last = now
        if proc.poll() is not None:
            break
        time.sleep(POLL_S)
    end = time.perf_counter()
    if first is None or last is None:
        raise SystemExit(f"the run sent {seen} of {expected} expected requests")
    return first - t_spawn, last - t_spawn, end - t_spawn


def run_mua(work: Workload, port: int, mock: subprocess.Popen, expected: int, conc: int, data_dir: str,
            scratch: Path, steady: bool) -> Measured:
    with tempfile.TemporaryDirectory(dir=scratch) as out:
        cpu0, ru0 = cpu_seconds(mock.pid), resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.Popen(eval_cmd(work, f"http://127.0.0.1:{port}/v1", out, conc, data_dir), env=ENV,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        first, last, end = watch(proc, mock, port, expected, work.episodes, t0)
        proc.wait()
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # only this child was reaped since ru0
        err = proc.stderr.read().decode() if proc.stderr else ""
        if proc.returncode != 0:
            raise SystemExit(f"mua eval failed: {err[-500:]}")
        summary = json.loads((Path(out) / "summary.json").read_text())
        if summary["finished"] != work.episodes or summary["errors"]:
            raise SystemExit(f"mua eval finished {summary['finished']}/{work.episodes}, {summary['errors']} errors")
    mock_cpu = cpu_seconds(mock.pid) - cpu0
    mua_cpu = (ru.ru_utime - ru0.ru_utime) + (ru.ru_stime - ru0.ru_stime)
    eps = work.episodes / (last - first) if steady else work.episodes / end
    return Measured(eps, 1000 * mua_cpu / work.episodes, 1000 * mock_cpu / work.episodes)


def run_replay(work: Workload, port: int, mock: subprocess.Popen, bodies: Path, conc: int) -> Measured:
    cpu0 = cpu_seconds(mock.pid)
    proc = subprocess.Popen([sys.executable, str(CEILING), "replay", "--port", str(port), "--bodies", str(bodies),
                             "--concurrency", str(conc), "--episodes", str(work.episodes)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while proc.poll() is None:  # the same /stats polling as during mua's runs
        requests_seen(port)
        time.sleep(POLL_S)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"replay failed: {err.decode()[-500:]} {out.decode()[-500:]}")
    res = json.loads(out.decode().strip().splitlines()[-1])
    mock_cpu = cpu_seconds(mock.pid) - cpu0
    return Measured(res["eps"], 1000 * res["client_cpu_s"] / work.episodes, 1000 * mock_cpu / work.episodes)


def spread(values: list[float], fmt: str = ".2f") -> str:
    return f"{statistics.median(values):{fmt}} [{min(values):{fmt}}-{max(values):{fmt}}]"


def load_line() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--steady-tasks", type=int, default=100)
    ap.add_argument("--steady-trials", type=int, default=8)
    ap.add_argument("--startup-tasks", type=int, default=80)
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args()
    if args.repeats < 1 or args.concurrency < 1 or min(args.steady_tasks, args.steady_trials, args.startup_tasks) < 1:
        print("bench_ceiling: --repeats, --concurrency, task and trial counts must be >= 1", file=sys.stderr)
        return 2
    for tool in (MOCK, CEILING):
        if not tool.is_file():
            print(f"bench_ceiling: {tool} not found (the measuring tools live in ../shared/tools)", file=sys.stderr)
            return 2
    steady_w = Workload("steady", args.steady_tasks, args.steady_trials)
    start_w = Workload("startup", args.startup_tasks, 1)
    print(f"before: {load_line()}", flush=True)
    mock, port = start_mock()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-ceiling-") as tmp:
            scratch = Path(tmp)
            ENV["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")  # filled by the capture runs (unmeasured)
            captured = {w.name: capture(w, port, args.data_dir, scratch) for w in (steady_w, start_w)}
            for w in (steady_w, start_w):
                print(f"captured {w.name}: {w.episodes} episodes, {captured[w.name][1]} requests", flush=True)
            rows: dict[str, list[tuple[Measured, Measured]]] = {"steady": [], "startup": []}
            for r in range(args.repeats):
                for w in (steady_w, start_w):
                    bodies, expected = captured[w.name]

                    def mua(w: Workload = w, expected: int = expected) -> Measured:
                        return run_mua(w, port, mock, expected, args.concurrency, args.data_dir, scratch,
                                       steady=w.name == "steady")

                    def replay(w: Workload = w, bodies: Path = bodies) -> Measured:
                        return run_replay(w, port, mock, bodies, args.concurrency)

                    if r % 2 == 0:
                        m, c = mua(), replay()
                    else:
                        c, m = replay(), mua()
                    rows[w.name].append((m, c))
                    print(f"  repeat {r + 1} {w.name}: mua {m.eps:.1f} eps/s, ceiling {c.eps:.1f} eps/s, "
                          f"ratio {m.eps / c.eps:.2f}", flush=True)
    finally:
        mock.kill()
        mock.wait()
    print(f"after: {load_line()}")
    labels = {"steady": f"steady eps/s, {steady_w.episodes} episodes, judge on, concurrency {args.concurrency}",
              "startup": f"wall clock incl. start-up, {start_w.episodes} episodes, concurrency {args.concurrency}"}
    return 0 if report(rows, labels) else 1


def report(rows: dict[str, list[tuple[Measured, Measured]]], labels: dict[str, str]) -> bool:
    """Prints each workload's figures against its target; whether every target was met."""
    targets = {"steady": 0.8, "startup": 0.5}
    ok = True
    for name, pairs in rows.items():
        ratios = [m.eps / c.eps for m, c in pairs]
        met = statistics.median(ratios) >= targets[name]
        ok &= met
        print(f"{labels[name]}:")
        print(f"  mua {spread([m.eps for m, _ in pairs], '.1f')} eps/s; ceiling {spread([c.eps for _, c in pairs], '.1f')}"
              f" eps/s; ratio {spread(ratios)} (target >= {targets[name]}: {'met' if met else 'NOT met'})")
        print(f"  CPU ms/episode: mua {spread([m.cpu_per_episode_ms for m, _ in pairs], '.1f')},"
              f" replay client {spread([c.cpu_per_episode_ms for _, c in pairs], '.1f')};"
              f" endpoint under mua {spread([m.endpoint_cpu_per_episode_ms for m, _ in pairs], '.1f')},"
              f" under replay {spread([c.endpoint_cpu_per_episode_ms for _, c in pairs], '.1f')}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
