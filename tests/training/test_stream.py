"""The token stream: built once, generated ids kept verbatim, context appended as template suffixes."""
from __future__ import annotations

import asyncio

import pytest
from gold_warmup import gold_streams
from helpers.counter_bench import CounterBenchmark
from training_fakes import ScriptedBackend

from mua.harness.agents import ModelAgent
from mua.harness.models.chat_template import template_messages
from mua.harness.models.stream import StreamError, TemplateSuffixer, TokenStream, stop_text_of
from mua.harness.runner import agent_view, run_episode
from mua.harness.types import Message, ToolCall
from mua.harness.users.simulator import ScriptedUser
from mua.training.policy import Budget, BudgetExhausted
from mua.training.sft import teacher_policy

BENCH = CounterBenchmark(n_tasks=3)


def _policy(tokenizer, stop_ids, backend, budget=None):
    pol = teacher_policy(tokenizer, stop_ids, budget)
    pol.backend = backend
    return pol


def _segments(stream: TokenStream) -> list[tuple[int, list[int]]]:
    segs: list[tuple[int, list[int]]] = []
    for token, mask in zip(stream.completion_ids, stream.env_mask):
        if not segs or segs[-1][0] != mask:
            segs.append((mask, []))
        segs[-1][1].append(token)
    return segs


