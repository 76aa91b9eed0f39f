import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers.counter_bench import CounterBenchmark

from mua.harness.errors import ConfigError
from mua.harness.registry import register_benchmark
from mua.harness.results.episodes import latest_episodes
from mua.harness.run.batch import RunPlan, run_eval
from mua.harness.run.build import GOLD, ModelSpec


def read_jsonl(path):
    return [r.row for r in latest_episodes(path)[0].values()]

HELPERS = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def counter():
    register_benchmark(CounterBenchmark, n_tasks=5)


def plan(**kw):
    base = dict(benchmark="counter", subsets=["easy", "hard"], agent=ModelSpec(name=GOLD, gold=True), trials=2, seed=7)
    return RunPlan(**(base | kw))


def run(out, p=None, **kw):
    return asyncio.run(run_eval(p or plan(), out, Path("."), progress=False, **kw))


def test_gold_run_writes_results(tmp_path):
    outcome = run(tmp_path / "r", concurrency=3)
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["complete"] and summary["finished"] == 20 and summary["errors"] == 0
    assert summary["subsets"]["easy"]["pass^1"] == 1.0 and summary["subsets"]["hard"]["pass^2"] == 1.0
    rows = read_jsonl(tmp_path / "r" / "episodes.jsonl")
    assert [(r["subset"], r["task_id"], r["trial"]) for r in rows][:3] == [("easy", "0", 0), ("easy", "0", 1),
                                                                           ("easy", "1", 0)]
    assert rows[0]["messages"][0] == {"role": "assistant", "content": "Hi! How can I help?"}
    assert len(read_jsonl(tmp_path / "r" / "timings.jsonl")) == 20
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["tasks"]["hard"] == ["0", "1", "2", "3", "4"] and outcome.ran == 20


def test_concurrency_does_not_change_results(tmp_path):
    # (same seed + same model answers, with real model clients: tests/harness/test_e2e_mock.py)
    run(tmp_path / "a", concurrency=1)
    run(tmp_path / "b", concurrency=7)
    for name in ("episodes.jsonl", "summary.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_resume_skips_finished_and_retries_errors(tmp_path):
    out = tmp_path / "r"
    run(out)
    rows = (out / "episodes.jsonl").read_text().splitlines()
    broken = json.loads(rows[3]) | {"error": "model error: boom", "reward": None}
    (out / "episodes.jsonl").write_text("\n".join(rows[:3] + [json.dumps(broken)]) + "\n" + '{"torn')
    outcome = run(out)
    assert outcome.skipped == 3 and outcome.ran == 17
    assert (out / "episodes.jsonl").read_text().count("\n") == 20


def test_resume_refuses_a_different_run(tmp_path):
    run(tmp_path / "r")
    with pytest.raises(ConfigError, match="differs in: seed"):
        run(tmp_path / "r", plan(seed=8))


def test_unknown_subset_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no subset 'medium'"):
        run(tmp_path / "r", plan(subsets=["medium"]))


SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {helpers!r})
    from helpers.counter_bench import SlowCounterBenchmark
    from mua.harness.registry import register_benchmark
    from mua.harness.cli import main
    register_benchmark(SlowCounterBenchmark, n_tasks=15)
    sys.exit(main(["eval", "--benchmark", "slowcounter", "--agent", "gold", "--trials", "2",
                   "--concurrency", "4", "--no-progress", "--data-dir", ".", "--out", sys.argv[1]]))
