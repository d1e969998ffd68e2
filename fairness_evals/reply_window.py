"""The part of a reply that a parser reads: all of it up to :data:`LIMIT` characters, else a bounded window.

A reply of a few megabytes (a model that loops, a crafted input) would otherwise cost its parser several copies of
itself and seconds of regular expressions: one 200 MB reply took 3.1 GB and 55 s to score. Each parser says in its
docstring which window it reads; a reply of at most :data:`LIMIT` characters is read whole, so every answer a parser
gave before is unchanged (every reply of the test suites and of the papers' runs is far shorter: a reasoning
model's 64 KB ``<think>`` block is 6% of it). The reply itself is never cut where it is kept (the harness's sample
logs, ``score``'s inputs): only what the parser reads.

Import-light: a string function, used by the harness tasks' ``process_results``.
"""

from __future__ import annotations

import re

#: The longest reply a parser reads whole, in characters (1 MiB of ASCII).
LIMIT = 1 << 20
#: What joins the two ends of a window: a line break, so that no word or number of one end runs into the other.
JOIN = "\n"

_THINK_END = re.compile(r"</think>", re.IGNORECASE)


def head_and_tail(text: str, limit: int = LIMIT, start: int = 0) -> str:
    """``text`` (from index ``start``) when it has at most ``limit`` characters, else its first and last
    ``limit // 2`` characters joined by a line break (:data:`JOIN`): the middle is not read (nor copied)."""
    if len(text) - start <= limit:
        return text[start:] if start else text
    half = limit // 2
    return text[start : start + half] + JOIN + text[-half:]


def head(text: str, limit: int = LIMIT) -> str:
    """``text`` when it has at most ``limit`` characters, else its first ``limit`` characters."""
    return text if len(text) <= limit else text[:limit]


def after_thinking(text: str, limit: int = LIMIT) -> str:
    """``text`` when it has at most ``limit`` characters; else what follows its last ``</think>`` (any case), when it
    has one (what a reasoning model answers after thinking, the part harnesses keep when they strip a ``<think>``
    block), read through :func:`head_and_tail`."""
    if len(text) <= limit:
        return text
    end = 0
    for match in _THINK_END.finditer(text):
        end = match.end()
    return head_and_tail(text, limit, end)
