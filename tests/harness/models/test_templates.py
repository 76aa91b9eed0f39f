"""The tool-use template check: each of the three parts it looks for is caught when a template drops it, the
named templates and template files replace a checkpoint's own, and a served model is pointed at vllm serve."""
from __future__ import annotations

import copy

import pytest

from mua.harness.errors import ConfigError
from mua.harness.models import make_chat_model
from mua.harness.models.templates import HERMES_TEMPLATE, check_tool_template, missing_tool_parts, prepare_tokenizer

CONTENT_ONLY = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


@pytest.fixture
def tokenizer(tiny_tokenizer):
    return copy.deepcopy(tiny_tokenizer)


def test_the_hermes_template_shows_all_three(tokenizer):
    assert tokenizer.chat_template == HERMES_TEMPLATE and missing_tool_parts(tokenizer) == []


@pytest.mark.parametrize("cut, part", [
    ("{{ tool | tojson }}", "the tools"),
    ("{{ fn.arguments | tojson }}", "the assistant's tool calls"),
    ("{{ NL }}{{ m.content }}{{ NL }}</tool_response>", "the tool results"),
])
def test_each_dropped_part_is_named(tokenizer, cut, part):
    assert cut in HERMES_TEMPLATE
    tokenizer.chat_template = HERMES_TEMPLATE.replace(cut, "")
    assert missing_tool_parts(tokenizer) == [part]
    with pytest.raises(ConfigError, match=f"drops {part}, so"):
        check_tool_template(tokenizer, "ckpt")


def test_a_content_only_template_and_a_broken_one(tokenizer):
    tokenizer.chat_template = CONTENT_ONLY
    assert missing_tool_parts(tokenizer) == ["the tools", "the assistant's tool calls"]
    tokenizer.chat_template = "{% for m in messages %}{{ raise_exception('no tools here') }}{% endfor %}"
    assert len(missing_tool_parts(tokenizer)) == 3
    tokenizer.chat_template = None
    with pytest.raises(ConfigError, match="no chat template"):
        check_tool_template(tokenizer, "ckpt")


def test_a_template_file_replaces_the_own_one(tokenizer, tmp_path):
    tokenizer.chat_template = CONTENT_ONLY
    path = tmp_path / "t.jinja"
    path.write_text(HERMES_TEMPLATE)
    assert prepare_tokenizer(tokenizer, "ckpt", str(path)).chat_template == HERMES_TEMPLATE
    with pytest.raises(ConfigError, match="neither hermes nor llama3_json nor a template file"):
        prepare_tokenizer(tokenizer, "ckpt", str(tmp_path / "missing.jinja"))
    (tmp_path / "empty.jinja").write_text(" ")
    with pytest.raises(ConfigError, match="is empty"):
        prepare_tokenizer(tokenizer, "ckpt", str(tmp_path / "empty.jinja"))


def test_eval_flag_applies_the_template_to_a_local_checkpoint(tiny_checkpoint, tmp_path):
    ckpt = tmp_path / "ckpt"
    import shutil

    shutil.copytree(tiny_checkpoint, ckpt)
    (ckpt / "chat_template.jinja").write_text(CONTENT_ONLY)
    with pytest.raises(ConfigError, match="--agent-chat-template hermes"):
        make_chat_model(str(ckpt))
    model = make_chat_model(str(ckpt), chat_template="hermes", max_tokens=4)
    assert model.tokenizer.chat_template == HERMES_TEMPLATE and model.parser_name == "hermes"


def test_a_chat_template_for_a_served_model_is_refused():
    with pytest.raises(ConfigError, match="vllm serve MODEL --chat-template"):
        make_chat_model("served", base_url="http://127.0.0.1:9/v1", chat_template="hermes")
