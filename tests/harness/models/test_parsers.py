import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mua.harness.models.parsers import (
    MAX_NESTING,
    PARSERS,
    get_parser,
    parse_hermes,
    parse_llama3_json,
    parse_none,
    parser_for_template,
    split_reasoning,
)

FUZZ = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.text(alphabet="abcxyz_ABC019.", min_size=1, max_size=12)
keys = st.text(max_size=6)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
json_values = json_scalars | st.lists(json_scalars, max_size=3) | st.dictionaries(keys, json_scalars, max_size=3)
arg_objects = st.dictionaries(keys, json_values, max_size=3)
# text around the blocks: anything that is not itself a tool-call tag
plain_text = st.text(max_size=40).filter(lambda s: "<tool_call>" not in s and "</tool_call>" not in s)
BIG_INT = "1" * 5000  # over Python's 4,300-digit int conversion limit: a ValueError, not JSONDecodeError
noise_pieces = st.sampled_from(["<tool_call>", "</tool_call>", "{", "}", '"name"', ":", ",", '"arguments"',
                                "<|python_tag|>", ";", "[", "]", "\n", " ", '"x"', "null", "1", BIG_INT,
                                "[" * 3000, "[" * 150 + "]" * 150, '"\\ud800"', '"\\udfff x"',
                                '"\\ud83d\\ude00"', '{"name": "f", "arguments": '])
noisy_output = st.lists(noise_pieces | st.text(max_size=6), max_size=30).map("".join)


def test_hermes_single_call_with_text_around():
    out = parse_hermes('Let me check.\n<tool_call>\n{"name": "get_order", "arguments": {"id": "#W1"}}\n'
                       '</tool_call>\nOne moment.')
    assert [c.name for c in out.tool_calls] == ["get_order"]
    assert json.loads(out.tool_calls[0].arguments) == {"id": "#W1"}
    assert out.content == "Let me check.\n\nOne moment."
    assert out.problem is None


def test_hermes_several_calls_and_truncated_final_block():
    text = ('<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", '
            '"arguments": {"k": [1, 2]}}')
    out = parse_hermes(text)
    assert [c.name for c in out.tool_calls] == ["a", "b"]
    assert out.tool_calls[1].arguments == '{"k": [1, 2]}'
    assert out.content is None


def test_hermes_broken_json_becomes_text_verbatim():
    text = 'ok <tool_call>{"name": "a", "arguments": {</tool_call>'
    out = parse_hermes(text)
    assert out.tool_calls == [] and out.content == text
    assert "not valid JSON" in out.problem


def test_hermes_call_without_name_becomes_text():
    out = parse_hermes('<tool_call>{"arguments": {}}</tool_call>')
    assert out.tool_calls == [] and "no function name" in out.problem


def test_unknown_tool_and_non_object_arguments_stay_calls_for_the_environment():
    out = parse_hermes('<tool_call>{"name": "no_such_tool", "arguments": [1]}</tool_call>')
    assert out.tool_calls[0].name == "no_such_tool" and out.tool_calls[0].arguments == "[1]"
    raw = parse_hermes('<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>')
    assert raw.tool_calls[0].arguments == '{"a": 1}'  # a string is passed through untouched


def hermes_call(arguments: str, name: str = '"f"') -> str:
    return f'<tool_call>{{"name": {name}, "arguments": {arguments}}}</tool_call>'


def llama3_call(arguments: str, name: str = '"f"') -> str:
    return f'{{"name": {name}, "parameters": {arguments}}}'


