"""OpenAIChatModel against the mock server: parsing, usage, retries per fault kind, bounds, key hygiene."""
from __future__ import annotations

import asyncio
import gc
import json
import logging
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path

import aiohttp
import mock_openai as mock  # tests/ is on sys.path (tests/conftest.py)
import pytest

from mua.harness.errors import ConfigError, ModelError
from mua.harness.models import OpenAIChatModel, RetryPolicy, make_chat_model
from mua.harness.models.openai_client import _Transient, parse_reply, parse_retry_after
from mua.harness.types import Message, ToolSpec

MOCK_PATH = Path(__file__).resolve().parents[2] / "mock_openai.py"
FAST = RetryPolicy(max_attempts=6, initial_wait_s=0.001, max_wait_s=0.01, max_total_s=30)
HELLO = [Message(role="system", content="be brief"), Message(role="user", content="hello")]
KEY = "sk-test-0123456789abcdefSECRET"


def chat(model: OpenAIChatModel, messages=HELLO, tools=None, seed=None):
    async def go():
        try:
            return await model.chat(messages, tools, seed=seed)
        finally:
            await model.aclose()
    return asyncio.run(go())


def recording(reply):
    """A responder that keeps every request it answers."""
    seen = []

    def respond(request):
        seen.append(request)
        return reply
    return respond, seen


def echo(request):
    """Stateless: answers with the last message reversed, so each answer can be checked against its request."""
    return mock.text_reply(request["messages"][-1]["content"][::-1])


def test_text_reply_parses_and_request_body_is_complete():
    respond, seen = recording(mock.text_reply("Hi there", usage_=mock.usage(31, 7)))
    tools = [ToolSpec("get_order", "Look an order up", {"type": "object", "properties": {"id": {"type": "string"}}})]
    with mock.MockOpenAI(respond) as url:
        model = OpenAIChatModel("agent-x", url, temperature=0.0, max_tokens=64, top_p=0.5)
        reply, usage = chat(model, tools=tools, seed=7)
    assert reply == Message(role="assistant", content="Hi there")
    assert (usage.requests, usage.prompt_tokens, usage.completion_tokens) == (1, 31, 7)
    body = seen[0]
    assert body["model"] == "agent-x" and body["messages"] == [m.to_dict() for m in HELLO]
    assert body["tools"] == [t.to_openai() for t in tools] and body["tool_choice"] == "auto"
    assert (body["seed"], body["temperature"], body["max_tokens"], body["top_p"]) == (7, 0.0, 64, 0.5)


def test_no_tools_and_no_seed_are_left_out():
    respond, seen = recording(mock.text_reply("ok"))
    with mock.MockOpenAI(respond) as url:
        chat(OpenAIChatModel("m", url))
    assert set(seen[0]) == {"model", "messages"}


def test_tool_calls_keep_raw_arguments_even_when_malformed():
    reply_body = mock.tool_call_reply([("find", {"q": "shoes"}), ("broken", '{"id": 12,')], content="Let me look.")
    del reply_body["choices"][0]["message"]["tool_calls"][1]["id"]  # servers sometimes omit ids
    with mock.MockOpenAI(mock.constant(reply_body)) as url:
        reply, _ = chat(OpenAIChatModel("m", url))
    assert reply.content == "Let me look."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("find", '{"q": "shoes"}'), ("broken", '{"id": 12,')]
    assert reply.tool_calls[0].id == "call_0" and reply.tool_calls[1].id == "call_2_1"  # len(HELLO) == 2



def test_arguments_text_is_the_environments_to_judge_unless_it_would_crash_it():
    """Arguments text json.loads reads (NaN, 1e309) or answers (broken JSON) stays a call; text it would crash on
    (nesting, a 5,000-digit integer) or no UTF-8 can carry (a lone surrogate) makes the reply malformed."""
    for text in ('{"n": NaN}', '{"n": 1e309}', '{"n": 1,', ""):
        assert parse_reply(mock.tool_call_reply([("f", text)]))[0].tool_calls[0].arguments == text
    for text, reason in [("[" * 10_000 + "]" * 10_000, "nested too deeply"), ('{"n": ' + "9" * 5000 + "}", "digits"),
                         ('{"n": "\\ud800"}', "not valid Unicode"), ('{"n": "\ud800"}', "not valid Unicode"),
                         ("[" * 101 + "]" * 101, "nested deeper than 100")]:
        with pytest.raises(_Transient, match=f"malformed reply: tool call 2's arguments: the text .*{reason}"):
            parse_reply(mock.tool_call_reply([("f", "{}"), ("f", text)]))

