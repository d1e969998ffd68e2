"""Credentials never reach results, logs, messages or files: the judge's URL and its API key.

A base URL can carry credentials: ``https://user:secret@host/v1`` (basic authentication in the user-info part)
or a token in the query (``https://host/v1?api_key=...``, ``?token=...``, ``?sig=...``). The results record the
judge's base URL (``judge_settings``) and errors name the endpoint, so every URL shown passes through
:func:`redact_url` (user-info replaced by ``***``, the value of every query parameter whose name suggests a
secret replaced by ``***``; a URL too broken to parse keeps only what a pattern can tell is not a secret), and
every message that may quote a URL through :func:`redact_text`.

The API key itself is never recorded, but an endpoint may quote it back: a gateway whose error bodies echo the
request's ``Authorization`` header puts it in the error message, and from there in every log line, ``--details``
line and cached problem. So :func:`redact_text` also masks the *secrets* it is given (:func:`secrets`: the configured
key and the values of ``FAIRLENS_JUDGE_API_KEY`` and ``OPENAI_API_KEY``), wherever they appear. Values shorter than
:data:`MIN_SECRET` characters are not masked (``-``, ``EMPTY`` and other placeholders a local server takes would
otherwise blank every such letter run of a message).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
MIN_SECRET = 6
#: The variables whose values are masked as secrets, beside the configured key.
KEY_VARIABLES = ("FAIRLENS_JUDGE_API_KEY", "OPENAI_API_KEY")
# Query parameter names that hold secrets (case-insensitive, any separator): key, api_key, apikey, api-key,
# x-api-key, token, access_token, auth, authorization, password, passwd, pwd, secret, client_secret, sig,
# signature, credential(s), session, code.
_SECRET_NAME = re.compile(r"key|token|auth|pass|pwd|secret|sig|credential|session|^code$", re.IGNORECASE)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>]+", re.IGNORECASE)
_USERINFO = re.compile(r"(//)[^/?#@]*@")
_QUERY_VALUE = re.compile(r"([?&#][^=&#]*=)([^&#]*)")


def redact_url(url: str) -> str:
    """``url`` with its user-info and secret query values masked; other text unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket: mask what could hold a secret, keep the rest to name it
        return _QUERY_VALUE.sub(_masked_value, _USERINFO.sub(rf"\1{MASK}@", url))
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


def _masked_value(match: re.Match[str]) -> str:
    """One ``name=value`` of a query matched by :data:`_QUERY_VALUE`, its value masked if the name suggests a secret."""
    return match.group(1) + (MASK if _SECRET_NAME.search(match.group(1)[1:-1]) else match.group(2))


def secrets(api_key: str | None, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values to mask in every message: ``api_key`` and those of :data:`KEY_VARIABLES` in ``environ`` (default
    ``os.environ``), each at least :data:`MIN_SECRET` characters long, longest first."""
    env = os.environ if environ is None else environ
    found = {str(v).strip() for v in (api_key, *(env.get(name) for name in KEY_VARIABLES)) if v is not None}
    return tuple(sorted((s for s in found if len(s) >= MIN_SECRET), key=len, reverse=True))


def mask_secrets(text: str, values: Iterable[str]) -> str:
    """``text`` with every occurrence of each of ``values`` replaced by ``***``."""
    for value in values:
        text = text.replace(value, MASK)
    return text


def redact_text(text: str, values: Iterable[str] = ()) -> str:
    """Every URL inside ``text`` redacted (:func:`redact_url`) and every secret of ``values`` masked."""
    return _URL.sub(lambda match: redact_url(match.group(0)), mask_secrets(str(text), values))
