"""One writer per output folder: commands that append to a folder and later rewrite it (``mua eval``, ``mua
study``) hold an exclusive lock there for their whole run, so a second command started on the same folder is
refused before it writes anything, instead of both appending and one losing the other's lines."""
from __future__ import annotations

import fcntl
import logging
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..errors import ConfigError

log = logging.getLogger(__name__)


@contextmanager
def exclusive(path: Path, busy: str) -> Iterator[int]:
    """An exclusive lock on ``path`` for the block: a folder is locked itself (nothing is written in it), any
    other path is a lock file, created if missing. Yields the descriptor: a child process that inherits it
    keeps the lock while it lives. ConfigError(``busy``) when another holder has it. On a file system without
    locks (some network mounts) the block runs unlocked, with a warning."""
    path = Path(path)
    flags = os.O_RDONLY | os.O_DIRECTORY if path.is_dir() else os.O_RDWR | os.O_CREAT
    fd = os.open(path, flags, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ConfigError(busy) from None
    except OSError as e:
        log.warning("%s: cannot lock it (%s); nothing stops a second writer there", path, e.strerror or e)
    try:
        yield fd
    finally:
        os.close(fd)