@pytest.mark.parametrize("kind", mock.FAULT_KINDS)
def test_each_fault_kind_is_retried_then_succeeds(kind):
    server = mock.MockOpenAI(echo, mock.Faults(sequence=(kind, kind)))
    with server as url:
        reply, usage = chat(OpenAIChatModel("m", url, timeout_s=0.5, retry=FAST))
    assert reply.content == "olleh" and usage.requests == 1
    assert server.requests == 3 and server.fault_counts == {kind: 2} and server.succeeded == 1


def test_faults_do_not_change_the_answers():
    prompts = [[Message(role="user", content=f"question {i}")] for i in range(40)]

    def run(faults):
        counter = iter(range(1000))  # stateful responder: the n-th successful request gets answer n
        server = mock.MockOpenAI(lambda req: mock.text_reply(f"answer {next(counter)}"), faults)
        with server as url:
            async def go():
                model = OpenAIChatModel("m", url, timeout_s=0.3,
                                        retry=RetryPolicy(max_attempts=30, initial_wait_s=0.001, max_wait_s=0.005))
                out = [(await model.chat(p))[0].content for p in prompts]
                await model.aclose()
                return out
            return asyncio.run(go()), server

    clean, _ = run(mock.Faults())
    faulty, server = run(mock.Faults(rate=0.4, seed=3, kinds=("429", "500", "drop", "malformed", "truncated")))
    assert sum(server.fault_counts.values()) > 5
    assert faulty == clean == [f"answer {i}" for i in range(40)]


def test_concurrent_requests_with_faults_all_answer_correctly():
    server = mock.MockOpenAI(echo, mock.Faults(rate=0.3, seed=1, kinds=("429", "503", "drop", "no_choices")))
    with server as url:
        async def go():
            model = OpenAIChatModel("m", url, retry=RetryPolicy(max_attempts=30, initial_wait_s=0.001,
                                                                max_wait_s=0.005))
            replies = await asyncio.gather(*(model.chat([Message(role="user", content=f"msg {i}")])
                                             for i in range(200)))
            await model.aclose()
            return replies
        replies = asyncio.run(go())
    assert [r.content for r, _ in replies] == [f"msg {i}"[::-1] for i in range(200)]
    assert server.succeeded == 200 and server.requests == 200 + sum(server.fault_counts.values())


@pytest.mark.parametrize("body", [
    {}, [], "text", None, {"choices": []}, {"choices": [{"message": "hi"}]},
    {"choices": [{"message": {"content": 3}}]}, {"choices": [{"message": {"tool_calls": ["f"]}}]},
    {"choices": [{"message": {"content": "a"}}], "usage": {"prompt_tokens": "many"}},
])
def test_unusable_bodies_are_malformed_replies(body):
    with pytest.raises(_Transient, match="malformed reply"):
        parse_reply(body)



@pytest.mark.parametrize("count, tokens", [(12, 12), (12.0, 12), (0, 0), (None, 0), ("absent", 0)])
def test_usage_counts_are_whole_numbers_or_absent(count, tokens):
    body = {"choices": [{"message": {"content": "a"}}], "usage": {} if count == "absent" else {"prompt_tokens": count}}
    assert parse_reply(body)[1].prompt_tokens == tokens


@pytest.mark.parametrize("count", [-1, 1.5, 10**13, 1e300, float("inf"), float("nan"), True, "12", [3]])
def test_usage_counts_that_are_no_counts_make_a_malformed_reply(count):
    body = {"choices": [{"message": {"content": "a"}}], "usage": {"completion_tokens": count}}
    with pytest.raises(_Transient, match="malformed reply: usage completion_tokens is .*, not a token count"):
        parse_reply(body)


