"""Issue 42: a hostile endpoint reply ends one episode, never the run. Each bad reply (JSON nested 10,000 deep in
the body or in a tool call's arguments, usage counts that are not finite or not counts, a lone surrogate in the
text, a call's name or its arguments, bytes that are not UTF-8) is served by a local mock in the wire format of
each provider adapter (OpenAI, ``anthropic/``, ``gemini/``) to one episode of a `mua eval` run in a fresh
process, the other episodes answered properly. The run must end with exit 1, no traceback, exactly the bad
episodes errored (each with one readable reason) and every other episode scored; the result files stay valid
UTF-8 JSON and the run's cost is finite."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable, Union

import pytest
from mock_openai import HTTPReply, MockOpenAI, by_model, text_reply, tool_call_reply
from mock_providers import MockAnthropic, MockGemini

TESTS = Path(__file__).resolve().parents[1]
DEEP = "[" * 10_000 + "]" * 10_000
FAST = json.dumps({"retry": {"max_attempts": 2, "initial_wait_s": 0.001, "max_wait_s": 0.01}, "timeout_s": 10})
RUN_SECONDS = 120

# A reply in each wire format from JSON fragments: the text, the call's name and arguments (an object's JSON;
# the OpenAI format carries it as a string, given as the fragment itself when ``args_string`` is set) and the
# prompt token count.
Body = Callable[..., Union[str, bytes]]


def openai_body(text='"Done."', name='"add"', args='{"n": 1}', prompt="10", args_string=None) -> str:
    arguments = args_string if args_string is not None else json.dumps(args)
    message = (f'{{"role":"assistant","content":{text},"tool_calls":[{{"id":"call_0","type":"function",'
               f'"function":{{"name":{name},"arguments":{arguments}}}}}]}}')
    return (f'{{"id":"chatcmpl-x","object":"chat.completion","choices":[{{"index":0,"message":{message},'
            f'"finish_reason":"tool_calls"}}],"usage":{{"prompt_tokens":{prompt},"completion_tokens":5}}}}')


def anthropic_body(text='"Done."', name='"add"', args='{"n": 1}', prompt="10", args_string=None) -> str:
    return (f'{{"id":"msg_x","type":"message","role":"assistant","content":[{{"type":"text","text":{text}}},'
            f'{{"type":"tool_use","id":"toolu_0","name":{name},"input":{args}}}],"stop_reason":"tool_use",'
            f'"usage":{{"input_tokens":{prompt},"output_tokens":5}}}}')


def gemini_body(text='"Done."', name='"add"', args='{"n": 1}', prompt="10", args_string=None) -> str:
    return (f'{{"candidates":[{{"content":{{"role":"model","parts":[{{"text":{text}}},{{"functionCall":'
            f'{{"name":{name},"args":{args}}}}}]}},"finishReason":"STOP"}}],"usageMetadata":{{"promptTokenCount":'
            f'{prompt},"candidatesTokenCount":5,"totalTokenCount":15}}}}')


# kind -> (the reply's fragments, the reason its episode's error must give)
BAD: dict[str, tuple[dict, str]] = {
    "deep body": ({"text": DEEP}, "nested too deeply"),
    "deep arguments": ({"args": '{"n": ' + DEEP + "}"}, "nested too deeply"),
    "usage 1e309": ({"prompt": "1e309"}, "1e309 is too large"),
    "usage NaN": ({"prompt": "NaN"}, "NaN is not valid JSON"),
    "usage -Infinity": ({"prompt": "-Infinity"}, "-Infinity is not valid JSON"),
    "usage 5,000 digits": ({"prompt": "9" * 5000}, "cannot be read"),
    "usage 1e300": ({"prompt": "1e300"}, "not a token count"),
    "usage negative": ({"prompt": "-7"}, "not a token count"),
    "usage text": ({"prompt": '"12"'}, "not a token count"),
    "surrogate in content": ({"text": '"Done \\ud800 half"'}, "lone surrogate"),
    "surrogate in name": ({"name": '"add\\udc00"'}, "lone surrogate"),
    "surrogate in arguments": ({"args": '{"n": 1, "note": "\\ud800"}'}, "lone surrogate"),
}
# The OpenAI format's arguments are the model's text: the environment judges it as the benchmark does
# (json.loads: NaN is read, broken JSON answered), except JSON that would crash that reading or that no UTF-8
# can carry. The other formats' arguments are part of the reply's JSON, which must be strict JSON.
OPENAI_ONLY: dict[str, tuple[dict, str]] = {
    "deep arguments text": ({"args_string": json.dumps('{"n": ' + DEEP + "}")}, "tool call 1's arguments"),
    "surrogate in arguments text": ({"args_string": json.dumps('{"n": 1, "note": "\\ud800"}')},
                                    "tool call 1's arguments: the text holds text that is not valid Unicode"),
    "5,000-digit arguments text": ({"args_string": json.dumps('{"n": ' + "9" * 5000 + "}")}, "digits"),
}
NATIVE_ONLY: dict[str, tuple[dict, str]] = {"NaN in arguments": ({"args": '{"n": NaN}'}, "NaN is not valid JSON")}
NOT_UTF8 = b"not UTF-8"


def _cases(body: Body, extra: dict[str, tuple[dict, str]]) -> dict[str, tuple[Union[str, bytes], str]]:
    cases: dict[str, tuple[Union[str, bytes], str]] = {k: (body(**f), why) for k, (f, why) in {**BAD, **extra}.items()}
    cases["bytes not UTF-8"] = (body(text='"Done \u00e9"').encode().replace("é".encode(), b"\xff\xfe"),
                                "not valid UTF-8")
    return cases


PROVIDERS = {"openai": (MockOpenAI, "agent", openai_body, OPENAI_ONLY),
             "anthropic": (MockAnthropic, "anthropic/agent", anthropic_body, NATIVE_ONLY),
             "gemini": (MockGemini, "gemini/agent", gemini_body, NATIVE_ONLY)}


def user(request: dict) -> dict:
    target = re.search(r"counter to (\d+)", request["messages"][0]["content"]).group(1)
    last = request["messages"][-1]["content"]
    return text_reply("###STOP###" if last == "Done." else f"please set the counter to {target}")


def agent_serving(bad: dict[int, Union[str, bytes]]) -> Callable[[dict], Union[dict, HTTPReply]]:
    """The agent: adds what the user asks for, then says Done; for the targets in ``bad``, the bad reply."""
    def respond(request: dict):
        last = request["messages"][-1]
        if last["role"] == "user":
            target = int(re.search(r"(\d+)\s*$", last["content"]).group(1))
            if target in bad:
                return HTTPReply(200, bad[target])
            return tool_call_reply([("add", {"n": target})])
        return text_reply("Done.")
    return respond


def run_mua(argv: list[str], n_tasks: int) -> subprocess.CompletedProcess:
    code = ("import sys; sys.path[:0] = [sys.argv.pop(1)]; from helpers.counter_bench import CounterBenchmark; "
            "from mua.harness.registry import register_benchmark; "
            f"register_benchmark(CounterBenchmark, n_tasks={n_tasks}); "
            "from mua.harness.cli import main; sys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "ANTHROPIC_API_KEY": "k-anthropic", "GEMINI_API_KEY": "k-gemini",
           "OPENAI_API_KEY": "k-openai"}
    return subprocess.run([sys.executable, "-c", code, str(TESTS), *argv], capture_output=True, text=True,
                          timeout=RUN_SECONDS, env=env)


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_each_hostile_reply_errors_its_episode_and_the_run_goes_on(tmp_path, provider):
    mock_cls, agent_name, body, extra = PROVIDERS[provider]
    cases = _cases(body, extra)
    clean = 3
    n_tasks = len(cases) + clean
    # task i sets the counter to i + 1; the bad replies answer the first tasks, the last `clean` play normally
    bad_for = {target: kind for target, kind in enumerate(cases, 1)}
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"source": "test", "models": {agent_name: {"input": 3.0, "output": 15.0},
                                                                "user": {"input": 1.0, "output": 2.0}}}))
    out = tmp_path / "run"
    with mock_cls(agent_serving({t: cases[k][0] for t, k in bad_for.items()})) as agent_url, \
            MockOpenAI(by_model({"user": user})) as user_url:
        done = run_mua(["eval", "--benchmark", "counter", "--subset", "easy", "--no-progress", "--out", str(out),
                        "--agent-model", agent_name, "--agent-base-url", agent_url, "--agent-params", FAST,
                        "--user-model", "user", "--user-base-url", user_url, "--user-params", FAST,
                        "--prices", str(prices)], n_tasks)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr
    raw = (out / "episodes.jsonl").read_bytes()
    rows = {int(r["task_id"]) + 1: r for r in map(json.loads, raw.decode("utf-8").splitlines())}
    assert sorted(rows) == list(range(1, n_tasks + 1))
    for target, row in rows.items():
        if target in bad_for:
            kind = bad_for[target]
            assert row["reward"] is None and row["error"], kind
            assert "malformed reply" in row["error"] and cases[kind][1] in row["error"], (kind, row["error"])
            assert "Traceback" not in row["error"] and "\n" not in row["error"]
        else:
            assert row["error"] is None and row["reward"] == 1.0, row
    summary = json.loads((out / "summary.json").read_text())
    assert summary["errors"] == len(cases) and summary["finished"] == n_tasks and summary["complete"]
    cost = summary["cost"]["total"]
    assert isinstance(cost, float) and 0 < cost < 1, summary["cost"]
    assert sum(1 for line in done.stdout.splitlines() if "error: easy/" in line) == min(len(cases), 10)
