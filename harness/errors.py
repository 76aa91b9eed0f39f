"""Errors that reach the person running mua (as opposed to errors returned to the agent inside an episode)."""


class MuaError(Exception):
    """Base class: the CLI prints the message (no traceback) and exits non-zero."""


class DataError(MuaError):
    """A benchmark data file is missing, corrupt or malformed; the message says which file and how to fix it."""


class StaleData(DataError):
    """The data a run recorded the checksums of has changed (or is gone) since the run was made."""


class ConfigError(MuaError):
    """Bad flags or configuration."""


class ModelError(MuaError):
    """A model endpoint failed after retries; the episode is recorded as an error, never as a score."""