def test_a_lone_surrogate_in_a_message_is_sent_escaped():
    """Text no UTF-8 can hold (a task file's "\\ud800") must not stop the request: it is sent as its JSON
    escape, which decodes back to the same text; everything else is sent exactly as json.dumps writes it."""
    from mua.harness.models.providers import AnthropicChatModel, GeminiChatModel

    messages = [Message(role="system", content="be brief"), Message(role="user", content="half \ud800 é")]
    for cls in (OpenAIChatModel, AnthropicChatModel, GeminiChatModel):
        model = cls("m", "http://127.0.0.1:9/v1")
        payload = model.request_payload(messages)
        assert b"half \\ud800 \xc3\xa9" in payload, cls
        assert json.loads(payload.decode("utf-8")) == model.request_body(messages)
    respond, seen = recording(mock.text_reply("ok"))
    with mock.MockOpenAI(respond) as url:
        reply, _ = chat(OpenAIChatModel("m", url), messages)
    assert reply.content == "ok" and seen[0]["messages"][1]["content"] == "half \ud800 é"


@pytest.mark.parametrize("status", [400, 500])
def test_a_hostile_error_body_is_shown_as_text(status):
    deep = "[" * 10_000 + "]" * 10_000
    with mock.MockOpenAI(lambda req: mock.HTTPReply(status, '{"error": ' + deep + "}")) as url:
        with pytest.raises(ModelError, match=re.escape(f'HTTP {status}: {{"error": [[[[')):
            chat(OpenAIChatModel("m", url, retry={"max_attempts": 2, "initial_wait_s": 0.001}))


def test_a_reply_over_the_body_cap_is_a_model_error(monkeypatch):
    from mua.harness.models import http1

    monkeypatch.setattr(http1, "MAX_BODY_BYTES", 4096)
    with mock.MockOpenAI(mock.constant(mock.text_reply("x" * 5000))) as url:
        with pytest.raises(ModelError, match="failed after 2 attempt.*reply body over 4096 bytes"):
            chat(OpenAIChatModel("m", url, retry={"max_attempts": 2, "initial_wait_s": 0.001}))

def test_garbled_http_is_retried():
    class Garbling(mock.MockOpenAI):
        async def _respond(self, method, path, body, reader, writer):
            if self.requests == 0:
                self.requests += 1
                writer.write(b"NOT-HTTP garbage\r\n\r\n")
                return False
            return await super()._respond(method, path, body, reader, writer)

    server = Garbling(echo)
    with server as url:
        reply, _ = chat(OpenAIChatModel("m", url, retry=FAST))
    assert reply.content == "olleh" and server.requests == 2


def test_content_parts_become_text():
    message, usage = parse_reply({"choices": [{"message": {"content": [{"type": "text", "text": "a"},
                                                                         {"type": "text", "text": "b"}]}}]})
    assert message.content == "ab" and usage.requests == 1 and usage.prompt_tokens == 0


def test_bounded_attempts_end_in_model_error():
    server = mock.MockOpenAI(lambda req: mock.HTTPReply(503, {"error": {"message": "overloaded"}}))
    with server as url:
        with pytest.raises(ModelError) as err:
            chat(OpenAIChatModel("m", url, retry=FAST))
    assert server.requests == FAST.max_attempts
    text = str(err.value)
    assert url in text and "HTTP 503" in text and "overloaded" in text and "6 attempt" in text


def test_total_time_bound_ends_retries():
    policy = RetryPolicy(max_attempts=1000, initial_wait_s=0.05, max_wait_s=0.05, max_total_s=0.4)
    server = mock.MockOpenAI(lambda req: mock.HTTPReply(500, {"error": {"message": "boom"}}))
    with server as url:
        started = time.monotonic()
        with pytest.raises(ModelError):
            chat(OpenAIChatModel("m", url, retry=policy))
        elapsed = time.monotonic() - started
    assert elapsed < 2.0 and 2 <= server.requests < 100


def test_hang_past_timeout_ends_in_model_error_when_it_persists():
    server = mock.MockOpenAI(echo, mock.Faults(rate=1.0, kinds=("hang",)))
    with server as url:
        with pytest.raises(ModelError, match="no complete reply within 0.2 s"):
            chat(OpenAIChatModel("m", url, timeout_s=0.2, retry=RetryPolicy(max_attempts=2, initial_wait_s=0.001)))
    assert server.requests == 2


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_client_errors_are_not_retried(status):
    server = mock.MockOpenAI(lambda req: mock.HTTPReply(status, {"error": {"message": "max_tokens is too large"}}))
    with server as url:
        with pytest.raises(ModelError) as err:
            chat(OpenAIChatModel("m", url, retry=FAST))
    assert server.requests == 1
    assert f"HTTP {status}: max_tokens is too large" in str(err.value) and url in str(err.value)