MALFORMED = {
    "integer over the digit limit": ('{"a": ' + BIG_INT + "}", "not valid JSON"),
    "nesting past the recursion limit": ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
    "nesting past MAX_NESTING": ("[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1), "nested deeper"),
    "lone surrogate in a value": ('{"a": "\\ud800"}', "not valid Unicode"),
    "lone surrogate in a key": ('{"\\udc00": 1}', "not valid Unicode"),
    "lone surrogate in string arguments": ('"{\\"a\\": \\"\\ud800\\"}"', "not valid Unicode"),
    # arguments given as a string: the JSON inside it is held to the same rules (the environment parses it)
    "deep JSON inside string arguments": (json.dumps("[" * 10_000 + "]" * 10_000), "nested too deeply"),
    "surrogate escape inside string arguments": (json.dumps('{"a": "\\ud800"}'), "not valid Unicode"),
    "long integer inside string arguments": (json.dumps('{"a": ' + BIG_INT + "}"), "digits"),
}


@pytest.mark.parametrize("wrap", [hermes_call, llama3_call], ids=["hermes", "llama3_json"])
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_unusable_json_is_the_malformed_case_not_a_crash(wrap, case):
    arguments, problem = MALFORMED[case]
    text = wrap(arguments)
    out = (parse_hermes if wrap is hermes_call else parse_llama3_json)(text)
    assert out.tool_calls == [] and out.content == text and problem in out.problem


@pytest.mark.parametrize("wrap", [hermes_call, llama3_call], ids=["hermes", "llama3_json"])
def test_name_with_a_lone_surrogate_is_malformed(wrap):
    out = (parse_hermes if wrap is hermes_call else parse_llama3_json)(wrap("{}", name='"get\\ud800"'))
    assert out.tool_calls == [] and "name that is not valid Unicode" in out.problem


def test_valid_escapes_and_moderate_nesting_stay_calls():
    nested = "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1)  # the object itself is one level
    out = parse_hermes(hermes_call('{"a": "\\ud83d\\ude00 S\\u00e3o", "b": ' + nested + "}"))
    assert json.loads(out.tool_calls[0].arguments)["a"] == "\U0001F600 S\u00e3o"
    assert "\u00e3" in out.tool_calls[0].arguments  # non-ASCII kept as is, as vLLM's server writes it


def test_llama3_json_calls():
    out = parse_llama3_json('<|python_tag|>{"name": "f", "parameters": {"x": 1}}; {"name": "g", "arguments": {}}')
    assert [(c.name, json.loads(c.arguments)) for c in out.tool_calls] == [("f", {"x": 1}), ("g", {})]
    assert out.content is None


@pytest.mark.parametrize("text", ["Hello there", '{"name": "f", "parameters": {} } and then text',
                                  '{"answer": 42}', '{"name": "f", "parameters": '])
def test_llama3_json_non_calls_are_text(text):
    out = parse_llama3_json(text)
    assert out.tool_calls == [] and out.content == text


def test_plain_text_and_blank():
    assert parse_hermes("just words").content == "just words"
    assert parse_hermes("  \n").content is None
    assert parse_none('<tool_call>{"name": "f"}</tool_call>').tool_calls == []


def test_reasoning_is_split_off_before_parsing():
    assert split_reasoning("<think>hmm</think>\n\nHello") == ("hmm", "\n\nHello")
    assert split_reasoning("hmm, opened by the template</think>Hi") == ("hmm, opened by the template", "Hi")
    assert split_reasoning("<think>still going") == ("still going", "")
    assert split_reasoning("no thinking here") == (None, "no thinking here")
    reasoning, answer = split_reasoning('<think><tool_call>{"name": "x"}</tool_call></think>Done')
    assert parse_hermes(answer).tool_calls == [] and "tool_call" in reasoning


def test_parser_choice():
    assert parser_for_template("... <tool_call> ...") == "hermes"
    assert parser_for_template("{% if role == 'ipython' %}<|python_tag|>{% endif %}") == "llama3_json"
    assert parser_for_template(None) == "hermes"
    assert get_parser("qwen") is parse_hermes and get_parser("Llama3") is parse_llama3_json
    assert set(PARSERS) == {"hermes", "llama3_json", "none"}
    with pytest.raises(ValueError, match="unknown tool-call parser"):
        get_parser("mistral_xml")


@FUZZ
@given(st.sampled_from(PARSERS), noisy_output)
def test_fuzz_any_output_parses_without_error(parser, text):
    out = get_parser(parser)(text)
    assert out.content is None or isinstance(out.content, str)
    for call in out.tool_calls:
        assert call.name and isinstance(call.arguments, str)
        (call.name + call.arguments).encode("utf-8")  # no lone surrogate ever reaches a call
    if not out.tool_calls:  # a text turn keeps the output verbatim
        assert out.content == (text if text.strip() else None)


@FUZZ
@given(st.lists(st.tuples(names, arg_objects), min_size=1, max_size=3), plain_text, plain_text)
def test_fuzz_hermes_recovers_well_formed_calls(calls, before, after):
    blocks = "".join(f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>" for n, a in calls)
    out = parse_hermes(before + blocks + after)
    assert [(c.name, json.loads(c.arguments)) for c in out.tool_calls] == [(n, a) for n, a in calls]
    assert out.content == ((before + after).strip() or None)


@FUZZ
@given(st.lists(st.tuples(names, arg_objects), min_size=1, max_size=3), st.sampled_from(["; ", ";", "\n", " "]),
       st.booleans())
def test_fuzz_llama3_recovers_well_formed_calls(calls, sep, tag):
    text = ("<|python_tag|>" if tag else "") + sep.join(json.dumps({"name": n, "parameters": a}) for n, a in calls)
    out = parse_llama3_json(text)
    assert [(c.name, json.loads(c.arguments)) for c in out.tool_calls] == [(n, a) for n, a in calls]


@FUZZ
@given(st.lists(st.tuples(names, arg_objects), min_size=1, max_size=2), st.integers(min_value=1))
def test_fuzz_hermes_cut_json_is_text_never_a_wrong_call(calls, cut):
    blocks = "".join(f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in calls)
    text = blocks[:cut % len(blocks)]
    out = parse_hermes(text)
    recovered = [(c.name, json.loads(c.arguments)) for c in out.tool_calls]
    assert recovered == [(n, a) for n, a in calls][:len(recovered)]


hostile_values = st.sampled_from([BIG_INT, "-" + BIG_INT, "[" * 3000 + "]" * 3000, "[" * 150 + "]" * 150,
                                  '"\\ud800"', '"a\\udfff"', '"\\ud83d\\ude00"', '"\\u0000"', "1e999"])


@FUZZ
@given(st.sampled_from(["hermes", "llama3_json"]), names.map(json.dumps) | st.just('"f\\udbff"'),
       st.lists(st.tuples(keys.map(json.dumps) | st.just('"\\ud800"'), hostile_values | json_values.map(json.dumps)),
                max_size=3))
def test_fuzz_hostile_json_in_a_call_is_a_call_or_verbatim_text(parser, name, items):
    arguments = "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    text = (hermes_call if parser == "hermes" else llama3_call)(arguments, name)
    out = get_parser(parser)(text)
    if out.tool_calls:
        [call] = out.tool_calls
        (call.name + call.arguments).encode("utf-8")
        assert json.loads(call.arguments) == json.loads(arguments)
    else:
        assert out.content == text and out.problem
