"""Credentials in a judge URL never reach results, logs or messages.

A base URL can carry credentials: ``https://user:secret@host/v1`` (basic authentication in the user-info part)
or a token in the query (``https://host/v1?api_key=...``, ``?token=...``, ``?sig=...``). The results record the
judge's base URL (``judge_settings``) and errors name the endpoint, so every URL shown passes through
:func:`redact_url` (user-info replaced by ``***``, the value of every query parameter whose name suggests a
secret replaced by ``***``), and every message that may quote a URL through :func:`redact_text`. The API key
itself is never recorded.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
# Query parameter names that hold secrets (case-insensitive, any separator): key, api_key, apikey, api-key,
# x-api-key, token, access_token, auth, authorization, password, passwd, pwd, secret, client_secret, sig,
# signature, credential(s), session, code.
_SECRET_NAME = re.compile(r"key|token|auth|pass|pwd|secret|sig|credential|session|^code$", re.IGNORECASE)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>]+", re.IGNORECASE)


def redact_url(url: str) -> str:
    """``url`` with its user-info and secret query values masked; other text unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_SECRET_NAME.search(name) for name, _ in pairs):
            query = urlencode([(n, MASK if _SECRET_NAME.search(n) else v) for n, v in pairs], safe="*")
    fragment = MASK if parts.fragment and _SECRET_NAME.search(parts.fragment) else parts.fragment
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def redact_text(text: str) -> str:
    """Every URL inside ``text`` redacted (:func:`redact_url`)."""
    return _URL.sub(lambda match: redact_url(match.group(0)), str(text))
