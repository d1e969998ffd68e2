"""The FairLens question suite shipped with the package (``data/questions.json``).

The file keeps every field of the released ``src/fairlens/config/questions.json`` verbatim and adds a
stable ``id`` and the ``domain`` to each item (see this folder's README, "Provenance").
:func:`released_json` rebuilds the released file byte for byte, which the tests check against its
published sha256.

The 38 closed (multiple-choice) items are :func:`closed_questions`; the 31 open-ended items, judged by
an LLM in the ``fairlens_open_*`` tasks, are :func:`open_questions`.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DOMAINS = ("hiring", "legal", "healthcare")
CANNOT_TELL = "Cannot tell"

DATA_FILE = Path(__file__).resolve().parent / "data" / "questions.json"


@dataclass(frozen=True)
class Question:
    """One closed FairLens item.

    ``index`` is the item's position among the 38 closed items (hiring, legal, healthcare, in file
    order); ``options`` are parsed from the text as the released code does; ``adverse`` is empty for
    the six association-only items; ``association`` is the stereotype tag or ``None``.
    """

    id: str
    domain: str
    index: int
    text: str
    options: tuple[str, ...]
    expected: str
    adverse: tuple[str, ...]
    association: str | None


@functools.lru_cache(maxsize=1)
def raw_data() -> dict[str, Any]:
    with open(DATA_FILE, encoding="utf-8") as handle:
        return json.load(handle)


def data_version() -> int:
    return int(raw_data()["data_version"])


def system_prompt(domain: str) -> str:
    """The domain framing (ends with a blank line); prepended to the question, not a chat system turn."""
    return raw_data()["system_prompts"][domain]


def instruction() -> str:
    """The one-line instruction after a closed question (the released open-weight scripts' wording)."""
    return raw_data()["instructions"]["closed"]


def open_instruction() -> str:
    """The instruction after an open-ended question: "Answer the question as best as you can."."""
    return raw_data()["instructions"]["open"]


def parse_options(text: str) -> tuple[str, ...]:
    """``text.split("Options:", 1)[1].split("/")``, each part stripped, empty parts dropped (as released)."""
    if "Options:" not in text:
        return ()
    return tuple(part.strip() for part in text.split("Options:", 1)[1].split("/") if part.strip())


@functools.lru_cache(maxsize=1)
def closed_questions() -> tuple[Question, ...]:
    """The 38 closed items in file order (hiring 21, legal 9, healthcare 8)."""
    out = []
    for item in raw_data()["questions"]:
        if item["type"] != "closed":
            continue
        options = parse_options(item["text"])
        for field in ("expected", "adverse"):
            if item[field] is not None and item[field] not in options:
                raise ValueError(f"{DATA_FILE.name}: {item['id']} {field} {item[field]!r} is not one of its options")
        out.append(
            Question(
                id=item["id"],
                domain=item["domain"],
                index=len(out),
                text=item["text"],
                options=options,
                expected=item["expected"],
                adverse=() if item["adverse"] is None else (item["adverse"],),
                association=item["association"],
            )
        )
    return tuple(out)


def domain_questions(domain: str) -> tuple[Question, ...]:
    if domain not in DOMAINS:
        raise ValueError(f"unknown FairLens domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    return tuple(q for q in closed_questions() if q.domain == domain)


@dataclass(frozen=True)
class OpenQuestion:
    """One open-ended FairLens item (no options; scored by the LLM bias judge).

    ``index`` is the item's position among the 31 open items (hiring 9, legal 12, healthcare 10, in
    file order).
    """

    id: str
    domain: str
    index: int
    text: str


@functools.lru_cache(maxsize=1)
def open_questions() -> tuple[OpenQuestion, ...]:
    """The 31 open-ended items in file order (hiring 9, legal 12, healthcare 10)."""
    out: list[OpenQuestion] = []
    for item in raw_data()["questions"]:
        if item["type"] != "open":
            continue
        if "Options:" in item["text"]:  # the released code tells MC from open by this marker alone
            raise ValueError(f"{DATA_FILE.name}: open item {item['id']} has inline options")
        out.append(OpenQuestion(id=item["id"], domain=item["domain"], index=len(out), text=item["text"]))
    return tuple(out)


def domain_open_questions(domain: str) -> tuple[OpenQuestion, ...]:
    if domain not in DOMAINS:
        raise ValueError(f"unknown FairLens domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    return tuple(q for q in open_questions() if q.domain == domain)


def released_json() -> str:
    """The released ``questions.json`` text, rebuilt from the shipped file (2-space indent, final newline)."""
    data = raw_data()
    released: dict[str, Any] = {"system_prompts": data["system_prompts"]}
    for domain in DOMAINS:
        items = []
        for item in data["questions"]:
            if item["domain"] != domain:
                continue
            kept = {"text": item["text"], "type": item["type"]}
            for key in ("expected", "adverse", "association"):
                if item[key] is not None:
                    kept[key] = item[key]
            items.append(kept)
        released[domain] = items
    return json.dumps(released, indent=2, ensure_ascii=False) + "\n"
