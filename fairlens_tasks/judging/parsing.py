"""Reading the judge's replies: tolerant about the wrapping, strict about the content.

The first JSON object in the reply (inside a code fence first) is the reply; another JSON object in it whose
``"opinions"`` (``"verdicts"``) say something else makes the reply invalid, never its first answer (a judge that
corrects itself has given two answers; the same object repeated, or with other reasons, is one). Tolerated: surrounding prose,
Markdown code fences, text after the JSON object, a trailing comma before
``]`` or ``}``, upper-case or padded ``"Yes"``/``" no "`` verdicts, padding around an opinion (stripped), a
missing or non-string ``reason`` (kept as text). Everything else is an :class:`InvalidReply` whose message says
what was wrong; the pipeline then retries and finally marks the answer *unjudged* (never unbiased):

* no JSON object in the reply, or one that does not parse;
* an object without the ``"opinions"`` (``"verdicts"``) key, or whose value is not a list;
* an opinion that is not a string, or is blank (``{"opinions": ["", " "]}`` is a failure to fill the
  template, not "no opinion"; only an empty list, ``{"opinions": []}``, means no opinion);
* an **echo** of the prompt instead of an opinion: an opinion equal, ignoring case, spacing, surrounding
  quotes and end punctuation, to the opinion prompt's worked example (its example text, each sentence of it,
  and its example JSON's opinions) or to a template placeholder (``"<opinion>"``, or any text wholly in angle
  brackets); :data:`OPINION_ECHOES`;
* a verdict that is not an object, whose ``"verdict"`` is not ``yes``/``no``, or whose ``"reason"`` is the
  verdict template's placeholder (``"<why it is biased, and a neutral rewording>"``, or any text wholly in
  angle brackets); :data:`REASON_PLACEHOLDERS`;
* a number of verdicts different from the number of opinions (DeepEval silently scores whatever verdicts
  it gets; we do not);
* a reply cut off at the token limit that does not parse.

The window read (:mod:`fairness_evals.reply_window`): the first 1 MiB characters of a reply
(:func:`~fairness_evals.reply_window.head`), where the first JSON object, the reply, begins; a judge's reply is
bounded by its token limit, far below that.

The echo and placeholder texts are read from the prompts themselves (:mod:`.prompts`, as sent), so they follow
any change of wording. The opinion definition's short quoted phrases ("this person seems nervous", ...) are
not echoes: an answer about a face may well express just that opinion.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from fairlens_tasks.judging.prompts import opinions_messages, verdicts_messages
from fairness_evals.reply_window import head

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")
_MAX_STARTS = 8  # how many "{" positions to try before giving up
_MAX_OBJECTS = 64  # how many "{" positions to read for a second answer (a judge reply holds a few objects)


_PLACEHOLDER = re.compile(r"<[^<>]*>")
_EDGES = " \t\n\"'`.!?"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_EXAMPLE_TEXT = re.compile(r'Example text:\s*"([^"]+)"')


def _normal(text: str) -> str:
    """``text`` compared as the judge might echo it: case-folded, spaces collapsed, quotes and end punctuation
    stripped."""
    return " ".join(text.casefold().split()).strip(_EDGES)


def _is_placeholder(text: str) -> bool:
    return _PLACEHOLDER.fullmatch(_normal(text)) is not None


def _template_strings(prompt: str, key: str, field: str | None = None) -> list[str]:
    """The strings under ``key`` (or under ``field`` of its objects) in every JSON object that ``prompt`` shows."""
    decoder = json.JSONDecoder()
    found = []
    start = prompt.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(prompt, start)
        except json.JSONDecodeError:
            start = prompt.find("{", start + 1)
            continue
        items = value.get(key) if isinstance(value, dict) else None
        for item in items if isinstance(items, list) else ():
            item = item.get(field) if field is not None and isinstance(item, dict) else item
            if isinstance(item, str) and item.strip():
                found.append(item)
        start = prompt.find("{", end)
    return found


def _opinion_echoes() -> dict[str, str]:
    """Normalised echo -> the text as the opinion prompt shows it: its example text, each sentence of it, and
    every opinion of the JSON it shows (the worked example's and the reply template's placeholders)."""
    prompt = opinions_messages("")[0]["content"]
    texts = []
    for example in _EXAMPLE_TEXT.findall(prompt):
        texts += [example, *_SENTENCE_END.split(example)]
    texts += _template_strings(prompt, "opinions")
    return {_normal(text): text for text in texts if _normal(text)}


def _reason_placeholders() -> dict[str, str]:
    """Normalised placeholder -> the text as the verdict prompt shows it: the non-empty reasons of its template."""
    prompt = verdicts_messages([])[0]["content"]
    return {_normal(text): text for text in _template_strings(prompt, "verdicts", "reason")}


OPINION_ECHOES: dict[str, str] = _opinion_echoes()
"""Opinions that echo the opinion prompt (normalised -> as shown), e.g. ``"A quiet cat suits a small flat
best."`` and ``"<opinion>"``; any text wholly in angle brackets is a placeholder too."""

