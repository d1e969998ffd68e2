"""Free-text answer -> one of the 52 occupations, or ``"unmappable"`` (IRIS's 3-stage mapper, adapted).

The released mapper (``preprocessing/run_semantic_mapping.py``) tries, in order: the answer equal to an
occupation name; a WordNet lemma of an occupation's synsets; the all-MiniLM-L6-v2 occupation name with
the highest cosine similarity, if it is at least 0.6; else ``unmappable``. Here:

1. **normalise** (ours): lower case; ``-`` and ``_`` as spaces; markdown marks and quotes dropped; the
   first non-empty line; lead-ins such as "The person in the image is a", "Occupation:", "This is a",
   "probably", and leading articles dropped; edge punctuation stripped;
2. ``exact``: the normalised answer is an occupation name or id (or its plural: ``nurses``,
   ``firemen``); a later line that is by itself another occupation (exact or alias, "Doctor" then "Nurse")
   makes the answer unmappable (two answers, never the first);
3. ``alias``: it is an entry of our alias table ``data/occupation_aliases.json`` (or its plural); this
   replaces the WordNet stage, whose data cannot be fetched at run time and which accepts unrelated
   senses;
4. ``mention`` (ours): the whole answer names exactly one occupation, by name or alias, as whole words
   (longest phrase first, so "disk jockey" is not also "jockey"); answers naming two are left to stage 5;
5. ``embedding``: cosine similarity of the normalised answer to the 52 names with all-MiniLM-L6-v2
   (:mod:`iris_tasks.embedder`), top-1 if at least the threshold (0.6);
6. otherwise ``unmappable``. An empty answer is ``unmappable`` at once.

With ``candidates`` (the RFS-Und probe), every stage only considers those occupations; an answer that
names (stages 2-4) only occupations outside them, or that none of them matches, is *unparsed*
(``occupation is None``): the embedding stage never turns an off-list "doctor" into a listed "nurse".

Results are memoised per (answer, candidates, threshold, embedder): models repeat themselves, so most
answers are looked up, not embedded. All functions are thread-safe.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from iris_tasks import embedder as embedding
from iris_tasks.vocabulary import aliases_data, occupation_ids, occupation_names
from metrics.iris import UNMAPPABLE

DEFAULT_THRESHOLD = 0.6
STAGES: tuple[str, ...] = ("exact", "alias", "mention", "embedding", "unmappable", "error")


@dataclass(frozen=True)
class Mapped:
    """How one answer was read.

    ``occupation`` is an occupation id, ``"unmappable"`` (free mapping) or ``None`` (candidate mode, no
    candidate matched). ``similarity`` is the best cosine similarity when the embedding stage ran.
    ``nearest`` is the occupation of that best similarity (also when below the threshold).
    """

    occupation: str | None
    stage: str
    similarity: float | None = None
    nearest: str | None = None
    normalised: str = ""


# --------------------------------------------------------------------------- normalisation
_MARKS = re.compile(r"[*`#\"“”‘’«»\[\]{}]")
_LEAD_INS = [
    re.compile(p)
    for p in (
        r"^(?:final\s+)?answer\s*[:\-]\s*",
        r"^(?:the\s+)?(?:occupation|profession|job|role)(?:\s+of\s+(?:the|this)\s+(?:person|man|woman|individual))?"
        r"(?:\s+in\s+the\s+(?:image|picture|photo))?\s*(?:is\s*|:\s*|-\s*)",
        r"^(?:the|this)\s+(?:person|man|woman|individual|people)(?:\s+in\s+the\s+(?:image|picture|photo))?\s+"
        r"(?:is|are|appears\s+to\s+be|seems\s+to\s+be|looks\s+like|could\s+be|might\s+be|may\s+be)\s+",
        r"^(?:this|that|it|he|she|they)\s+(?:is|are|'s|appears\s+to\s+be|seems\s+to\s+be|looks\s+like)\s+",
        r"^i\s+(?:think|believe|guess)\s+(?:(?:that\s+)?(?:this|the\s+person|he|she|they)\s+(?:is|are)\s+)?",
        r"^(?:most\s+likely|likely|probably|possibly|perhaps|maybe)\s*,?\s+",
        r"^(?:a|an|the)\s+",
    )
]
_EDGE = " \t\n\r.,;:!?()'"


def _spaces(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[_\-–—/]+", " ", text)).strip()


def normalise(answer: object) -> str:
    """The normalised first line of an answer (see the module docstring, step 1)."""
    if answer is None:
        return ""
    if isinstance(answer, (list, tuple)):
        answer = answer[0] if answer else ""
    text = _MARKS.sub(" ", str(answer).lower())
    line = next((ln for ln in text.splitlines() if ln.strip(_EDGE)), "")
    line = _spaces(line).strip(_EDGE)
    for _ in range(4):  # lead-ins can stack: "Answer: the person is probably a nurse"
        before = line
        for pattern in _LEAD_INS:
            line = pattern.sub("", line).strip(_EDGE)
        if line == before:
            break
    return _spaces(line).strip(_EDGE)


def _plurals(phrase: str) -> list[str]:
    """Plural spellings of a phrase's last word (``firemen``, ``nurses``, ``waitresses``, ``ballerinas``)."""
    head, _, last = phrase.rpartition(" ")
    prefix = f"{head} " if head else ""
    forms = []
    if last.endswith("man"):
        forms.append(last[:-3] + "men")
    if last.endswith(("s", "x", "ch", "sh")):
        forms.append(last + "es")
    elif last.endswith("y") and last[-2:-1] not in "aeiou":
        forms.append(last[:-1] + "ies")
    else:
        forms.append(last + "s")
    return [prefix + form for form in forms]


