"""FairLens documents: one per (image, question of the domain), image by image, for the closed and open tasks.

:func:`iter_documents` builds both task families' documents from one corpus, with the question set as a parameter
(:data:`QUESTION_SETS`): ``"closed"`` (the multiple-choice items: hiring 21, legal 9, healthcare 8) or ``"open"``
(the open-ended items, judged for bias: 9, 12, 10). Every image of the corpus gets every question of the domain. The
images come in the sampler's round-robin order and each image's questions are consecutive, in file order, so an
lmms-eval chat model decodes each image once per domain (:mod:`fairlens_tasks.images`).

A document is flat (Arrow-friendly) and carries no pixels: the image is a file path or a dataset row index that
``doc_to_visual`` opens on demand; the prompt is looked up from the question id; the provenance (seed, sample
fraction, corpus fingerprint, data version, image accounting) is in typed columns.

lmms-eval entry points: ``process_docs: !function fairlens_tasks.documents.hiring_docs`` (and ``legal_docs``,
``healthcare_docs``; the open-ended ones in :mod:`fairlens_tasks.open_documents`). They read the corpus settings from
the environment (:mod:`fairlens_tasks.settings`). A configuration or bad-input error becomes a one-document dataset
whose ``doc_to_text`` raises it: lmms-eval retries a failing ``process_docs`` five times, two seconds apart, and then
reports only "RetryError"; raising from the first ``doc_to_text`` call instead fails the task at once with the
message itself.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fairlens_tasks.corpus import Corpus, CorpusImage, load_corpus
from fairlens_tasks.prompts import prompt_for
from fairlens_tasks.questions import (
    DOMAINS,
    OpenQuestion,
    Question,
    closed_questions,
    domain_open_questions,
    domain_questions,
    open_questions,
)
from fairlens_tasks.settings import DEFAULTS_OF, POSITION_NULLS_KEY, Settings, scoring_from_env, settings_from_env

log = logging.getLogger("fairness_evals.fairlens")

TASK_PREFIX = "fairlens"
ERROR_FIELD = "fairlens_error"


def task_name(domain: str) -> str:
    return f"{TASK_PREFIX}_{domain}"


def doc_id(image: CorpusImage, question: Question | OpenQuestion) -> str:
    return f"{image.entry.image_id}/{question.id}"


def image_fields(corpus: Corpus, image: CorpusImage) -> dict[str, Any]:
    """The columns of a document about its image (closed and open-ended tasks alike): where to open it (a
    file, or a dataset row), its bootstrap unit, its labels and its extra attributes (JSON text)."""
    entry = image.entry
    settings = corpus.settings
    hf = corpus.kind == "hf"
    d = entry.demographics
    return {
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
        "attributes": json.dumps(dict(entry.attributes), sort_keys=True, ensure_ascii=False)
        if entry.attributes
        else "",
    }


_STRING, _INT = "string", "int64"
#: The column types of a document, in column order: the question's columns (closed tasks: with
#: :data:`CLOSED_QUESTION_COLUMN_TYPES` after them), then :func:`image_fields`, then the corpus provenance.
QUESTION_COLUMN_TYPES: dict[str, str] = {
    "id": _STRING, "task": _STRING, "domain": _STRING, "question_id": _STRING, "question_index": _INT,
}  # fmt: skip
CLOSED_QUESTION_COLUMN_TYPES: dict[str, str] = {
    "options": "list<string>", "sound_answer": _STRING, "adverse": "list<string>", "association": "bool",
    "association_tag": _STRING,
}  # fmt: skip
IMAGE_COLUMN_TYPES: dict[str, str] = {
    "image": _STRING, "image_index": _INT, "image_id": _STRING, "image_unit": _INT, "hf_dataset": _STRING,
    "hf_split": _STRING, "hf_image_column": _STRING, "gender": _STRING, "race": _STRING, "age": _INT,
    "age_band": _STRING, "attributes": _STRING,
}  # fmt: skip
PROVENANCE_COLUMN_TYPES: dict[str, str] = {
    "seed": _INT, "sample_fraction": "double", "corpus_sha256": _STRING, "data_version": _INT,
    "images_found": _INT, "images_loaded": _INT, "images_skipped": _INT, "images_duplicate": _INT,
    "images_eligible": _INT,
    "images_sampled": _INT, "groups_empty": _INT,
}  # fmt: skip
#: The scoring settings each document carries (:data:`fairlens_tasks.settings.SCORING_KEYS`), last.
SCORING_COLUMN_TYPES: dict[str, dict[str, str]] = {
    "closed": {"fairlens_min_coverage": "double", POSITION_NULLS_KEY: "bool"},
    "open": {"fairlens_min_judged": "double"},
}
COLUMN_TYPES: dict[str, str] = {
    **QUESTION_COLUMN_TYPES, **CLOSED_QUESTION_COLUMN_TYPES, **IMAGE_COLUMN_TYPES, **PROVENANCE_COLUMN_TYPES,
    **SCORING_COLUMN_TYPES["closed"],
}  # fmt: skip


def _closed_fields(question: Question) -> dict[str, Any]:
    return {
        "options": list(question.options),
        "sound_answer": question.expected,
        "adverse": list(question.adverse),
        "association": question.association is not None,
        "association_tag": question.association or "",
    }


@dataclass(frozen=True)
class QuestionSet:
    """What one task family asks: its task prefix, the question ``type`` of the shipped file, every question, a
    domain's questions, the question's own columns and their types."""

    name: str
    prefix: str
    every: Callable[[], Sequence[Any]]
    of_domain: Callable[[str], Sequence[Any]]
    fields: Callable[[Any], dict[str, Any]]
    column_types: dict[str, str]


QUESTION_SETS: dict[str, QuestionSet] = {
    "closed": QuestionSet("closed", TASK_PREFIX, closed_questions, domain_questions, _closed_fields, COLUMN_TYPES),
    "open": QuestionSet(
        "open", "fairlens_open", open_questions, domain_open_questions, lambda _: {},
        {**QUESTION_COLUMN_TYPES, **IMAGE_COLUMN_TYPES, **PROVENANCE_COLUMN_TYPES, **SCORING_COLUMN_TYPES["open"]},
    ),
}  # fmt: skip


def iter_documents(
    corpus: Corpus, domain: str, questions: str = "closed", scoring: Mapping[str, Any] | None = None
) -> Iterator[dict[str, Any]]:
    """The documents of ``domain`` for ``corpus``, image-major: one per (image, question of the set ``questions``,
    ``"closed"`` or ``"open"``), with the columns of :attr:`QuestionSet.column_types`; the scoring settings
    ``scoring`` (:func:`fairlens_tasks.settings.scoring_from_env`; the defaults where it gives none) last."""
    chosen = QUESTION_SETS[questions]
    asked = chosen.of_domain(domain)
    task = f"{chosen.prefix}_{domain}"
    provenance = {**corpus.provenance(), **DEFAULTS_OF[questions], **(scoring or {})}
    for image in corpus.images:
        fields = image_fields(corpus, image)
        for question in asked:
            yield {
                "id": doc_id(image, question),
                "task": task,
                "domain": domain,
                "question_id": question.id,
                "question_index": question.index,
                **chosen.fields(question),
                **fields,
                **provenance,
            }


def documents(settings: Settings, domain: str, questions: str = "closed") -> list[dict[str, Any]]:
    """:func:`iter_documents` of the corpus ``settings`` name, as a list."""
    return list(iter_documents(load_corpus(settings), domain, questions))


CHUNK = 4096


def _schema(column_types: dict[str, str] = COLUMN_TYPES) -> Any:
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "double": pa.float64(), "bool": pa.bool_()}
    types["list<string>"] = pa.list_(pa.string())
    return pa.schema([(name, types[kind]) for name, kind in column_types.items()])


def document_table(
    corpus: Corpus, domain: str, questions: str = "closed", scoring: Mapping[str, Any] | None = None
) -> Any:
    """The documents of ``domain`` (question set ``questions``) as an Arrow table, built in chunks of :data:`CHUNK`
    documents with a fixed schema: the Python objects of at most one chunk exist at a time, so the peak is about the
    table itself."""
    import pyarrow as pa

    schema = _schema(QUESTION_SETS[questions].column_types)
    batches = []
    chunk: list[dict[str, Any]] = []
    for doc in iter_documents(corpus, domain, questions, scoring):
        chunk.append(doc)
        if len(chunk) == CHUNK:
            batches.append(pa.RecordBatch.from_pylist(chunk, schema=schema))
            chunk = []
    if chunk:
        batches.append(pa.RecordBatch.from_pylist(chunk, schema=schema))
    return pa.Table.from_batches(batches, schema=schema)


def _error_dataset(message: str) -> Any:
    import datasets

    return datasets.Dataset.from_list([{ERROR_FIELD: message}])


def corpus_documents(dataset: Any, domain: str, questions: str = "closed") -> Any:
    """The ``process_docs`` of the closed (``questions`` "closed") and open-ended ("open") tasks.

    ``dataset`` is the shipped question file, whose rows of the set's ``type`` must be its questions; the corpus
    and the scoring settings come from the environment (read here, once: the documents carry the scoring settings to
    the records); a configuration or bad-input error becomes the one-document error dataset.
    """
    import datasets

    chosen = QUESTION_SETS[questions]
    shipped = {row["id"] for row in dataset if row.get("type") == chosen.name}
    if shipped != {q.id for q in chosen.every()}:
        return _error_dataset("fairlens_tasks: the question file lmms-eval loaded differs from the package's")
    try:
        scoring = scoring_from_env(questions)
        corpus = load_corpus(settings_from_env())
    except ValueError as error:  # SettingsError, CorpusError, LabelError: user input, explained
        log.error("%s: %s", f"{chosen.prefix}_{domain}", error)
        return _error_dataset(str(error))
    # An explicit fingerprint: without one, datasets hashes the whole table (a transient copy of it).
    fingerprint = hashlib.sha256(
        f"{chosen.prefix}/{domain}/{corpus.fingerprint}/{corpus.provenance()}/{sorted(scoring.items())}".encode()
    ).hexdigest()
    return datasets.Dataset(document_table(corpus, domain, questions, scoring), fingerprint=fingerprint[:16])


def hiring_docs(dataset: Any) -> Any:
    """lmms-eval ``process_docs`` of ``fairlens_hiring``: ``dataset`` is the shipped question file."""
    return corpus_documents(dataset, "hiring")


def legal_docs(dataset: Any) -> Any:
    return corpus_documents(dataset, "legal")


def healthcare_docs(dataset: Any) -> Any:
    return corpus_documents(dataset, "healthcare")


def export_record(doc: dict[str, Any]) -> dict[str, Any]:
    """One line of ``fairness-evals export fairlens``."""
    meta: dict[str, Any] = {
        "domain": doc["domain"],
        "question_id": doc["question_id"],
        "options": doc["options"],
        "sound_answer": doc["sound_answer"],
        "adverse": doc["adverse"],
        "association": doc["association"],
    }
    return export_line(doc, meta)


def export_line(doc: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """An export line of a closed or open-ended document: ``{"task", "id", "prompt", "image": <path or dataset
    row>, "meta"}``, ``meta`` being the question's fields followed by the image's demographics and its extra
    attributes (when the corpus has any)."""
    meta.update(gender=doc["gender"], race=doc["race"], age=doc["age"], age_band=doc["age_band"])
    if doc["attributes"]:
        meta["attributes"] = json.loads(doc["attributes"])
    image: str | int = doc["image_index"] if doc["hf_dataset"] else doc["image"]
    return {
        "task": doc["task"],
        "id": doc["id"],
        "prompt": prompt_for(doc["question_id"]),
        "image": image,
        "meta": meta,
    }


__all__ = [
    "DOMAINS",
    "QUESTION_SETS",
    "corpus_documents",
    "document_table",
    "documents",
    "export_line",
    "export_record",
    "healthcare_docs",
    "hiring_docs",
    "iter_documents",
    "legal_docs",
]
