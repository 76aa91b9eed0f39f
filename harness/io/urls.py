"""Credentials never leave in a URL: ``http://user:KEY@host/v1`` is recorded and printed as
``http://***@host/v1``. The one function every place that records or prints a URL (or a message holding
one) goes through."""
from __future__ import annotations

import re

# scheme://userinfo@ : userinfo is everything up to the first "@" before the host's "/", "?" or "#"
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#@\s]+)@")


def redact_url(text: str) -> str:
    """``text`` (a URL, or a message holding URLs) with the user and password of every URL replaced by
    ``***``."""
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}***@", text)
