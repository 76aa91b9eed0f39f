"""Library notices a user cannot act on are silenced in one place (harness/quiet.py); any other warning shows."""
from __future__ import annotations

import logging
import warnings

from mua.harness.quiet import silence_unactionable


def test_listed_warnings_are_silenced_and_others_still_show():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        silence_unactionable()
        warnings.warn("`past_key_values` is deprecated and will be removed in version 5.40.0 for "
                      "`Qwen2ForCausalLM.forward`. Use `cache` instead.", FutureWarning, stacklevel=2)
        warnings.warn("`gradient_checkpointing_enable` is deprecated and will be removed in v6.", FutureWarning,
                      stacklevel=2)
        warnings.warn("You are using 'rollout_func', which is an experimental feature. This API may change",
                      UserWarning, stacklevel=2)
        warnings.warn("`some_other_thing` is deprecated", FutureWarning, stacklevel=2)  # not listed: shown
        warnings.warn("the model's context is full", UserWarning, stacklevel=2)
    assert [str(w.message) for w in seen] == ["`some_other_thing` is deprecated", "the model's context is full"]


def test_listed_log_records_are_dropped_at_their_logger(caplog):
    silence_unactionable()
    silence_unactionable()  # idempotent: one filter
    logger = logging.getLogger("transformers.utils.generic")
    assert sum(type(f).__name__ == "_DropMessages" for f in logger.filters) == 1
    with caplog.at_level(logging.WARNING, logger="transformers.utils.generic"):
        logger.warning("`past_key_values`/`cache_params` are deprecated. Use `cache` instead.")
        logger.warning("something the user can fix")
    assert [r.getMessage() for r in caplog.records] == ["something the user can fix"]
