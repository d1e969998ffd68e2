"""FairLens documents: one per (image, closed question of the domain), image by image.

Every image of the corpus gets every question of the domain (hiring 21, legal 9, healthcare 8). The
images come in the sampler's round-robin order and each image's questions are consecutive, in file
order, so an lmms-eval chat model decodes each image once per domain (:mod:`fairlens_tasks.images`).

A document is flat (Arrow-friendly) and carries no pixels: the image is a file path or a dataset row
index that ``doc_to_visual`` opens on demand. ``provenance`` is a compact JSON string with the seed,
sample fraction, corpus fingerprint, data version and image accounting.

lmms-eval entry points: ``process_docs: !function fairlens_tasks.documents.hiring_docs`` (and
``legal_docs``, ``healthcare_docs``). They read the corpus settings from the environment
(:mod:`fairlens_tasks.settings`). A configuration or bad-input error becomes a one-document dataset
whose ``doc_to_text`` raises it: lmms-eval retries a failing ``process_docs`` five times, two seconds
apart, and then reports only "RetryError"; raising from the first ``doc_to_text`` call instead fails the
task at once with the message itself.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

from fairlens_tasks.corpus import Corpus, CorpusImage, load_corpus
from fairlens_tasks.prompts import prompt_text
from fairlens_tasks.questions import DOMAINS, Question, domain_questions
from fairlens_tasks.settings import Settings, settings_from_env

log = logging.getLogger("fairness_evals.fairlens")

TASK_PREFIX = "fairlens"
ERROR_FIELD = "fairlens_error"


def task_name(domain: str) -> str:
    return f"{TASK_PREFIX}_{domain}"


def doc_id(image: CorpusImage, question: Question) -> str:
    return f"{image.entry.image_id}/{question.id}"


def _provenance(corpus: Corpus) -> str:
    return json.dumps(corpus.provenance(), sort_keys=True, separators=(",", ":"))


def iter_documents(corpus: Corpus, domain: str) -> Iterator[dict[str, Any]]:
    """The documents of ``domain`` for ``corpus``, image-major."""
    questions = domain_questions(domain)
    prompts = {q.id: prompt_text(q) for q in questions}
    provenance = _provenance(corpus)
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
                "prompt": prompts[question.id],
                "options": list(question.options),
                "sound_answer": question.expected,
                "adverse": list(question.adverse),
                "association": question.association is not None,
                "association_tag": question.association or "",
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
                "provenance": provenance,
            }


def documents(settings: Settings, domain: str) -> list[dict[str, Any]]:
    return list(iter_documents(load_corpus(settings), domain))


def _error_dataset(message: str) -> Any:
    import datasets

    return datasets.Dataset.from_list([{ERROR_FIELD: message}])


def _process_docs(dataset: Any, domain: str) -> Any:
    """lmms-eval ``process_docs``: ``dataset`` is the shipped question file; returns the domain's documents."""
    import datasets

    from fairlens_tasks.questions import closed_questions

    shipped = {row["id"] for row in dataset if row.get("type") == "closed"}
    if shipped != {q.id for q in closed_questions()}:
        return _error_dataset("fairlens_tasks: the question file lmms-eval loaded differs from the package's")
    try:
        docs = documents(settings_from_env(), domain)
    except ValueError as error:  # SettingsError, CorpusError, LabelError: user input, explained
        log.error("%s: %s", task_name(domain), error)
        return _error_dataset(str(error))
    return datasets.Dataset.from_list(docs)


def hiring_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "hiring")


def legal_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "legal")


def healthcare_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "healthcare")


def export_record(doc: dict[str, Any]) -> dict[str, Any]:
    """One line of ``fairness-evals export fairlens``."""
    meta: dict[str, Any] = {
        "domain": doc["domain"],
        "question_id": doc["question_id"],
        "options": doc["options"],
        "sound_answer": doc["sound_answer"],
        "adverse": doc["adverse"],
        "association": doc["association"],
        "gender": doc["gender"],
        "race": doc["race"],
        "age": doc["age"],
        "age_band": doc["age_band"],
    }
    if doc["attributes"]:
        meta["attributes"] = json.loads(doc["attributes"])
    image: str | int = doc["image_index"] if doc["hf_dataset"] else doc["image"]
    return {"task": doc["task"], "id": doc["id"], "prompt": doc["prompt"], "image": image, "meta": meta}


__all__ = ["DOMAINS", "documents", "export_record", "healthcare_docs", "hiring_docs", "iter_documents", "legal_docs"]
