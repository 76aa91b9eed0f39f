"""`mua users audit`: exact on packs (the replies say what each fact is), heuristic on tau2 (known_info)."""
import asyncio
import json
from pathlib import Path

from mua.benchmarks.pack.benchmark import PackBenchmark
from mua.benchmarks.tau2.user_facts import user_facts as tau2_user_facts
from mua.harness.agents import ScriptedAgent
from mua.harness.cli import main
from mua.harness.interfaces import User
from mua.harness.runner import run_episode
from mua.harness.types import Message, Task, Usage
from mua.harness.users.audit import audit_episode, overall
from mua.harness.view.panel import headline

BOOKINGS = Path(__file__).resolve().parents[3] / "benchmarks" / "pack" / "examples" / "bookings"


class Liar(User):
    """Tells every fact at once, then another scenario's name, then stops (whatever it is asked)."""

    def __init__(self, scenario: dict, other_name: str):
        self.usage = Usage()
        self.turns = [scenario["instructions"]["reason_for_call"], " ".join(r["say"] for r in scenario["replies"]),
                      other_name, "###STOP###"]

    async def respond(self, messages, tools):
        return Message(role="user", content=self.turns.pop(0))

    def is_stop(self, message):
        return "###STOP###" in message.text


def play(bench, task, agent, user):
    result = asyncio.run(run_episode(bench, task, agent, user))
    return audit_episode(bench, task, result.messages, result.termination)


def test_the_gold_conversation_has_no_user_errors():
    bench = PackBenchmark(BOOKINGS)
    for task in bench.load_tasks("tasks", "test")[:5]:
        audit = play(bench, task, bench.gold_agent(task), bench.gold_user(task))
        assert audit.exact and audit.facts_told >= 2  # the time is not asked when the usual hour is guessed
        assert (audit.unasked, audit.not_in_scenario, audit.contradictions, audit.stopped_before_done,
                audit.turns_after_done, audit.stuffed_messages) == (0, 0, 0, False, 0, 0)


def test_a_user_that_blurts_invents_and_answers_stuffing_is_caught():
    bench = PackBenchmark(BOOKINGS)
    task, other = bench.load_tasks("tasks", "test")[:2]
    name = [r for r in other.scenario["replies"] if r["when"] == ["name"]][0]["say"]
    agent = ScriptedAgent([[Message(role="assistant", content="Hello there!")],
                           [Message(role="assistant", content="name sit time?")],
                           [Message(role="assistant", content="Anything else?")]])
    audit = play(bench, task, agent, Liar(task.scenario, name))
    assert audit.facts_told == 3 and audit.unasked == 3  # told to "Hello there!"
    assert audit.stuffed_messages == 1 and audit.stuffed_answered == 1  # another name, to "name sit time?"
    assert audit.not_in_scenario == 1 and audit.contradictions == 1  # two names
    assert audit.stopped_before_done is True  # nothing was booked
    figures = {f.name: f for f in overall([audit])}
    assert figures["answers to keyword-stuffed messages"].rate == 1.0
    assert figures["contradictions"].how == "exact"


def test_tau2_facts_come_from_known_info_and_unmeasured_is_null():
    task = Task(id="t", benchmark="tau2", subset="retail", scenario={"instructions": {
        "reason_for_call": "You want to return order #W1234567.",
        "known_info": "You are Yusuf Rossi in zip code 19122. Your email is yusuf.rossi@example.com.",
        "unknown_info": "You do not remember your user id.", "task_instructions": "Be brief."}})
    facts = tau2_user_facts(task)
    assert not facts.exact
    assert {(f.kind, f.value) for f in facts.facts} == {
        ("order id", "#W1234567"), ("zip code", "19122"), ("email", "yusuf.rossi@example.com"),
        ("name", "Yusuf Rossi")}


def test_the_command_audits_a_run_and_says_what_is_exact(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["eval", "--benchmark", "pack", "--data-dir", str(BOOKINGS), "--agent", "gold", "--limit", "3",
                 "--out", str(run)]) == 0
    capsys.readouterr()
    assert main(["users", "audit", str(run), "--data-dir", str(BOOKINGS)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"user audit of {run}: 3 episodes"
    assert out[1].split()[:5] == ["facts", "told", "unasked", "0", "of"] and out[1].endswith("(0.0%)  [exact]")
    assert out[6].endswith("0 of 0 stuffed messages (n/a)  [exact: the scripted user's contract]")
    assert main(["users", "audit", str(run), "--data-dir", str(BOOKINGS), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["paths"][0]["episodes"]) == 3
    assert main(["users", "audit", str(tmp_path / "nothing")]) == 2
    users = json.loads((run / "summary.json").read_text())["users"]  # exact figures go in the run's summary
    assert users["facts told unasked"]["count"] == 0 and users["facts told unasked"]["how"] == "exact"
    assert users["answers to keyword-stuffed messages"] == {"count": 0, "out_of": 0, "rate": None,
                                                            "how": "exact: the scripted user's contract"}
    line = headline(run, json.loads((run / "config.json").read_text()))["users"]
    assert line.startswith("users (exact): facts told unasked 0/") and "answers to keyword-stuffed messages 0/0" in line


def test_real_tau2_users_are_audited_heuristically(real_dir, capsys):
    path = real_dir / "tau2" / "toolorchestra__toolorchestra_retail_gpt-5_1trial.json"
    assert main(["users", "audit", str(path), "--json"]) == 0
    figures = {f["name"]: f for f in json.loads(capsys.readouterr().out)["overall"]}
    assert figures["contradictions"]["count"] is None and figures["contradictions"]["rate"] is None
    assert figures["answers to keyword-stuffed messages"]["count"] is None
    assert figures["facts told unasked"]["how"] == "heuristic" and figures["facts told unasked"]["out_of"] > 100
    assert 0 < figures["stops before the task was done"]["count"] < figures["stops before the task was done"]["out_of"]
