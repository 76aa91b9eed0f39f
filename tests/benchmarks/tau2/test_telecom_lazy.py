"""tau2 loads its telecom domain only when a telecom subset runs; without telecom, the other domains still run.

Each check runs in a fresh interpreter: the test process has long since imported telecom for other tests."""
from __future__ import annotations

import subprocess
import sys
import textwrap

# a retail gold episode played and scored, then its ground-truth sections drawn (mua view's path)
RETAIL_EPISODE = """
import asyncio, sys
from pathlib import Path
from mua.benchmarks.tau2 import Tau2Benchmark
from mua.harness.runner import run_episode
bench = Tau2Benchmark(Path(sys.argv[1]))
task = bench.load_tasks("retail", None)[0]
result = asyncio.run(run_episode(bench, task, bench.gold_agent(task), bench.gold_user(task)))
assert result.score.reward == 1.0, result.score
from mua.benchmarks.tau2 import ground_truth
ground_truth.task_sections(task)
"""


def _run(code: str, data_dir) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(data_dir)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_retail_run_never_imports_telecom(data_dir):
    out = _run(RETAIL_EPISODE + "print(sorted(m for m in sys.modules if '.telecom' in m))", data_dir)
    assert out.strip() == "[]"


def test_a_telecom_subset_imports_it(data_dir):
    out = _run("""
        import sys
        from pathlib import Path
        from mua.benchmarks.tau2 import Tau2Benchmark
        Tau2Benchmark(Path(sys.argv[1])).load_tasks("telecom", None)
        print("mua.benchmarks.tau2.telecom" in sys.modules)
        """, data_dir)
    assert out.strip() == "True"  # the probe above sees an import when there is one


def test_without_telecom_the_other_domains_run_and_telecom_is_refused(data_dir):
    missing = 'import sys\nsys.modules["mua.benchmarks.tau2.telecom"] = None  # as if it were not installed\n'
    refused = textwrap.dedent("""
        from mua.harness.errors import ConfigError
        try:
            bench.load_tasks("telecom", None)
        except ConfigError as e:
            print(e)
        """)
    out = _run(missing + RETAIL_EPISODE + refused, data_dir)
    assert "available: airline, retail" in out, out
