"""tau2 NL assertions through `mua eval --judge-model`, the judge played by the mock server."""
import json
import re

from mock_openai import MockOpenAI, text_reply

from mua.harness.cli import main


def judge(verdict: bool):
    def respond(request):
        prompt = request["messages"][-1]["content"]
        # The assertions are listed in the judge prompt; answer each with the given verdict.
        outcomes = re.findall(r"^- (.+)$", prompt, flags=re.M) or ["?"]
        results = [{"expectedOutcome": o, "reasoning": "mock", "metExpectation": verdict} for o in outcomes]
        return text_reply(json.dumps({"results": results}))
    return respond


def run(tmp_path, data_dir, verdict):
    out = tmp_path / str(verdict)
    with MockOpenAI(judge(verdict)) as url:
        assert main(["eval", "--benchmark", "tau2", "--subset", "retail", "--agent", "gold", "--limit", "12",
                     "--judge-model", "judge", "--judge-base-url", url, "--no-progress",
                     "--data-dir", str(data_dir), "--out", str(out)]) == 0
    rows = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    return rows, json.loads((out / "summary.json").read_text())


def test_judge_decides_nl_assertions(tmp_path, data_dir):
    tasks = json.loads((data_dir / "tau2/domains/retail/tasks.json").read_text())
    with_assertions = {t["id"] for t in tasks if t["evaluation_criteria"].get("nl_assertions")}
    rows, summary = run(tmp_path, data_dir, True)
    assert all(r["reward"] == 1.0 and r["components"]["nl_assertion"] == 1.0 for r in rows)
    assert summary["subsets"]["retail"]["incomplete_components"] == []
    rows, _ = run(tmp_path, data_dir, False)
    assert 0 < sum(r["task_id"] in with_assertions for r in rows) < len(rows)
    for r in rows:
        # Tasks whose NL-assertion list is empty score 1.0 without asking the judge, as upstream.
        assert r["reward"] == (0.0 if r["task_id"] in with_assertions else 1.0), r["task_id"]


def test_a_judge_answer_too_hostile_to_read_is_one_readable_error():
    """The judge's text goes through the reader every endpoint reply goes through: JSON 10,000 deep is a
    ValueError naming the judge (the episode's error), never a RecursionError."""
    import asyncio

    import pytest

    from mua.benchmarks.tau2.judge import judge_nl_assertions
    from mua.harness.types import Message, Usage

    class Judge:
        def __init__(self, content):
            self.content = content

        async def chat(self, messages, tools=None, seed=None):
            return Message(role="assistant", content=self.content), Usage(requests=1)

    for content, reason in [("[" * 10_000 + "]" * 10_000, "nested too deeply"), ('{"results": 1e309}', "too large"),
                            ("no verdict", "not valid JSON")]:
        with pytest.raises(ValueError, match=f"the judge's answer cannot be read as JSON: .*{reason}"):
            asyncio.run(judge_nl_assertions(Judge(content), [Message(role="user", content="hi")], ["x"]))