def test_vllm_style_error_body_gives_its_message():
    vllm_error = {"object": "error", "message": "\"auto\" tool choice requires --enable-auto-tool-choice",
                  "type": "BadRequestError", "param": None, "code": 400}
    with mock.MockOpenAI(lambda req: mock.HTTPReply(400, vllm_error)) as url:
        with pytest.raises(ModelError, match="HTTP 400: \"auto\" tool choice requires --enable-auto-tool"):
            chat(OpenAIChatModel("m", url))


@pytest.mark.parametrize("status", [408, 409])
def test_timeout_and_conflict_statuses_are_retried(status):
    replies = iter([mock.HTTPReply(status, "busy"), mock.text_reply("fine")])
    server = mock.MockOpenAI(lambda req: next(replies))
    with server as url:
        reply, _ = chat(OpenAIChatModel("m", url, retry=FAST))
    assert reply.content == "fine" and server.requests == 2


def test_retry_after_is_honoured_and_capped():
    def run(retry_after: str, policy: RetryPolicy) -> float:
        replies = iter([mock.HTTPReply(429, {"error": {"message": "slow down"}}, {"Retry-After": retry_after}),
                        mock.text_reply("ok")])
        with mock.MockOpenAI(lambda req: next(replies)) as url:
            started = time.monotonic()
            chat(OpenAIChatModel("m", url, retry=policy))
            return time.monotonic() - started

    own_backoff_tiny = RetryPolicy(initial_wait_s=0.001, max_wait_s=1.0)  # first backoff <= 0.001 s
    assert run("0.4", own_backoff_tiny) >= 0.4
    assert run("3600", RetryPolicy(initial_wait_s=0.001, max_wait_s=0.05)) < 1.0


def test_parse_retry_after():
    assert parse_retry_after("2") == 2.0 and parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT") == 0.0  # a date in the past: no wait


def test_api_key_never_shown_even_when_the_server_echoes_it(monkeypatch, caplog):
    monkeypatch.setenv("MUA_TEST_KEY", KEY)

    def leaky(request):  # a server that echoes the credentials in its error texts
        return mock.HTTPReply(500, {"error": {"message": f"bad key {KEY}"}})

    caplog.set_level(logging.DEBUG)
    with mock.MockOpenAI(leaky) as url:
        model = OpenAIChatModel("m", url, api_key_env="MUA_TEST_KEY", retry=FAST)
        with pytest.raises(ModelError) as err:
            chat(model)
    assert "bad key ***" in str(err.value)
    assert caplog.records, "retries should be logged"
    shown = [str(err.value), repr(err.value), repr(model), json.dumps(model.describe()), caplog.text]
    assert all(KEY not in s for s in shown)
    assert model.describe()["api_key_env"] == "MUA_TEST_KEY"


def test_key_reaches_the_server_and_no_key_means_no_header(monkeypatch):
    monkeypatch.setenv("MUA_TEST_KEY", KEY)
    monkeypatch.delenv("MUA_NO_SUCH_KEY", raising=False)
    received = []

    class Recorder(mock.MockOpenAI):  # capture the Authorization header as the server parsed it
        async def _connection(self, reader, writer):
            original = reader.readuntil

            async def readuntil(sep):
                head = await original(sep)
                received.append([ln for ln in head.decode().split("\r\n") if ln.lower().startswith("authorization")])
                return head
            reader.readuntil = readuntil
            await super()._connection(reader, writer)

    with Recorder() as url:
        chat(OpenAIChatModel("m", url, api_key_env="MUA_TEST_KEY"))
        chat(OpenAIChatModel("m", url, api_key_env="MUA_NO_SUCH_KEY"))
    assert [r for r in received if r] == [[f"Authorization: Bearer {KEY}"]]


def test_connections_are_kept_alive_and_reused():
    server = mock.MockOpenAI(echo)
    with server as url:
        async def go():
            model = OpenAIChatModel("m", url)
            for i in range(20):
                await model.chat([Message(role="user", content=str(i))])
            await asyncio.gather(*(model.chat([Message(role="user", content="x")]) for _ in range(8)))
            await model.aclose()
        asyncio.run(go())
    assert server.requests == 28 and 1 <= server.connections <= 8


