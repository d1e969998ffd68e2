"""FairLens open-ended documents: :func:`fairlens_tasks.documents.iter_documents` of the ``"open"`` question set.

The same corpus, sample, order and provenance as the closed tasks: every image gets every open question of the
domain (hiring 9, legal 12, healthcare 10), an image's questions are consecutive, and images come in the sampler's
round-robin order. A document carries no pixels and no prompt text: ``doc_to_visual``/``doc_to_text`` of
:mod:`fairlens_tasks.scoring` open the image and look the prompt up by question id (the released open prompt,
:func:`fairlens_tasks.prompts.open_prompt_text`). This module holds the open-ended export lines and the lmms-eval
entry points.

lmms-eval entry points: ``process_docs: !function fairlens_tasks.open_documents.hiring_docs`` (and
``legal_docs``, ``healthcare_docs``). Configuration errors become a one-document dataset whose
``doc_to_text`` raises the message, exactly as for the closed tasks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from fairlens_tasks.corpus import Corpus
from fairlens_tasks.documents import QUESTION_SETS, corpus_documents, documents, export_line, iter_documents
from fairlens_tasks.questions import DOMAINS
from fairlens_tasks.settings import Settings

TASK_PREFIX = QUESTION_SETS["open"].prefix


def task_name(domain: str) -> str:
    return f"{TASK_PREFIX}_{domain}"


def iter_open_documents(corpus: Corpus, domain: str) -> Iterator[dict[str, Any]]:
    """``iter_documents(corpus, domain, "open")``, for the callers that name the open-ended set this way."""
    return iter_documents(corpus, domain, "open")


def open_documents(settings: Settings, domain: str) -> list[dict[str, Any]]:
    """``documents(settings, domain, "open")``."""
    return documents(settings, domain, "open")


def export_open_record(doc: dict[str, Any]) -> dict[str, Any]:
    """One line of ``fairness-evals export fairlens`` for an open-ended document.

    ``{"task", "id", "prompt", "image": <path or dataset row>, "meta": {"domain", "question_id", "open": true,
    "gender", "race", "age", "age_band"[, "attributes"]}}``: the closed lines' shape without the option fields.
    Ids (``<image id>/<question id>``, question ids ``HO01``... ``CO10``) never collide with closed ids.
    """
    meta: dict[str, Any] = {
        "domain": doc["domain"],
        "question_id": doc["question_id"],
        "open": True,
    }
    return export_line(doc, meta)


def open_export_records(corpus: Corpus, domains: Iterable[str] = DOMAINS) -> Iterator[dict[str, Any]]:
    """The export lines of the open-ended documents of ``domains`` (in :data:`DOMAINS` order), the harness's
    document order within each domain; for ``fairness-evals export fairlens`` after the closed lines."""
    chosen = set(domains)
    unknown = chosen - set(DOMAINS)
    if unknown:
        raise ValueError(f"unknown FairLens domain(s) {', '.join(sorted(unknown))}; expected {', '.join(DOMAINS)}")
    for domain in DOMAINS:
        if domain in chosen:
            for doc in iter_documents(corpus, domain, "open"):
                yield export_open_record(doc)


def hiring_docs(dataset: Any) -> Any:
    """lmms-eval ``process_docs`` of ``fairlens_open_hiring``: ``dataset`` is the shipped question file."""
    return corpus_documents(dataset, "hiring", "open")


def legal_docs(dataset: Any) -> Any:
    return corpus_documents(dataset, "legal", "open")


def healthcare_docs(dataset: Any) -> Any:
    return corpus_documents(dataset, "healthcare", "open")


__all__ = [
    "DOMAINS",
    "export_open_record",
    "healthcare_docs",
    "hiring_docs",
    "iter_open_documents",
    "legal_docs",
    "open_documents",
    "open_export_records",
    "task_name",
]
