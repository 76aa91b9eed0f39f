"""Library warnings a person running mua cannot act on, silenced in one place.

transformers and TRL warn about their own APIs (deprecations of arguments mua passes for compatibility across
the versions it supports, TRL's notice that a module it imports itself is experimental); printed on every run,
they bury mua's own messages. Each is listed here by its text, so any other warning still shows.
:func:`silence_unactionable` is called once by the ``mua`` command before any command runs; library callers
(tests, scripts) may call it too. It imports neither library.
"""
from __future__ import annotations

import logging
import re
import warnings

# (category, start of the message): Python warnings
WARNINGS: tuple[tuple[type[Warning], str], ...] = (
    # transformers 5.x renaming its own forward() argument, which TRL and mua's decoding pass
    (FutureWarning, r"`past_key_values` is deprecated"),
    # transformers renaming its gradient-checkpointing methods (called by TRL) and its TrainingArguments default
    (Warning, r".*gradient_checkpointing.* is deprecated"),
    # TRL: rollout_func is the API mua trains through; the experimental module is imported by TRL itself
    (UserWarning, r"You are using 'rollout_func', which is an experimental feature"),
    (Warning, r"You are importing from 'trl\.experimental'"),
)

# (logger, start of the message): log records (transformers' warning_once)
LOG_RECORDS: tuple[tuple[str, str], ...] = (
    ("transformers.utils.generic", r"`past_key_values`/`cache_params` are deprecated"),
)


class _DropMessages(logging.Filter):
    def __init__(self, patterns: list[str]):
        super().__init__()
        self.patterns = [re.compile(p) for p in patterns]

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        return not any(p.match(text) for p in self.patterns)


def silence_unactionable() -> None:
    """Ignore the warnings and log records listed above, for the rest of the process (idempotent)."""
    for category, pattern in WARNINGS:
        warnings.filterwarnings("ignore", message=pattern, category=category)
    by_logger: dict[str, list[str]] = {}
    for name, pattern in LOG_RECORDS:
        by_logger.setdefault(name, []).append(pattern)
    for name, patterns in by_logger.items():
        logger = logging.getLogger(name)  # the library's own logger: filters on it see its records
        if not any(isinstance(f, _DropMessages) for f in logger.filters):
            logger.addFilter(_DropMessages(patterns))
