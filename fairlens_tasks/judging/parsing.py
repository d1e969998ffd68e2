"""Reading the judge's replies: tolerant about the wrapping, strict about the content.

The first JSON object in the reply (inside a code fence first) is the reply. Tolerated: surrounding prose,
Markdown code fences, text after the JSON object, a trailing comma before
``]`` or ``}``, upper-case or padded ``"Yes"``/``" no "`` verdicts, blank opinions (dropped), a missing or
non-string ``reason`` (kept as text). Everything else is an :class:`InvalidReply` whose message says what
was wrong; the pipeline then retries and finally marks the answer *unjudged* (never unbiased):

* no JSON object in the reply, or one that does not parse;
* an object without the ``"opinions"`` (``"verdicts"``) key, or whose value is not a list;
* an opinion that is not a string; a verdict that is not an object, or whose ``"verdict"`` is not
  ``yes``/``no``;
* a number of verdicts different from the number of opinions (DeepEval silently scores whatever verdicts
  it gets; we do not);
* a reply cut off at the token limit that does not parse.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")
_MAX_STARTS = 8  # how many "{" positions to try before giving up


class InvalidReply(ValueError):
    """A judge reply that cannot be used; the message is a short description for the repair turn."""


@dataclass(frozen=True)
class Verdict:
    """One opinion's verdict: ``biased`` is True for "yes"."""

    biased: bool
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"verdict": "yes" if self.biased else "no", "reason": self.reason}


def _candidates(reply: str) -> list[str]:
    fenced = [m.group(1) for m in _FENCE.finditer(reply)]
    return [*fenced, reply]


def _first_object(reply: str) -> dict:
    """The first JSON object in ``reply`` (inside code fences first), ignoring text around it."""
    decoder = json.JSONDecoder()
    for text in _candidates(reply):
        start = text.find("{")
        tries = 0
        while start != -1 and tries < _MAX_STARTS:
            tries += 1
            for candidate in (text[start:], _TRAILING_COMMA.sub(r"\1", text[start:])):
                try:
                    value, _ = decoder.raw_decode(candidate)
                except json.JSONDecodeError:
                    continue
                if isinstance(value, dict):
                    return value
            start = text.find("{", start + 1)
    raise InvalidReply("it contains no valid JSON object")


def parse_opinions(reply: str) -> list[str]:
    """The opinions of a reply ``{"opinions": [str, ...]}``; blank entries are dropped."""
    data = _first_object(reply)
    if "opinions" not in data:
        raise InvalidReply('the JSON object has no "opinions" key')
    opinions = data["opinions"]
    if not isinstance(opinions, list):
        raise InvalidReply('"opinions" is not a list')
    out = []
    for i, opinion in enumerate(opinions):
        if not isinstance(opinion, str):
            raise InvalidReply(f"opinion {i + 1} is not a string")
        if opinion.strip():
            out.append(opinion.strip())
    return out


def parse_verdicts(reply: str, expected: int) -> list[Verdict]:
    """The verdicts of a reply ``{"verdicts": [{"verdict": "yes"|"no", "reason": str}, ...]}``.

    Exactly ``expected`` verdicts (one per opinion) are required.
    """
    data = _first_object(reply)
    if "verdicts" not in data:
        raise InvalidReply('the JSON object has no "verdicts" key')
    verdicts = data["verdicts"]
    if not isinstance(verdicts, list):
        raise InvalidReply('"verdicts" is not a list')
    if len(verdicts) != expected:
        raise InvalidReply(f"it has {len(verdicts)} verdicts for {expected} opinions")
    out = []
    for i, item in enumerate(verdicts):
        if not isinstance(item, dict):
            raise InvalidReply(f"verdict {i + 1} is not a JSON object")
        word = item.get("verdict")
        word = word.strip().lower() if isinstance(word, str) else word
        if word not in ("yes", "no"):
            raise InvalidReply(f'verdict {i + 1} is {item.get("verdict")!r}, not "yes" or "no"')
        reason = item.get("reason")
        out.append(Verdict(biased=word == "yes", reason="" if reason is None else str(reason)))
    return out
