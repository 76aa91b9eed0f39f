"""`mua sweep`: a 2 x 2 sweep (two models x two benchmarks) against the mock endpoint ends with the leaderboard
over its root; re-running plays no finished cell again, and a partial cell resumes only its missing episodes;
cells share one concurrency budget per endpoint."""
from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from helpers.counter_bench import CounterBenchmark, SlowCounterBenchmark
from mock_openai import MockOpenAI, by_model, text_reply, tool_call_reply

from mua.harness.cli import main
from mua.harness.registry import register_benchmark
from mua.harness.tools.sweep import Budgets, cells, plan_budgets, read_sweep

FAST_RETRY = '{"max_attempts": 3, "initial_wait_s": 0.001, "max_wait_s": 0.01, "max_total_s": 30}'


def agent(offset: int):
    """Sets the counter to the asked value plus ``offset`` (0: always right; 1: always wrong)."""

    def respond(request):
        last = request["messages"][-1]
        if last["role"] == "user":
            n = int(re.search(r"(\d+)\s*$", last["content"]).group(1))
            return tool_call_reply([("add", {"n": n + offset})])
        return text_reply("Done.")

    return respond


def user(request):
    target = re.search(r"counter to (\d+)", request["messages"][0]["content"]).group(1)
    last = request["messages"][-1]["content"]
    return text_reply("###STOP###" if last == "Done." else f"please set the counter to {target}")


@pytest.fixture(autouse=True)
def counter():
    register_benchmark(CounterBenchmark, n_tasks=3)
    register_benchmark(SlowCounterBenchmark, n_tasks=2)


def write_sweep(path: Path, url: str, concurrency: int = 4) -> Path:
    params = f'{{timeout_s: 5, retry: {FAST_RETRY}}}'
    path.write_text(f"""\
concurrency: {concurrency}
seed: 1
models:
  - {{name: good, base_url: "{url}", params: {params}}}
  - {{name: bad, base_url: "{url}", params: {params}}}
user: {{name: user, base_url: "{url}", params: {params}}}
benchmarks:
  - {{benchmark: counter}}
  - {{benchmark: slowcounter, subsets: [hard]}}
""")
    return path


def sweep(capsys, file: Path, root: Path, data: Path) -> tuple[int, str]:
    code = main(["sweep", str(file), "--out", str(root), "--data-dir", str(data), "--wide"])  # one table to read
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out


def test_two_by_two_sweep_prints_the_leaderboard_and_resumes_cell_by_cell(tmp_path, capsys):
    mock = MockOpenAI(by_model({"good": agent(0), "bad": agent(1), "user": user}))
    root = tmp_path / "root"
    with mock as url:
        file = write_sweep(tmp_path / "sweep.yaml", url)
        code, out = sweep(capsys, file, root, tmp_path)
        first = mock.requests
        assert code == 0, out
        folders = sorted(p.name for p in root.iterdir())
        assert folders == ["bad__counter", "bad__slowcounter__hard", "good__counter", "good__slowcounter__hard"]
        table = out[out.index("model"):].split("\n\n")[0].splitlines()[2:]
        assert [line.split()[0] for line in table] == ["good", "bad"]  # one row per model, both benchmarks in it
        good, bad = table
        assert "good__counter, good__slowcounter__hard" in good and good.count("100.0 [100.0, 100.0]") == 5
        assert "n=6" in good and "n=2" in good and bad.count("0.0 [0.0, 0.0]") == 5 and "100.0" not in bad
        # (6 + 2) tasks x 2 models x 1 trial; each episode: user opening, agent call, agent text, user stop
        assert first == 8 * 2 * 4

        code, out = sweep(capsys, file, root, tmp_path)  # everything finished: nothing is played again
        assert code == 0 and mock.requests == first and out.count("finished before, not run again") == 4
        assert out[out.index("model"):].count("100.0 [100.0, 100.0]") == 5  # the same leaderboard

        episodes = root / "bad__counter" / "episodes.jsonl"  # a cell cut short: one episode of six kept
        episodes.write_text(episodes.read_text().splitlines()[0] + "\n")
        code, out = sweep(capsys, file, root, tmp_path)
        assert code == 0 and mock.requests == first + 5 * 4  # only its five missing episodes
        assert out.count("finished before") == 3 and "bad__counter: done, 6/6 episodes" in out


def test_a_cell_folder_holding_another_run_is_refused_not_taken_as_finished(tmp_path, capsys):
    """The sweep asks `mua eval`'s one "same run?" rule (plan.check_resumable): a finished folder of the same
    agent, benchmark and seed played with another user simulator's settings is not this cell's run."""
    mock = MockOpenAI(by_model({"good": agent(0), "bad": agent(1), "user": user}))
    root = tmp_path / "root"
    with mock as url:
        file = write_sweep(tmp_path / "sweep.yaml", url)
        code, out = sweep(capsys, file, root, tmp_path)
        assert code == 0, out
        first = mock.requests
        file.write_text(file.read_text().replace("user: {name: user, base_url", "user: {name: user-2, base_url"))
        code, out = sweep(capsys, file, root, tmp_path)
        assert code != 0 and mock.requests == first and "finished before" not in out
        for cell in ("good__counter", "good__slowcounter__hard", "bad__counter", "bad__slowcounter__hard"):
            assert f"{cell}: failed: {root / cell} already holds a different run (differs in: protocol, user)" in out