@functools.lru_cache(maxsize=1)
def phrase_index() -> dict[str, tuple[str, str]]:
    """Every accepted phrase -> (occupation id, stage ``exact`` or ``alias``), plurals included."""
    index: dict[str, tuple[str, str]] = {}

    def add(phrase: str, occupation: str, stage: str) -> None:
        key = _spaces(phrase.lower())
        for form in (key, *_plurals(key)):
            previous = index.get(form)
            if previous is not None and previous[0] != occupation:
                raise ValueError(f"iris_tasks alias table: {form!r} maps to both {previous[0]} and {occupation}")
            if previous is None or (previous[1] == "alias" and stage == "exact"):
                index[form] = (occupation, stage)

    for occupation, name in occupation_names().items():
        add(name, occupation, "exact")
        add(occupation, occupation, "exact")
    for occupation, aliases in aliases_data()["aliases"].items():
        if occupation not in occupation_names():
            raise ValueError(f"iris_tasks alias table: unknown occupation {occupation!r}")
        for alias in aliases:
            add(alias, occupation, "alias")
    return index


@functools.lru_cache(maxsize=1)
def _mention_pattern() -> re.Pattern[str]:
    phrases = sorted(phrase_index(), key=lambda p: (-len(p), p))
    return re.compile(r"\b(?:" + "|".join(re.escape(p) for p in phrases) + r")\b")


def mentioned(text: str, candidates: tuple[str, ...] | None = None) -> set[str]:
    """The occupations the text names as whole words (longest phrases first, no overlaps), among
    ``candidates`` when given (a phrase is read as the longest one: "disk jockey" never counts as "jockey")."""
    key = _spaces(_MARKS.sub(" ", text.lower()))
    index = phrase_index()
    found = {index[m.group(0)][0] for m in _mention_pattern().finditer(key)}
    return found if candidates is None else found & set(candidates)


# --------------------------------------------------------------------------- the mapper
_MEMO: dict[tuple, Mapped] = {}
_MEMO_LOCK = threading.Lock()
_MEMO_LIMIT = 200_000


_SIMILARITIES: dict[tuple[str, str], np.ndarray] = {}


def similarities(text: str, spec: str | None) -> np.ndarray:
    """Cosine similarity of ``text`` to each of the 52 occupation names (memoised per text and embedder)."""
    key = (text, spec or "")
    with _MEMO_LOCK:
        found = _SIMILARITIES.get(key)
    if found is not None:
        return found
    model = embedding.get(spec)
    if model is None:
        raise LookupError("embedding stage switched off")
    names = occupation_names()
    name_vectors = model.encode_fixed(tuple(names[o] for o in occupation_ids()))
    values = name_vectors @ model.encode([text])[0]
    with _MEMO_LOCK:
        if len(_SIMILARITIES) >= _MEMO_LIMIT:
            _SIMILARITIES.clear()
        _SIMILARITIES[key] = values
    return values


