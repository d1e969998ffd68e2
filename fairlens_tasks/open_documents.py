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

import hashlib
import json
import logging
from collections.abc import Iterator
from typing import Any

from fairlens_tasks.corpus import Corpus, CorpusImage, load_corpus
from fairlens_tasks.documents import _error_dataset, document_table
from fairlens_tasks.questions import DOMAINS, OpenQuestion, domain_open_questions, open_questions
from fairlens_tasks.settings import Settings, settings_from_env

log = logging.getLogger("fairness_evals.fairlens")

TASK_PREFIX = "fairlens_open"


def task_name(domain: str) -> str:
    return f"{TASK_PREFIX}_{domain}"


def doc_id(image: CorpusImage, question: OpenQuestion) -> str:
    return f"{image.entry.image_id}/{question.id}"


def iter_open_documents(corpus: Corpus, domain: str) -> Iterator[dict[str, Any]]:
    """The open-ended documents of ``domain`` for ``corpus``, image-major."""
    questions = domain_open_questions(domain)
    provenance = corpus.provenance()
    settings = corpus.settings
    hf = corpus.kind == "hf"
    for image in corpus.images:
        entry = image.entry
        d = entry.demographics
        attributes = json.dumps(dict(entry.attributes), sort_keys=True, ensure_ascii=False) if entry.attributes else ""
        for question in questions:
            yield {
                "id": doc_id(image, question),
                "task": task_name(domain),
                "domain": domain,
                "question_id": question.id,
                "question_index": question.index,
                "image": "" if hf else (entry.path or ""),
                "image_index": entry.index if hf and entry.index is not None else -1,
                "image_id": entry.image_id,
                "image_unit": image.unit,
                "hf_dataset": settings.hf_name if hf else "",
                "hf_split": (settings.hf_split or "") if hf else "",
                "hf_image_column": settings.column("image") if hf else "",
                "gender": d.gender,
                "race": d.race,
                "age": d.age,
                "age_band": d.age_band,
                "attributes": attributes,
                **provenance,
            }


def open_documents(settings: Settings, domain: str) -> list[dict[str, Any]]:
    return list(iter_open_documents(load_corpus(settings), domain))


_STRING, _INT = "string", "int64"
OPEN_COLUMN_TYPES: dict[str, str] = {
    "id": _STRING, "task": _STRING, "domain": _STRING, "question_id": _STRING, "question_index": _INT,
    "image": _STRING, "image_index": _INT, "image_id": _STRING, "image_unit": _INT, "hf_dataset": _STRING,
    "hf_split": _STRING, "hf_image_column": _STRING, "gender": _STRING, "race": _STRING, "age": _INT,
    "age_band": _STRING, "attributes": _STRING, "seed": _INT, "sample_fraction": "double",
    "corpus_sha256": _STRING, "data_version": _INT, "images_found": _INT, "images_loaded": _INT,
    "images_skipped": _INT, "images_eligible": _INT, "images_sampled": _INT, "groups_empty": _INT,
}  # fmt: skip


def _process_docs(dataset: Any, domain: str) -> Any:
    """lmms-eval ``process_docs``: ``dataset`` is the shipped question file; returns the domain's open documents."""
    import datasets

    shipped = {row["id"] for row in dataset if row.get("type") == "open"}
    if shipped != {q.id for q in open_questions()}:
        return _error_dataset("fairlens_tasks: the question file lmms-eval loaded differs from the package's")
    try:
        corpus = load_corpus(settings_from_env())
    except ValueError as error:  # SettingsError, CorpusError, LabelError: user input, explained
        log.error("%s: %s", task_name(domain), error)
        return _error_dataset(str(error))
    fingerprint = hashlib.sha256(
        f"fairlens_open/{domain}/{corpus.fingerprint}/{corpus.provenance()}".encode()
    ).hexdigest()
    table = document_table(corpus, domain, iterate=iter_open_documents, column_types=OPEN_COLUMN_TYPES)
    return datasets.Dataset(table, fingerprint=fingerprint[:16])


def hiring_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "hiring")


def legal_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "legal")


def healthcare_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "healthcare")


__all__ = [
    "DOMAINS",
    "OPEN_COLUMN_TYPES",
    "healthcare_docs",
    "hiring_docs",
    "iter_open_documents",
    "legal_docs",
    "open_documents",
    "task_name",
]
