"""Chat templates mua can put on a checkpoint, and the check that a checkpoint's template shows tool use.

Many small chat models ship a template that renders only each message's ``content``: the tool list, the
assistant's tool calls and the tool results vanish from the prompt without a word, so the model never sees
its tools and training on such renderings teaches empty assistant turns. :func:`check_tool_template` renders
one probe conversation and looks for each of the three; every path that loads a local checkpoint (eval agent
and user, sft, train, the vLLM modes) calls :func:`prepare_tokenizer` once at load, which applies a
replacement template (``--chat-template hermes|llama3_json|FILE``) and then runs the check.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..errors import ConfigError

# Our own template in the Hermes/Qwen layout. Consecutive tool results share one user-side turn. Chat
# templates run with trim_blocks, which eats a newline right after a block tag: such newlines are written
# as {{ NL }} expressions instead.
HERMES_TEMPLATE = (
    "{% set NL = '\\n' %}{% set msgs = messages %}"
    "{% if tools or (msgs and msgs[0].role == 'system') %}<|im_start|>system{{ NL }}"
    "{% if msgs and msgs[0].role == 'system' %}{{ msgs[0].content }}{% set msgs = msgs[1:] %}{% endif %}"
    "{% if tools %}{{ NL }}{{ NL }}You may call functions. Their signatures are listed inside <tools></tools>:"
    "{{ NL }}<tools>{% for tool in tools %}{{ NL }}{{ tool | tojson }}{% endfor %}{{ NL }}</tools>{{ NL }}"
    "{{ NL }}To call a function, reply with a JSON object inside <tool_call></tool_call> tags:{{ NL }}"
    "<tool_call>{{ NL }}{\"name\": <function-name>, \"arguments\": <arguments-object>}{{ NL }}</tool_call>"
    "{% endif %}<|im_end|>{{ NL }}{% endif %}"
    "{% for m in msgs %}"
    "{% if m.role == 'tool' %}"
    "{% if loop.first or msgs[loop.index0 - 1].role != 'tool' %}<|im_start|>user{% endif %}"
    "{{ NL }}<tool_response>{{ NL }}{{ m.content }}{{ NL }}</tool_response>"
    "{% if loop.last or msgs[loop.index0 + 1].role != 'tool' %}<|im_end|>{{ NL }}{% endif %}"
    "{% else %}"
    "<|im_start|>{{ m.role }}{{ NL }}{% if m.content %}{{ m.content }}{% endif %}"
    "{% for call in (m.tool_calls or []) %}"
    "{% set fn = call.function if call.function is defined else call %}"
    "{% if m.content or not loop.first %}{{ NL }}{% endif %}"
    "<tool_call>{{ NL }}{\"name\": {{ fn.name | tojson }}, \"arguments\": "
    "{% if fn.arguments is string %}{{ fn.arguments }}{% else %}{{ fn.arguments | tojson }}{% endif %}"
    "}{{ NL }}</tool_call>"
    "{% endfor %}"
    "<|im_end|>{{ NL }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant{{ NL }}{% endif %}"
)

# Our own template in the Llama 3.1 JSON tool-calling layout (parser llama3_json): tools listed in the system
# turn, a call is the whole assistant turn as {"name": ..., "parameters": ...}, results come back as ipython.
LLAMA3_JSON_TEMPLATE = (
    "{% set NL = '\\n' %}{% set msgs = messages %}<|begin_of_text|>"
    "{% if tools or (msgs and msgs[0].role == 'system') %}<|start_header_id|>system<|end_header_id|>{{ NL }}{{ NL }}"
    "{% if msgs and msgs[0].role == 'system' %}{{ msgs[0].content }}{% set msgs = msgs[1:] %}{% endif %}"
    "{% if tools %}{{ NL }}{{ NL }}You may call functions. To call one, reply with only a JSON object "
    "{\"name\": function name, \"parameters\": arguments object}. Available functions:"
    "{% for tool in tools %}{{ NL }}{{ tool | tojson }}{% endfor %}{% endif %}<|eot_id|>{% endif %}"
    "{% for m in msgs %}"
    "{% if m.role == 'tool' %}<|start_header_id|>ipython<|end_header_id|>{{ NL }}{{ NL }}{{ m.content }}<|eot_id|>"
    "{% elif m.tool_calls %}<|start_header_id|>assistant<|end_header_id|>{{ NL }}{{ NL }}"
    "{% for call in m.tool_calls %}{% set fn = call.function if call.function is defined else call %}"
    "{% if not loop.first %}; {% endif %}{\"name\": {{ fn.name | tojson }}, \"parameters\": "
    "{% if fn.arguments is string %}{{ fn.arguments }}{% else %}{{ fn.arguments | tojson }}{% endif %}}"
    "{% endfor %}<|eot_id|>"
    "{% else %}<|start_header_id|>{{ m.role }}<|end_header_id|>{{ NL }}{{ NL }}"
    "{% if m.content %}{{ m.content }}{% endif %}<|eot_id|>"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>{{ NL }}{{ NL }}{% endif %}"
)

TEMPLATES = {"hermes": HERMES_TEMPLATE, "llama3_json": LLAMA3_JSON_TEMPLATE}
# The fix the check names; `mua eval` takes it per role, sft and train configs as the key chat_template.
FIX = ("--agent-chat-template hermes or --user-chat-template hermes, whichever role it plays (llama3_json or a "
       "Jinja template FILE also work; sft/train config: chat_template: hermes)")

# The probe: each part the template must show carries a marker that appears nowhere else.
_TOOLS_MARK, _CALL_MARK, _RESULT_MARK = "mua-probe-tool-listed", "mua-probe-call-argument", "mua-probe-tool-result"
_PROBE_TOOLS = [{"type": "function", "function": {
    "name": "probe_lookup", "description": f"Looks a thing up ({_TOOLS_MARK}).",
    "parameters": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}}}]
_PROBE_MESSAGES = [
    {"role": "system", "content": "You are a helpful agent."},
    {"role": "user", "content": "Please look it up."},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "call_0", "type": "function", "function": {
        "name": "probe_lookup", "arguments": {"key": _CALL_MARK}}}]},
    {"role": "tool", "tool_call_id": "call_0", "name": "probe_lookup", "content": _RESULT_MARK},
    {"role": "user", "content": "Thanks."},
]
_PARTS = (("the tools", _TOOLS_MARK), ("the assistant's tool calls", _CALL_MARK), ("the tool results", _RESULT_MARK))


def resolve_chat_template(value: str) -> str:
    """The template text ``value`` names: ``hermes``, ``llama3_json`` or a Jinja template file."""
    if value in TEMPLATES:
        return TEMPLATES[value]
    path = Path(value).expanduser()
    if not path.is_file():
        raise ConfigError(f"chat template {value!r} is neither {' nor '.join(TEMPLATES)} nor a template file")
    from ..io.files import read_text
    text = read_text(path, what="chat template")
    if not text.strip():
        raise ConfigError(f"chat template file {path} is empty")
    return text


def missing_tool_parts(tokenizer) -> list[str]:
    """What of a tool conversation the tokenizer's chat template leaves out of the prompt (empty: nothing).
    A template that cannot render the probe at all misses everything."""
    try:
        text = tokenizer.apply_chat_template(_PROBE_MESSAGES, tools=_PROBE_TOOLS, tokenize=False,
                                             add_generation_prompt=True)
    except Exception:  # jinja TemplateError and friends: the template refuses tool conversations
        return [name for name, _ in _PARTS]
    return [name for name, mark in _PARTS if mark not in str(text)]


def check_tool_template(tokenizer, checkpoint: str, fix: str = FIX) -> None:
    """ConfigError, one line naming ``checkpoint``, what its template drops and ``fix``, unless the tokenizer's
    chat template shows the tools, the assistant's tool calls and the tool results."""
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(f"{checkpoint}: the tokenizer has no chat template; fix: {fix}")
    missing = missing_tool_parts(tokenizer)
    if missing:
        listed = ", ".join(missing[:-1]) + (" and " if len(missing) > 1 else "") + missing[-1]
        raise ConfigError(f"{checkpoint}: its chat template drops {listed}, so the model could not see its "
                          f"tool use; fix: {fix}")


def prepare_tokenizer(tokenizer, checkpoint: str, chat_template: Optional[str] = None, fix: str = FIX):
    """The tokenizer of ``checkpoint`` made ready for tool episodes: ``chat_template`` (a name or file, see
    :func:`resolve_chat_template`) replaces its template, then :func:`check_tool_template` runs. Returns it."""
    if chat_template is not None:
        if not isinstance(chat_template, str):
            raise ConfigError(f"chat_template must be {' or '.join(TEMPLATES)} or a template file path, "
                              f"got {chat_template!r}")
        tokenizer.chat_template = resolve_chat_template(chat_template)
    check_tool_template(tokenizer, checkpoint, fix)
    return tokenizer