def test_gold_stream_decodes_to_the_rendered_conversation(tiny_tokenizer, stop_ids):
    tasks = BENCH.load_tasks("hard")
    streams = gold_streams(BENCH, tasks, tiny_tokenizer, stop_ids)
    for task, stream in zip(tasks, streams):
        result = asyncio.run(run_episode(BENCH, task, BENCH.gold_agent(task), BENCH.gold_user(task)))
        view = [Message(role="system", content="You operate a counter.")] + agent_view(result.messages)
        last = max(i for i, m in enumerate(view) if m.role == "assistant")
        rendered = tiny_tokenizer.apply_chat_template(
            template_messages(view[:last + 1]), tools=[t.to_openai() for t in BENCH.start(task).env.agent_tools()],
            tokenize=False)
        suffixer = TemplateSuffixer(tiny_tokenizer, stop_text_of(tiny_tokenizer, stop_ids))
        decoded = tiny_tokenizer.decode(stream.ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        assert decoded + suffixer.after_stop == rendered
        masks = [m for m, _ in _segments(stream)]
        assert masks == [1, 0, 1]  # tool call, tool result + generation prompt, final answer
        assert str(task.evaluation["target"]) in tiny_tokenizer.decode(_segments(stream)[0][1])


def test_generated_ids_are_kept_verbatim_and_context_follows(tiny_tokenizer, stop_ids):
    # Non-canonical JSON spacing: re-rendering would change these tokens; the stream must not.
    odd = '<tool_call>\n{"name":"add",   "arguments":{"n":3}}\n</tool_call>'
    eos = tiny_tokenizer.eos_token_id
    backend = ScriptedBackend(tiny_tokenizer, [odd, "Done."], eos)
    policy = _policy(tiny_tokenizer, stop_ids, backend)
    task = BENCH.load_tasks("easy")[2]
    result = asyncio.run(run_episode(BENCH, task, ModelAgent(policy), BENCH.gold_user(task)))
    assert result.score.reward == 1.0 and result.messages[2].tool_calls[0].arguments == '{"n": 3}'
    segs = _segments(policy.stream)
    assert [m for m, _ in segs] == [1, 0, 1]
    assert segs[0][1] == backend.replies[0] and segs[2][1] == backend.replies[1]
    assert tiny_tokenizer.decode(segs[1][1]) == (
        "\n<|im_start|>user\n<tool_response>\n3\n</tool_response><|im_end|>\n<|im_start|>assistant\n")
    # every request's prompt is exactly the stream so far: no re-tokenisation between turns
    assert backend.requests[1].prompt_ids == policy.stream.prompt_ids + segs[0][1] + segs[1][1]
    # sampling log-probs on generated tokens, zeros on context
    first = len(segs[0][1])
    assert policy.stream.logprobs[:first] == pytest.approx([-0.01 * (i + 1) for i in range(first)])
    assert set(policy.stream.logprobs[len(segs[0][1]):len(segs[0][1]) + len(segs[1][1])]) == {0.0}


def test_cut_reply_is_closed_by_the_suffix_and_counted_as_clipped(tiny_tokenizer, stop_ids):
    backend = ScriptedBackend(tiny_tokenizer, ["I will now think about this for a long long time"],
                              tiny_tokenizer.eos_token_id)
    policy = _policy(tiny_tokenizer, stop_ids, backend, Budget(max_turn_tokens=4, max_completion_tokens=10**6))
    task = BENCH.load_tasks("easy")[0]
    user = ScriptedUser(["first", "second", "###STOP###"], stop_markers=["###STOP###"])
    asyncio.run(run_episode(BENCH, task, ModelAgent(policy), user))
    assert policy.clipped_turns == policy.turns == 2
    first_context = _segments(policy.stream)[1][1]
    assert tiny_tokenizer.decode(first_context) == (
        "<|im_end|>\n<|im_start|>user\nsecond<|im_end|>\n<|im_start|>assistant\n")
    assert all(len(ids) == 4 for m, ids in _segments(policy.stream) if m == 1)


def test_completion_budget_raises_and_stream_ends_at_last_generated_token(tiny_tokenizer, stop_ids):
    call = '<tool_call>\n{"name": "add", "arguments": {"n": 1}}\n</tool_call>'
    backend = ScriptedBackend(tiny_tokenizer, [call], tiny_tokenizer.eos_token_id)
    policy = _policy(tiny_tokenizer, stop_ids, backend, Budget(max_turn_tokens=64, max_completion_tokens=60))
    task = BENCH.load_tasks("easy")[0]
    with pytest.raises(BudgetExhausted):
        asyncio.run(run_episode(BENCH, task, ModelAgent(policy), BENCH.gold_user(task)))
    assert all(r.max_new_tokens <= 64 for r in backend.requests)
    assert len(policy.stream.completion_ids) <= 60 + len(backend.replies[0])
    trimmed = policy.stream.trimmed()
    assert trimmed.env_mask[-1] == 1 and trimmed.completion_ids[-1] == tiny_tokenizer.eos_token_id
    assert sum(trimmed.env_mask) == policy.stream.generated_tokens


def test_edited_history_is_refused(tiny_tokenizer, stop_ids):
    backend = ScriptedBackend(tiny_tokenizer, ["ok"], tiny_tokenizer.eos_token_id)
    policy = _policy(tiny_tokenizer, stop_ids, backend)
    tools = BENCH.start(BENCH.load_tasks("easy")[0]).env.agent_tools()
    first = [Message(role="system", content="s"), Message(role="user", content="hi")]
    reply, _ = asyncio.run(policy.chat(first, tools))
    with pytest.raises(StreamError, match="does not extend"):
        asyncio.run(policy.chat(first + [Message(role="assistant", content="other"),
                                         Message(role="user", content="x")], tools))


def test_tool_call_ids_depend_only_on_tokens(tiny_tokenizer, stop_ids):
    call = '<tool_call>\n{"name": "add", "arguments": {"n": 2}}\n</tool_call>'
    ids = []
    for _ in range(2):
        backend = ScriptedBackend(tiny_tokenizer, [call, "Done."], tiny_tokenizer.eos_token_id)
        policy = _policy(tiny_tokenizer, stop_ids, backend)
        task = BENCH.load_tasks("easy")[1]
        result = asyncio.run(run_episode(BENCH, task, ModelAgent(policy), BENCH.gold_user(task)))
        ids.append([c.id for m in result.messages for c in (m.tool_calls or [])])
    assert ids[0] == ids[1] and ids[0][0].startswith("call_")
    assert isinstance(ToolCall(id=ids[0][0], name="add").id, str)


def test_reply_ending_in_another_stop_token_is_closed_as_the_template_renders(tiny_tokenizer):
    """Qwen stops on <|endoftext|> as well as <|im_end|>: after the former the stream must still read as the
    template renders the conversation (the reply's text ends in that token, then <|im_end|>)."""
    foreign = tiny_tokenizer.pad_token_id  # <|endoftext|>
    stops = {tiny_tokenizer.eos_token_id, foreign}
    call = '<tool_call>\n{"name": "add", "arguments": {"n": 3}}\n</tool_call>'
    backend = ScriptedBackend(tiny_tokenizer, [call, "Done."], foreign)
    policy = _policy(tiny_tokenizer, stops, backend)
    task = BENCH.load_tasks("easy")[2]
    result = asyncio.run(run_episode(BENCH, task, ModelAgent(policy), BENCH.gold_user(task)))
    assert result.score.reward == 1.0  # the stop token is not part of the parsed reply
    assert policy.clipped_turns == 0 and not policy.last_reply_cut
    segs = _segments(policy.stream)
    assert [m for m, _ in segs] == [1, 0, 1] and segs[0][1][-1] == foreign
    assert tiny_tokenizer.decode(segs[1][1]).startswith("<|im_end|>\n<|im_start|>user\n<tool_response>")
    # the template, rendering each reply as the raw text generated, gives exactly the stream
    view = [Message(role="system", content="You operate a counter.")] + agent_view(result.messages)
    raw = iter(tiny_tokenizer.decode(ids, skip_special_tokens=False) for m, ids in segs if m == 1)
    convo = [Message(role="assistant", content=next(raw)) if m.role == "assistant" and i > 1 else m
             for i, m in enumerate(view)][:-1]  # up to the last reply; the closing user turn is not streamed
    rendered = tiny_tokenizer.apply_chat_template(
        template_messages(convo), tools=[t.to_openai() for t in BENCH.start(task).env.agent_tools()],
        tokenize=False)
    decoded = tiny_tokenizer.decode(policy.stream.ids, skip_special_tokens=False)
    assert rendered == decoded + "<|im_end|>\n"


@pytest.mark.parametrize("system", [[], [Message(role="system", content="Be brief.")]])
def test_tools_added_mid_episode_enter_the_stream_as_the_template_renders_them(tiny_tokenizer, stop_ids, system):
    """BFCL miss_func: the tool list grows at a later turn. The new list follows as the turn in which the
    template presents tools, masked: the context appended is exactly what the template renders for a
    conversation that starts with the new tools at that turn."""
    from helpers.counter_bench import ADD, PEEK

    backend = ScriptedBackend(tiny_tokenizer, ["ok", "now"], tiny_tokenizer.eos_token_id)
    policy = _policy(tiny_tokenizer, stop_ids, backend)
    first = system + [Message(role="user", content="hi")]
    reply, _ = asyncio.run(policy.chat(first, [ADD]))
    head = len(policy.stream.completion_ids)
    asked = Message(role="user", content="I have updated some more functions you can choose from.")
    asyncio.run(policy.chat(first + [reply, asked], [ADD, PEEK]))
    stream = policy.stream
    generated = len(backend.replies[1])
    context = stream.completion_ids[head:len(stream.completion_ids) - generated]
    assert set(stream.env_mask[head:len(stream.completion_ids) - generated]) == {0}
    assert stream.env_mask[-generated:] == [1] * generated  # the next reply is generated after it
    suffixer = TemplateSuffixer(tiny_tokenizer, tiny_tokenizer.eos_token)
    rendered = tiny_tokenizer.apply_chat_template(template_messages(system + [asked]),
                                                  tools=[ADD.to_openai(), PEEK.to_openai()], tokenize=False,
                                                  add_generation_prompt=True)
    assert tiny_tokenizer.decode(context) == suffixer.after_stop + rendered
    assert '"name": "peek"' in rendered
    # the prompt at the top still lists the first tools only: nothing already in the stream changed
    assert '"peek"' not in tiny_tokenizer.decode(stream.prompt_ids)
