"""FairLens open-ended documents: one per (image, open question of the domain), image by image.

The same corpus, sample, order and provenance as the closed tasks (:mod:`fairlens_tasks.documents`): every
image gets every open question of the domain (hiring 9, legal 12, healthcare 10), an image's questions are
consecutive, and images come in the sampler's round-robin order. A document carries no pixels and no
prompt text: ``doc_to_visual``/``doc_to_text`` of :mod:`fairlens_tasks.scoring` open the image and look the
prompt up by question id (the released open prompt, :func:`fairlens_tasks.prompts.open_prompt_text`).

lmms-eval entry points: ``process_docs: !function fairlens_tasks.open_documents.hiring_docs`` (and
``legal_docs``, ``healthcare_docs``). Configuration errors become a one-document dataset whose
``doc_to_text`` raises the message, exactly as for the closed tasks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from fairlens_tasks.corpus import Corpus, CorpusImage, load_corpus
from fairlens_tasks.documents import (
    IMAGE_COLUMN_TYPES,
    PROVENANCE_COLUMN_TYPES,
    QUESTION_COLUMN_TYPES,
    corpus_documents,
    export_line,
    image_fields,
)
from fairlens_tasks.questions import DOMAINS, OpenQuestion, domain_open_questions, open_questions
from fairlens_tasks.settings import Settings

TASK_PREFIX = "fairlens_open"


def task_name(domain: str) -> str:
    return f"{TASK_PREFIX}_{domain}"


def doc_id(image: CorpusImage, question: OpenQuestion) -> str:
    return f"{image.entry.image_id}/{question.id}"


def iter_open_documents(corpus: Corpus, domain: str) -> Iterator[dict[str, Any]]:
    """The open-ended documents of ``domain`` for ``corpus``, image-major."""
    questions = domain_open_questions(domain)
    provenance = corpus.provenance()
    for image in corpus.images:
        fields = image_fields(corpus, image)
        for question in questions:
            yield {
                "id": doc_id(image, question),
                "task": task_name(domain),
                "domain": domain,
                "question_id": question.id,
                "question_index": question.index,
                **fields,
                **provenance,
            }


def open_documents(settings: Settings, domain: str) -> list[dict[str, Any]]:
    return list(iter_open_documents(load_corpus(settings), domain))


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
            for doc in iter_open_documents(corpus, domain):
                yield export_open_record(doc)


OPEN_COLUMN_TYPES: dict[str, str] = {**QUESTION_COLUMN_TYPES, **IMAGE_COLUMN_TYPES, **PROVENANCE_COLUMN_TYPES}


def _process_docs(dataset: Any, domain: str) -> Any:
    """lmms-eval ``process_docs``: ``dataset`` is the shipped question file; returns the domain's open documents."""
    return corpus_documents(
        dataset, domain, prefix=TASK_PREFIX, question_type="open", questions=open_questions(),
        iterate=iter_open_documents, column_types=OPEN_COLUMN_TYPES,
    )  # fmt: skip


def hiring_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "hiring")


def legal_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "legal")


def healthcare_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "healthcare")


__all__ = [
    "DOMAINS",
    "OPEN_COLUMN_TYPES",
    "export_open_record",
    "healthcare_docs",
    "hiring_docs",
    "iter_open_documents",
    "legal_docs",
    "open_documents",
    "open_export_records",
    "task_name",
]
