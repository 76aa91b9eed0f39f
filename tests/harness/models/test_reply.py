"""The shared completion-to-message step (assistant_reply) and the vLLM request/output helpers, which
evaluation and training both use; no model or GPU needed."""
import json
import math
from types import SimpleNamespace as ns

from mua.harness.models.generation import GenerationRequest
from mua.harness.models.parsers import parse_hermes, parse_llama3_json
from mua.harness.models.reply import assistant_reply, call_id, template_thinks
from mua.harness.models.vllm_backend import generation_result, sampled_logprob, sampling_kwargs

CALL = '<tool_call>{"name": "get_order", "arguments": {"order_id": "#W1"}}</tool_call>'


def test_reasoning_template_thinking_is_split_off_before_parsing():
    assert template_thinks("{% if x %}<think>{% endif %}") and not template_thinks(None)
    text = f"<think>\nLook up <tool_call>{{\"name\": \"ghost\"}}</tool_call> first.\n</think>\n\nOn it. {CALL}"
    reply = assistant_reply(text, parse_hermes, split_thinking=True, prompt_ids=[1, 2], completion_ids=[3, 4])
    assert reply.reasoning.startswith("Look up") and reply.problem is None
    assert reply.message.content == "On it." and [c.name for c in reply.message.tool_calls] == ["get_order"]
    assert reply.message.tool_calls[0].id == call_id([1, 2], [3, 4], 0)
    plain = assistant_reply(text, parse_hermes, split_thinking=False, prompt_ids=[1, 2], completion_ids=[3, 4])
    # without a reasoning template, the text is taken as is: the thought-of call becomes a real one
    assert plain.reasoning is None and [c.name for c in plain.message.tool_calls] == ["ghost", "get_order"]


def test_ids_follow_the_token_streams_and_malformed_output_is_text():
    two = assistant_reply(CALL + CALL, parse_hermes, split_thinking=False, prompt_ids=[1], completion_ids=[5])
    ids = [c.id for c in two.message.tool_calls]
    assert len(set(ids)) == 2 and two.message.role == "assistant" and two.message.content is None
    other = assistant_reply(CALL, parse_hermes, split_thinking=False, prompt_ids=[1], completion_ids=[6])
    assert other.message.tool_calls[0].id not in ids
    bad = assistant_reply('{"name": "f", "parameters": {"a": "\\ud800"}}', parse_llama3_json,
                          split_thinking=False, prompt_ids=[1], completion_ids=[5])
    assert bad.message.tool_calls is None and "not valid Unicode" in bad.problem
    cut = assistant_reply("<think>still", parse_hermes, split_thinking=True, prompt_ids=[1], completion_ids=[5])
    assert cut.message.content is None and cut.reasoning == "still"


def test_vllm_sampling_kwargs_are_plain_json():
    kwargs = sampling_kwargs(GenerationRequest([1, 2], 7, 0.5, 0.9, 11), {9, 4})
    assert kwargs == {"n": 1, "temperature": 0.5, "top_p": 0.9, "seed": 11, "max_tokens": 7, "logprobs": 0,
                      "stop_token_ids": [4, 9], "skip_special_tokens": False}
    assert json.loads(json.dumps(kwargs)) == kwargs  # also usable as an HTTP request body


def test_vllm_outputs_read_as_generation_results():
    assert sampled_logprob({5: ns(logprob=-0.5)}, 5) == -0.5 and sampled_logprob({5: -0.25}, 5) == -0.25
    assert math.isnan(sampled_logprob({6: ns(logprob=-1.0)}, 5)) and math.isnan(sampled_logprob(None, 5))
    stopped = generation_result(ns(token_ids=(3, 9), logprobs=[{3: ns(logprob=-1.0)}, {9: -2.0}],
                                   finish_reason="stop"), {9})
    assert (stopped.token_ids, stopped.logprobs, stopped.finish_reason) == ([3, 9], [-1.0, -2.0], "stop")
    # "stop" without a stop id at the end (e.g. a stop string) is not a stop as TurnRecord defines it
    assert generation_result(ns(token_ids=[3], logprobs=None, finish_reason="stop"), {9}).finish_reason == "length"
    cut = generation_result(ns(token_ids=[3, 3], logprobs=None, finish_reason="length"), {9})
    assert (cut.logprobs, cut.finish_reason) == ([], "length")