""")


def test_sigkill_midway_then_resume_equals_uninterrupted(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(SCRIPT.format(helpers=str(HELPERS)))
    full, killed = tmp_path / "full", tmp_path / "killed"
    subprocess.run([sys.executable, str(script), str(full)], check=True, capture_output=True)
    proc = subprocess.Popen([sys.executable, str(script), str(killed)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    episodes = killed / "episodes.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if episodes.exists() and episodes.read_text().count("\n") >= 12:
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = episodes.read_text().count("\n")
    assert 12 <= partial < 60, "the run should have been killed midway"
    subprocess.run([sys.executable, str(script), str(killed)], check=True, capture_output=True)
    assert episodes.read_bytes() == (full / "episodes.jsonl").read_bytes()
    assert (killed / "summary.json").read_bytes() == (full / "summary.json").read_bytes()


def test_unknown_task_ids_and_bad_limit_are_clear_errors(tmp_path, capsys):
    with pytest.raises(ConfigError, match="task ids not found .*: 99"):
        run(tmp_path / "r", plan(task_ids=["1", "99"]))
    from mua.harness.cli import main
    with pytest.raises(SystemExit) as stopped:  # checked as the flag is parsed (argparse exits 2, one line)
        main(["eval", "--benchmark", "counter", "--agent", "gold", "--limit", "0", "--data-dir", "."])
    assert stopped.value.code == 2
    assert "argument --limit: must be at least 1, got 0" in capsys.readouterr().err


def test_bad_data_fails_once_before_any_episode(tmp_path):
    from mua.harness.errors import DataError

    class Broken(CounterBenchmark):
        def load_tasks(self, data_dir, subset, split=None):  # adapters check their data files here
            raise DataError("missing data file counter/db.json")

    register_benchmark(Broken)
    with pytest.raises(DataError, match="counter/db.json"):
        run(tmp_path / "r")
    assert not (tmp_path / "r" / "episodes.jsonl").exists()


def test_endpoint_down_stops_the_run_after_an_error_streak(tmp_path):
    """An endpoint that answers the preflight and then fails every request: the run stops after the streak."""
    from mock_openai import Faults, MockOpenAI

    from mua.harness.errors import ModelError

    # The server passes the preflight, then fails every chat request (503, not retried here).
    with MockOpenAI(faults=Faults(sequence=("503",) * 1000)) as url:
        spec = dict(base_url=url, params={"timeout_s": 2, "retry": {"max_attempts": 1}})
        p = plan(agent=ModelSpec("agent", **spec), user=ModelSpec("user", **spec), trials=3)
        with pytest.raises(ModelError, match="4 episodes in a row failed .* re-run the same command to resume"):
            asyncio.run(run_eval(p, tmp_path / "r", Path("."), progress=False, concurrency=2, max_error_streak=4))
    rows = read_jsonl(tmp_path / "r" / "episodes.jsonl")
    assert 4 <= len(rows) < 30 and all(r["error"].startswith("model error") for r in rows)


def test_odd_run_directories_are_clear_errors(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="not a directory"):
        run(tmp_path / "file")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{torn")
    with pytest.raises(ConfigError, match="config.json is not valid JSON"):
        run(tmp_path / "bad")


def test_foreign_lines_in_episodes_file_are_skipped_on_resume(tmp_path):
    out = tmp_path / "r"
    run(out)
    lines = (out / "episodes.jsonl").read_text().splitlines()
    junk = [json.dumps({"trial": "x", "subset": "easy", "task_id": "0"}), json.dumps([1, 2]), "{}"]
    (out / "episodes.jsonl").write_text("\n".join(lines[:5] + junk) + "\n")
    outcome = run(out)
    assert outcome.skipped == 5 and outcome.ran == 15
    assert len(read_jsonl(out / "episodes.jsonl")) == 20


def test_result_lines_stay_valid_utf8_with_lone_surrogates(tmp_path):
    from mua.harness.results.store import JsonlAppender, dumps

    assert dumps({"a": "é"}) == '{"a":"é"}'  # non-ASCII kept as is
    appender = JsonlAppender(tmp_path / "x.jsonl")
    appender.append_line(dumps({"subset": "s", "task_id": "t", "trial": 0, "text": "bad \ud800 half"}))
    appender.close()
    rows = read_jsonl(tmp_path / "x.jsonl")
    assert rows[0]["text"] == "bad \ud800 half"


def test_run_written_before_metrics_declarations_resumes_and_gains_one(tmp_path):
    out = tmp_path / "r"
    run(out)
    config = json.loads((out / "config.json").read_text())
    assert config["metrics"]["benchmark"] == "counter"
    declared = config.pop("metrics")
    (out / "config.json").write_text(json.dumps(config))  # as an older mua wrote it
    rows = read_jsonl(out / "episodes.jsonl")
    (out / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:-3]))
    assert run(out).ran == 3  # same run: resumed, not refused as "differs in: metrics"
    assert json.loads((out / "config.json").read_text())["metrics"] == declared


def test_a_second_run_in_the_same_folder_is_refused_while_the_first_plays(tmp_path):
    out = tmp_path / "r"

    async def both():
        return await asyncio.gather(run_eval(plan(), out, Path("."), progress=False),
                                    run_eval(plan(), out, Path("."), progress=False), return_exceptions=True)

    first, second = asyncio.run(both())
    assert first.ran == 20
    assert isinstance(second, ConfigError) and "in use by another mua eval" in str(second)
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 20 and len(read_jsonl(out / "episodes.jsonl")) == 20  # played once: no line twice
    assert run(out).ran == 0  # the lock went with the first run