def test_cells_share_one_budget_per_endpoint(tmp_path):
    file = write_sweep(tmp_path / "sweep.yaml", "http://127.0.0.1:9/v1", concurrency=8)
    s = read_sweep(file)
    all_cells = cells(s)
    budget, share = plan_budgets(s, all_cells)
    assert budget == {"http://127.0.0.1:9/v1": 8}  # agent and user models on one server: one budget
    assert set(share.values()) == {2}  # four cells share it evenly

    async def go() -> int:
        budgets, in_flight, peak = Budgets({"e": 3}), [0], [0]

        async def cell(need: int) -> None:
            async with budgets.hold({"e": need}):
                in_flight[0] += need
                peak[0] = max(peak[0], in_flight[0])
                await asyncio.sleep(0.01)
                in_flight[0] -= need

        await asyncio.gather(*(cell(n) for n in (2, 2, 1, 3, 1)))
        return peak[0]

    assert asyncio.run(go()) == 3


@pytest.mark.parametrize("text,message", [
    ("models: [a]\nbenchmarks: [counter]\nconcurency: 3\n", "unknown key(s) concurency"),
    ("models: [a]\n", "field 'benchmarks' is missing"),
    ("models: [{name: a, params: {temperature: .nan}}]\nbenchmarks: [counter]\n", "not a finite number"),
    ("models: [{name: a, base_url: 'ftp://x'}]\nbenchmarks: [counter]\n", "not an http(s) URL"),
    ("models: [a]\nbenchmarks: [{benchmark: counter, limit: 0}]\n", "limit must be a whole number of at least 1"),
    ("models: [a\n", "not valid YAML"),
    ("models: [a]\nbenchmarks: [nosuch]\n", "unknown benchmark 'nosuch'"),
])
def test_bad_sweep_files_are_one_line_errors(tmp_path, capsys, text, message):
    file = tmp_path / "s.yaml"
    file.write_text(text)
    code = main(["sweep", str(file), "--out", str(tmp_path / "r"), "--data-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_the_readme_example_sweep_file_reads():
    s = read_sweep(Path(__file__).resolve().parents[2] / "docs" / "examples" / "sweep.yaml")
    assert [c.name for c in cells(s)] == ["gold__tau2__retail+airline", "gold__bfcl_v3"]
    assert all(c.endpoints == [] for c in cells(s))  # the gold agent needs no endpoint: it runs offline


def test_cells_on_one_local_checkpoint_run_one_at_a_time(tmp_path):
    (tmp_path / "ckpt").mkdir()
    file = tmp_path / "s.yaml"
    file.write_text(f"concurrency: 6\nmodels: ['{tmp_path / 'ckpt'}']\n"
                    "benchmarks: [{benchmark: counter, subsets: [easy]}, {benchmark: counter, subsets: [hard]}]\n")
    s = read_sweep(file)
    budget, share = plan_budgets(s, cells(s))
    assert list(budget.values()) == [6] and list(share.values()) == [6, 6]  # each holds the whole budget


def test_a_long_sweep_says_how_far_its_cells_are(tmp_path, capsys, monkeypatch):
    from helpers.counter_bench import SlowAgent

    monkeypatch.setattr(SlowAgent, "delay", 0.05)
    file = tmp_path / "s.yaml"
    file.write_text("concurrency: 1\nmodels: [gold]\nbenchmarks: [slowcounter]\n")
    code = main(["sweep", str(file), "--out", str(tmp_path / "r"), "--data-dir", str(tmp_path), "--heartbeat", "0.1"])
    out = capsys.readouterr().out
    assert code == 0 and "progress: gold__slowcounter " in out and "episodes recorded" in out
    assert "gold__slowcounter: done, 4/4 episodes, 0 errors" in out


def test_a_cell_whose_endpoint_is_down_is_reported_and_the_others_finish(tmp_path, capsys):
    with MockOpenAI(by_model({"good": agent(0), "user": user})) as url:
        file = tmp_path / "s.yaml"
        file.write_text(f"""\
models:
  - {{name: good, base_url: "{url}"}}
  - {{name: down, base_url: "http://127.0.0.1:9/v1"}}
user: {{name: user, base_url: "{url}"}}
benchmarks: [{{benchmark: counter, subsets: [easy]}}]
""")
        code, out = sweep(capsys, file, tmp_path / "r", tmp_path)
    assert code == 1 and "good__counter__easy: done, 3/3 episodes" in out
    assert "down__counter__easy: failed: model endpoint http://127.0.0.1:9/v1 cannot be reached" in out
    table = out[out.index("model"):]
    assert "good" in table and "down" not in table.split("\n\n")[0]


def test_the_final_leaderboard_covers_every_run_in_the_root(tmp_path, capsys):
    root = tmp_path / "r"
    file = tmp_path / "s.yaml"
    file.write_text("models: [gold]\nbenchmarks: [{benchmark: counter, subsets: [easy]}]\n")
    assert sweep(capsys, file, root, tmp_path)[0] == 0
    file.write_text("models: [gold]\nbenchmarks: [{benchmark: counter, subsets: [hard]}]\n")  # the file changed
    (root / "broken").mkdir()
    (root / "broken" / "config.json").write_text("{")
    code, out = sweep(capsys, file, root, tmp_path)
    table = out[out.index("model"):]
    sources = [line.split()[1] for line in table.split("\n\n")[0].splitlines()[2:]]
    assert code == 0 and sources == ["gold__counter__hard", "gold__counter__easy"]  # this sweep's cell first
    assert "broken: not on the leaderboard:" in out