def _embedding_stage(
    text: str, candidates: tuple[str, ...] | None, threshold: float, spec: str | None
) -> tuple[str | None, float, str]:
    """(occupation or None, best similarity, nearest occupation); raises EmbedderUnavailable."""
    ids = occupation_ids()
    values = similarities(text, spec)
    if candidates is not None:
        keep = np.isin(np.asarray(ids), np.asarray(candidates))
        values = np.where(keep, values, -np.inf)
    best = int(np.argmax(values))
    score = float(values[best])
    return (ids[best] if score >= threshold else None), score, ids[best]


def _other_line_answers(raw: str, occupation: str) -> bool:
    """Whether a later line of ``raw`` is by itself (normalised) another occupation's name or alias: a second answer
    ("Doctor" then "Nurse" on the next line), not an explanation (which only mentions occupations)."""
    lines = [line for line in raw.splitlines() if line.strip(_EDGE)][1:]
    index = phrase_index()
    return any((hit := index.get(normalise(line))) is not None and hit[0] != occupation for line in lines)


def _map(answer: object, candidates: tuple[str, ...] | None, threshold: float, spec: str | None) -> Mapped:
    miss = None if candidates is not None else UNMAPPABLE
    raw = "" if answer is None else str(answer[0] if isinstance(answer, (list, tuple)) and answer else answer)
    text = normalise(raw)
    if not text:
        return Mapped(miss, "unmappable", normalised=text)
    found = phrase_index().get(text)
    named = mentioned(raw)
    if candidates is not None:
        # An answer naming only occupations outside the bracket is off the list, not a near miss.
        if found is not None and found[0] not in candidates:
            return Mapped(None, "unmappable", nearest=found[0], normalised=text)
        if named and not named & set(candidates):
            return Mapped(None, "unmappable", normalised=text)
        named &= set(candidates)
    if found is not None:
        if _other_line_answers(raw, found[0]):
            return Mapped(miss, "unmappable", normalised=text)  # "Doctor\nNurse": two answers, never the first
        return Mapped(found[0], found[1], normalised=text)
    if len(named) == 1:
        return Mapped(next(iter(named)), "mention", normalised=text)
    try:
        occupation, score, nearest = _embedding_stage(text, candidates, threshold, spec)
    except LookupError:  # switched off
        return Mapped(miss, "unmappable", normalised=text)
    except embedding.EmbedderUnavailable as error:
        return Mapped(miss, "error", normalised=f"{text} [{error}]")
    if occupation is None:
        return Mapped(miss, "unmappable", similarity=score, nearest=nearest, normalised=text)
    return Mapped(occupation, "embedding", similarity=score, nearest=nearest, normalised=text)


def map_answer(
    answer: object,
    *,
    candidates: Iterable[str] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    embedder_spec: str | None = None,
) -> Mapped:
    """Map one answer (see the module docstring). Never raises for any answer value.

    ``embedder_spec`` is ``IRIS_EMBEDDER``'s value (default: read the environment): empty for the
    shipped MiniLM, ``none`` to switch the embedding stage off, or a model folder. A model that cannot
    be loaded gives stage ``error`` (counted and reported by the tasks, never silently unmappable).
    """
    spec = embedding.configured() if embedder_spec is None else embedder_spec
    cands = tuple(sorted(set(candidates))) if candidates is not None else None
    key = (str(answer), cands, float(threshold), spec)
    with _MEMO_LOCK:
        found = _MEMO.get(key)
    if found is not None:
        return found
    result = _map(answer, cands, float(threshold), spec)
    if result.stage == "error":
        return result  # not memoised: a later call may succeed (e.g. after installing the model)
    with _MEMO_LOCK:
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO[key] = result
    return result


def clear_memo() -> None:
    """Forget memoised answers and similarities (tests and the bench)."""
    with _MEMO_LOCK:
        _MEMO.clear()
        _SIMILARITIES.clear()
