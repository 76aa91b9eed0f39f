"""The adversarial user suite: its cases for a pack, and the scripted user's figures on it."""
import json
from pathlib import Path

from mua.benchmarks.pack.benchmark import PackBenchmark
from mua.harness.cli import main
from mua.harness.interfaces import User
from mua.harness.types import Message
from mua.harness.users.suite import FAMILIES, score_user, suite

EXAMPLES = Path(__file__).resolve().parents[3] / "benchmarks" / "pack" / "examples"


class Blurter(User):
    """Tells every fact of its scenario whatever it is asked: the worst user for the refuse families."""

    def __init__(self, scenario: dict):
        self.says = " ".join(r["say"] for r in scenario["replies"])

    async def respond(self, messages, tools):
        return Message(role="user", content=self.says)


def test_every_family_has_cases_and_the_scripted_user_refuses_stuffing_and_answers_compounds():
    for pack in ("bookings", "refills", "appointments"):
        bench = PackBenchmark(EXAMPLES / pack)
        cases = suite(bench, bench.load_tasks("tasks", "test")[:6])
        assert {c.family for c in cases} == set(FAMILIES)
        scores = score_user(lambda case, bench=bench: bench.gold_user(case.task), cases)
        assert all(scores[f].rate == 0.0 for f in ("stuffing", "template", "chatter")), pack
        assert scores["compound"].rate == 1.0 and scores["gold"].rate == 1.0, pack
        assert 0.0 < scores["paraphrase"].rate < 1.0  # paraphrases without its keywords are beyond it


def test_a_user_that_tells_everything_fails_the_suite():
    bench = PackBenchmark(EXAMPLES / "bookings")
    cases = suite(bench, bench.load_tasks("tasks", "test")[:4])
    scores = score_user(lambda case: Blurter(case.task.scenario), cases)
    assert all(scores[f].rate == 1.0 for f in ("stuffing", "template", "chatter"))
    assert scores["paraphrase"].rate == 0.0  # it told more than the one fact asked


class Inventor(User):
    """Answers every message with a name from another scenario."""

    def __init__(self, name: str):
        self.name = name

    async def respond(self, messages, tools):
        return Message(role="user", content=self.name)


def test_a_value_from_another_scenario_counts_as_told_and_is_never_right():
    bench = PackBenchmark(EXAMPLES / "bookings")
    task, *others = bench.load_tasks("tasks", "test")
    own = task.scenario["replies"][0]["say"]
    name = next(t.scenario["replies"][0]["say"] for t in others if t.scenario["replies"][0]["say"] != own)
    scores = score_user(lambda case: Inventor(name), suite(bench, [task]))
    assert scores["stuffing"].rate == 1.0 and scores["chatter"].rate == 1.0
    assert scores["paraphrase"].rate == 0.0 and scores["gold"].rate == 0.0


def test_a_family_without_cases_is_unknown_not_zero(tmp_path):
    bench = PackBenchmark(EXAMPLES / "bookings")
    cases = [c for c in suite(bench, bench.load_tasks("tasks", "test")[:2]) if c.family != "paraphrase"]
    scores = score_user(lambda case: bench.gold_user(case.task), cases)
    assert scores["paraphrase"].cases == 0 and scores["paraphrase"].rate is None


def test_the_command_prints_one_line_per_family(capsys):
    # the benchmark named: other tests in the same worker may register in-process adapters over this folder
    assert main(["users", "suite", "pack", "--data-dir", str(EXAMPLES / "bookings"), "--limit", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("pack: scripted user on") and len(out) == 1 + len(FAMILIES)
    assert out[1].split()[:2] == ["stuffing", "24"] and out[1].endswith("(0/24)")


def test_a_malformed_user_suite_file_is_one_line_naming_it(tmp_path, capsys):
    import shutil

    pack = tmp_path / "pack"
    shutil.copytree(EXAMPLES / "bookings", pack)
    (pack / "user_suite.json").write_text('{"facts": {"name": {"paraphrases": "Who are you?"}}}')
    assert main(["users", "suite", "pack", "--data-dir", str(pack), "--limit", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("mua users: error: user_suite.json, facts.name.paraphrases: expected a list of non-empty "
                   "strings")
    (pack / "user_suite.json").write_text("{not json")
    assert main(["users", "suite", "pack", "--data-dir", str(pack), "--limit", "1"]) == 2
    assert "user_suite.json" in capsys.readouterr().err


def test_the_command_scores_a_model_user_shown_the_agents_greeting_first(capsys):
    """--user-model: every case goes to the pack's LLM user played by that model, greedy, after the agent's
    greeting; a user that always refuses tells nothing and answers no natural question."""
    from mock_openai import MockOpenAI, text_reply

    seen = []

    def respond(request):
        seen.append(request)
        return text_reply("I am not sure what you need from me.")

    with MockOpenAI(respond) as url:
        assert main(["users", "suite", "pack", "--data-dir", str(EXAMPLES / "bookings"), "--limit", "1",
                     "--user-model", "user-sim", "--user-base-url", url, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    families = {f["family"]: f for f in report["families"]}
    assert report["user"] == "user-sim" and families["paraphrase"]["cases"] > 0
    assert all(f["hits"] == 0 for f in families.values())
    cases = sum(f["cases"] for f in families.values())
    chats = [r for r in seen if r.get("messages")]
    assert len(chats) == cases and all(r.get("temperature") == 0.0 for r in chats)
    # the user's view: the system prompt, the agent's greeting (as "user"), its own opening, the agent's message
    first = chats[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user", "assistant", "user"]
    assert first[1]["content"] == "Hi! How can I help you today?"


def test_a_user_model_for_a_benchmark_whose_user_is_scripted_only_is_one_line(capsys, monkeypatch):
    from mua.harness.interfaces import Benchmark

    monkeypatch.setattr(PackBenchmark, "simulated_user", Benchmark.simulated_user)
    assert main(["users", "suite", "pack", "--data-dir", str(EXAMPLES / "bookings"), "--limit", "1",
                 "--user-model", "m", "--user-base-url", "http://127.0.0.1:9/v1"]) == 2
    assert capsys.readouterr().err.strip() == ("mua users: error: pack: its user is scripted only; --user-model has "
                                               "no LLM user to play")


def test_the_episode_greeting_is_the_agents_opening_built_once_per_task(monkeypatch):
    from mua.harness.users.suite import episode_greeting

    bench = PackBenchmark(EXAMPLES / "bookings")
    task = bench.load_tasks("tasks", "test")[0]
    starts = []
    real_start = PackBenchmark.start
    monkeypatch.setattr(PackBenchmark, "start", lambda self, t: starts.append(t.id) or real_start(self, t))
    greeting = episode_greeting(bench)
    assert [(m.role, m.content) for m in greeting(task)] == [("assistant", "Hi! How can I help you today?")]
    greeting(task)
    assert starts == [task.id]


def test_the_suites_user_temperature_help_says_greedy(capsys):
    import pytest

    with pytest.raises(SystemExit):
        main(["users", "suite", "--help"])
    assert "(default: 0, greedy)" in " ".join(capsys.readouterr().out.split())