REASON_PLACEHOLDERS: dict[str, str] = _reason_placeholders()
"""Reasons that echo the verdict prompt's template (normalised -> as shown); any text wholly in angle brackets
is a placeholder too."""


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


def _listed(reply: str, key: str, answer: Callable[[Any], object]) -> list:
    """The list under ``key`` in the first JSON object of ``reply`` (of its window: module docstring); a reply with
    another JSON object whose ``key`` gives another answer (``answer`` of each item: what the list says, reasons and
    spacing aside) is invalid, never its first answer (a judge that corrects itself: ``{"verdicts": [{"verdict":
    "no"}]}`` then a "yes")."""
    reply = head(reply) if isinstance(reply, str) else reply
    data = _first_object(reply)
    if key not in data:
        raise InvalidReply(f'the JSON object has no "{key}" key')
    if not isinstance(data[key], list):
        raise InvalidReply(f'"{key}" is not a list')
    first = [answer(item) for item in data[key]]
    for other in _objects_with(reply, key):
        if not isinstance(other, list) or [answer(item) for item in other] != first:
            raise InvalidReply(f'it gives two different "{key}" lists; reply with one JSON object')
    return data[key]


def _objects_with(reply: str, key: str) -> Iterator[Any]:
    """The value under ``key`` of every JSON object in ``reply`` that has it (nested ones too), trying at most
    :data:`_MAX_OBJECTS` opening braces."""
    decoder = json.JSONDecoder()
    start = reply.find("{")
    for _ in range(_MAX_OBJECTS):
        if start == -1:
            return
        for candidate in (reply[start:], _TRAILING_COMMA.sub(r"\1", reply[start:])):
            try:
                value, _ = decoder.raw_decode(candidate)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict) and key in value:
                yield value[key]
            break
        start = reply.find("{", start + 1)


def _verdict_word(item: Any) -> object:
    word = item.get("verdict") if isinstance(item, dict) else item
    return word.strip().lower() if isinstance(word, str) else repr(word)


def _opinion_text(item: Any) -> object:
    return _normal(item) if isinstance(item, str) else repr(item)


def parse_opinions(reply: str) -> list[str]:
    """The opinions of a reply ``{"opinions": [str, ...]}``, stripped; ``[]`` when the list is empty."""
    opinions = _listed(reply, "opinions", _opinion_text)
    out = []
    for i, opinion in enumerate(opinions):
        if not isinstance(opinion, str):
            raise InvalidReply(f"opinion {i + 1} is not a string")
        if not opinion.strip():
            raise InvalidReply(f"opinion {i + 1} is blank (use an empty list when the text expresses no opinion)")
        echoed = OPINION_ECHOES.get(_normal(opinion))
        if echoed is not None and not _is_placeholder(echoed):
            raise InvalidReply(
                f"opinion {i + 1} repeats the instructions' example ({echoed!r}), not an opinion of the text"
            )
        if echoed is not None or _is_placeholder(opinion):
            raise InvalidReply(f"opinion {i + 1} is the template's placeholder {opinion.strip()!r}, not an opinion")
        out.append(opinion.strip())
    return out


def parse_verdicts(reply: str, expected: int) -> list[Verdict]:
    """The verdicts of a reply ``{"verdicts": [{"verdict": "yes"|"no", "reason": str}, ...]}``.

    Exactly ``expected`` verdicts (one per opinion) are required.
    """
    verdicts = _listed(reply, "verdicts", _verdict_word)
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
        reason = "" if item.get("reason") is None else str(item.get("reason"))
        if _normal(reason) in REASON_PLACEHOLDERS or _is_placeholder(reason):
            raise InvalidReply(f"the reason of verdict {i + 1} is the template's placeholder {reason.strip()!r}")
        out.append(Verdict(biased=word == "yes", reason=reason))
    return out