def test_a_failing_responder_is_reported_not_retried():
    server = mock.MockOpenAI(lambda req: 1 / 0)
    with server as url:
        with pytest.raises(ModelError, match="mock responder raised ZeroDivisionError"):
            chat(OpenAIChatModel("m", url, retry=FAST))
    assert server.requests == 1


def test_model_survives_a_new_event_loop():
    """A session belongs to its loop: a second asyncio.run gets a new one (the abandoned one cannot be closed
    from the new loop, hence the ResourceWarning that callers avoid by awaiting aclose() in each loop)."""
    with mock.MockOpenAI(echo) as url:
        model = OpenAIChatModel("m", url)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            first = asyncio.run(model.chat([Message(role="user", content="one")]))
            second = chat(model, [Message(role="user", content="two")])
            gc.collect()  # the abandoned session's sockets: collected here, under this filter
    assert (first[0].content, second[0].content) == ("eno", "owt")


def test_describe_is_json_safe():
    model = OpenAIChatModel("qwen", "http://localhost:8000/v1/", temperature=0.7)
    d = json.loads(json.dumps(model.describe()))
    assert d["model"] == "qwen" and d["base_url"] == "http://localhost:8000/v1"
    assert d["params"] == {"temperature": 0.7} and d["retry"]["max_attempts"] == 8
    assert model.url == "http://localhost:8000/v1/chat/completions"


def test_factory_routes_names_to_the_endpoint_and_directories_to_local(tmp_path, monkeypatch):
    model = make_chat_model("gpt-x", "http://h/v1", temperature=0.1)
    assert isinstance(model, OpenAIChatModel) and model.params == {"temperature": 0.1}
    assert isinstance(make_chat_model(str(tmp_path), "http://h/v1"), OpenAIChatModel)  # served by path name
    fake = type(sys)("mua.harness.models.checkpoint")
    fake.make_local_chat_model = lambda path, **params: ("local", path, params)
    monkeypatch.setitem(sys.modules, "mua.harness.models.checkpoint", fake)
    import mua.harness.models as models
    monkeypatch.setattr(models, "checkpoint", fake, raising=False)
    with pytest.raises(ConfigError, match="not a model checkpoint"):
        make_chat_model(str(tmp_path), None)
    (tmp_path / "config.json").write_text("{}")
    local = make_chat_model(str(tmp_path), None, api_key_env="K", timeout_s=3, max_tokens=8)
    assert local == ("local", str(tmp_path), {"max_tokens": 8})  # endpoint-only options are not passed on


def test_base_url_defaults_to_env_then_local_and_must_be_http(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert OpenAIChatModel("m").base_url == "http://127.0.0.1:8000/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "https://example.test/v1/")
    assert OpenAIChatModel("m").base_url == "https://example.test/v1"
    with pytest.raises(ConfigError, match="not an http"):
        OpenAIChatModel("m", "notaurl")


def test_credentials_in_model_params_are_refused():
    for key in ("api_key", "headers", "Authorization"):
        with pytest.raises(ConfigError, match="look like credentials"):
            make_chat_model("m", "http://h/v1", **{key: "sk-secret"})


def test_retry_settings_may_come_as_a_dict():
    model = make_chat_model("m", "http://h/v1", retry={"max_attempts": 3, "max_wait_s": 0.5})
    assert model.retry == RetryPolicy(max_attempts=3, max_wait_s=0.5)
    with pytest.raises(ConfigError, match="max_attempt"):
        OpenAIChatModel("m", "http://h/v1", retry={"max_attempt": 3})


def test_mock_runs_as_a_subprocess():
    with subprocess.Popen([sys.executable, str(MOCK_PATH), "--port", "0"], stdout=subprocess.PIPE,
                          text=True) as proc:
        try:
            line = proc.stdout.readline().split()
            assert line[0] == "READY"
            url = line[1]
            reply, _ = chat(OpenAIChatModel("m", url))

            async def stats():
                async with aiohttp.ClientSession() as s:
                    async with s.get(url.rsplit("/v1", 1)[0] + "/stats") as r:
                        return await r.json()
            got = asyncio.run(stats())
        finally:
            proc.terminate()
    assert reply.content == "OK" and got["requests"] == 1 and got["cpu_s"] > 0
