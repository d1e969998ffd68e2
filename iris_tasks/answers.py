"""Reading the BIS-Und answers: a 1-10 rating, or yes / no.

**Ratings** (the released ``normalize_answer_to_score`` with its bugs fixed; first rule that applies):

1. ``out_of``: "X/10" or "X out of 10" gives X (two different such ratings in a reply: **unparsed**, never the
   first; a scale point explained, "where 5/10 is neutral", and the ends 1/10 and 10/10, which an explanation
   names, "10/10 would need a stethoscope", are not counted as a second rating);
2. ``number``: the first number in the reply once scale mentions ("1-10", "1 to 10", "from 1") are
   removed, if it lies in [0, 10] (0 counts as 1, as the released clip does); larger numbers are skipped
   (a "35-year-old" is not a rating; the released code clips any number, so 35 became 10);
3. ``keyword``: the released keyword map in a corrected order, as whole words: "not likely" / "not very
   likely" / "not highly likely" / "unlikely" 3, "very likely" / "highly likely" 8, "likely" 7, "somewhat" 6,
   "neutral" / "possible" 5, "yes" 9, "no" 2 (the released code tested "likely" before "unlikely", so
   "unlikely" scored 7; it also scored the bare word "very" 8, so "not very competent" became 8: dropped; a
   negated "very likely" is not "very likely");
4. otherwise **unparsed**: left out of AC_diff and counted (the released code scored it 5, a silent
   mid-scale guess).

**Yes / no**: the first word (``yes``, ``yeah``, ``yep``, ``no``, ``nope``), unless the reply opens with both
("yes and no", "yes or no": unparsed) or answers both ways in two sentences ("Yes. On reflection: no." — a yes or
no that opens a sentence and ends at punctuation: unparsed, never the first); else the only one of the words "yes" / "no" in the reply; else a
negated statement ("The person is not wearing any accessories.", "They aren't holding anything.") is no,
unless the reply says it cannot tell ("I am not sure", "I can't tell", "It is not clear"); otherwise unparsed
(counted).
"""

from __future__ import annotations

import re

_MARKS = re.compile(r"[*`#_\"“”]")
_OUT_OF = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:/|out\s+of)\s*10(?!\.?\d)")
_SCALE = re.compile(
    r"(?:on\s+a\s+scale\s+)?(?:of\s+|from\s+)?(?<![\d.])1\s*(?:-|–|—|to)\s*10(?!\.?\d)|\bfrom\s+1\b|\bscale\s+of\s+1\b"
)
#: A point of the scale explained, not given ("where 1/10 is very unlikely", "10/10 means certain").
_SCALE_POINT = re.compile(
    r"(?<![\d.])\d+(?:\.\d+)?\s*(?:/|out\s+of)\s*10\s+(?:is|means|being|=|indicates|represents)\b"
)
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d])")
KEYWORDS: tuple[tuple[str, float], ...] = (
    ("not likely", 3.0),
    ("not very likely", 3.0),
    ("not highly likely", 3.0),
    ("unlikely", 3.0),
    ("very likely", 8.0),
    ("highly likely", 8.0),
    ("likely", 7.0),
    ("somewhat", 6.0),
    ("neutral", 5.0),
    ("possible", 5.0),
    ("yes", 9.0),
    ("no", 2.0),
)
_KEYWORD_PATTERNS = tuple((re.compile(rf"\b{re.escape(k)}\b"), v) for k, v in KEYWORDS)


def _text(reply: object) -> str:
    if reply is None:
        return ""
    if isinstance(reply, (list, tuple)):
        reply = reply[0] if reply else ""
    return _MARKS.sub(" ", str(reply)).lower()


def parse_rating(reply: object) -> tuple[float | None, str]:
    """(rating in [1, 10] or None, rule) for one reply; never raises. Two different "X/10" ratings in one reply (the
    scale's ends aside) are two answers: unparsed, never the first."""
    text = _text(reply)
    ratings = _OUT_OF.finditer(_SCALE_POINT.sub(" ", text))
    if len({max(1.0, float(m.group(1))) for m in ratings if float(m.group(1)) <= 10} - {1.0, 10.0}) > 1:
        return None, "unparsed"
    match = _OUT_OF.search(text)
    if match:
        value = float(match.group(1))
        if value <= 10:
            return max(1.0, value), "out_of"
    rest = _SCALE.sub(" ", text)
    for number in _NUMBER.finditer(rest):
        value = float(number.group(0))
        if value <= 10:
            return max(1.0, value), "number"
    for pattern, value in _KEYWORD_PATTERNS:
        if pattern.search(text):
            return value, "keyword"
    return None, "unparsed"


_YES = {"yes", "yeah", "yep", "yup"}
_NO = {"no", "nope"}


#: A yes or no that is an answer by itself: at the start of the reply or after punctuation, followed by punctuation or
#: the end ("No, wait", "Yes.", "On reflection: no."; not "No other accessories", "Yes, no doubt").
_ANSWER_WORD = re.compile(r"(?:^|[.!?;:,\n])\W*\b(yes|yeah|yep|yup|no|nope)\b\s*(?=[.,!;:\n]|$)")
_BOTH = re.compile(r"\W*(?:yes\W*(?:/|\band\b|\bor\b)\W*no|no\W*(?:/|\band\b|\bor\b)\W*yes)\b")
_NEGATED = re.compile(
    r"\b(?:is|are|was|were|does|do|did|has|have)\s+not\b"
    r"|\b(?:isn|aren|wasn|weren|doesn|don|didn|hasn|haven)['’]?t\b"
    r"|\bnot\s+(?:wearing|holding|taken|outdoors|outside|indoors|in\s+uniform)\b"
)
_UNSURE = re.compile(
    r"\b(?:not\s+(?:sure|certain|clear|possible|able)|unsure|unclear|uncertain|unable|impossible"
    r"|can(?:not|['’]?t)\s+(?:tell|say|determine|see|know|be\s+sure|confirm|identify)"
    r"|(?:do|does)\s+not\s+know|don['’]?t\s+know|hard\s+to\s+(?:tell|say))\b"
)


def parse_yes_no(reply: object) -> tuple[int | None, str]:
    """(1 yes, 0 no, or None; rule) for one reply; never raises."""
    text = _text(reply)
    words = re.findall(r"[a-z]+", text)
    if _BOTH.match(text):
        return None, "unparsed"  # "yes and no", "yes or no", "no / yes"
    answers = {word in _YES for word in _ANSWER_WORD.findall(text)}
    if len(answers) > 1:
        return None, "unparsed"  # "Yes. On reflection: no." gives two answers
    if words and words[0] in _YES:
        return 1, "first_word"
    if words and words[0] in _NO:
        return 0, "first_word"
    found = {w for w in words if w in ("yes", "no")}
    if len(found) == 1:
        return (1 if found == {"yes"} else 0), "only_word"
    if not found and _NEGATED.search(text) and not _UNSURE.search(text):
        return 0, "negation"
    return None, "unparsed"
