"""IRIS understanding documents, and the lmms-eval ``process_docs`` entry points.

- ``iris_ifs_und``: one document per corpus image (the occupation question), round-robin over the
  occupation x gender x age x skin cells;
- ``iris_rfs_und``: one document per probe question (:mod:`iris_tasks.probe`, blank image); when
  ``IRIS_CORPUS`` is set, also the ``iris_ifs_und`` question on every corpus image (the SDS half: the paper
  computes SDS from the understanding predictions on the ideal set), interleaved with the probe;
- ``iris_bis_und``: for each counterfactual set, each image, the 12 BIS questions (image-major, so a model
  that keeps document order decodes each image once).

Documents are flat (Arrow-friendly), carry no pixels (a file path or dataset row, and a crop box), and
carry their prompt text and the run's provenance. A configuration or bad-input error becomes a
one-document dataset whose ``doc_to_text`` raises it: lmms-eval retries a failing ``process_docs`` five
times and then reports only "RetryError", while an error from the first ``doc_to_text`` fails the task at
once with the message itself (the FairLens tasks do the same).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from typing import Any

from iris_tasks import embedder
from iris_tasks.corpus import (
    CorpusImage,
    ImageCorpus,
    SteerCorpus,
    image_source,
    load_image_corpus,
    load_steer_corpus,
)
from iris_tasks.probe import probe_design
from iris_tasks.prompts import occupation_prompt, probe_prompt, steer_prompt
from iris_tasks.settings import Settings, settings_from_env
from iris_tasks.vocabulary import data_version, question, questions, task_questions
from metrics.iris import SDS_DEFINITION_VERSION

log = logging.getLogger("fairness_evals.iris")

ERROR_FIELD = "iris_error"
TASKS = ("iris_ifs_und", "iris_rfs_und", "iris_bis_und")

_S, _I, _D = "string", "int64", "double"
COLUMN_TYPES: dict[str, str] = {
    "id": _S, "task": _S, "kind": _S, "question_id": _S, "question_index": _I, "prompt": _S,
    "image": _S, "image_index": _I, "hf_dataset": _S, "hf_split": _S, "hf_image_column": _S, "box": "list<double>",
    "image_id": _S, "image_unit": _I, "set_id": _S, "set_unit": _I, "occupation": _S, "gender": _S, "age": _S,
    "skin_tone": _S, "candidates": "list<string>", "combination_index": _I, "probe_round": _I, "truth": _I,
    # provenance (each task reports its own subset)
    "seed": _I, "sample_fraction": _D, "max_per_cell": _I, "corpus_sha256": _S, "data_version": _I,
    "images_found": _I, "images_loaded": _I, "images_skipped": _I, "images_excluded": _I, "images_eligible": _I,
    "images_sampled": _I, "groups_empty": _I, "sets_found": _I, "sets_skipped": _I, "sets_sampled": _I,
    "dhr_truth_questions": _I, "probe_rounds": _I, "probe_bracket": _I, "mapping_threshold": _D, "embedder": _S,
    "sds_definition": _S, "min_coverage": _D, "documents": _I,
}  # fmt: skip
_DEFAULTS = {_S: "", _I: 0, _D: 0.0, "list<double>": [], "list<string>": []}


def _blank(**fields: Any) -> dict[str, Any]:
    doc = {name: _DEFAULTS[kind] for name, kind in COLUMN_TYPES.items()}
    doc.update(image_index=-1, image_unit=-1, set_unit=-1, combination_index=-1, truth=-1)
    doc.update(fields)
    return doc


def _image_fields(image: CorpusImage, settings: Settings, corpus: str, steer: bool) -> dict[str, Any]:
    entry = image.entry
    source = image_source(entry, settings, corpus, steer)
    fields: dict[str, Any] = {
        "image_id": entry.image_id,
        "image_unit": image.unit,
        "occupation": entry.person.occupation,
        "gender": entry.person.gender,
        "age": entry.person.age,
        "skin_tone": entry.person.skin_tone,
        "box": list(entry.box) if entry.box else [],
    }
    if "path" in source:
        fields["image"] = source["path"]
    else:
        name, split, column, index = source["hf"]
        fields.update(hf_dataset=name, hf_split=split or "", hf_image_column=column, image_index=index)
    return fields


def mapping_provenance(settings: Settings) -> dict[str, Any]:
    return {
        "mapping_threshold": settings.threshold,
        "embedder": embedder.describe(),
        "min_coverage": settings.min_coverage,
    }


def _recognition_docs(corpus: ImageCorpus, task: str, provenance: dict[str, Any]) -> Iterator[dict[str, Any]]:
    item = question("IFS1")
    for image in corpus.images:
        yield _blank(
            id=image.entry.image_id,
            task=task,
            kind="recognition",
            question_id=item.id,
            question_index=item.index,
            prompt=occupation_prompt(),
            **_image_fields(image, corpus.settings, corpus.corpus, steer=False),
            **provenance,
        )


def ifs_documents(corpus: ImageCorpus) -> list[dict[str, Any]]:
    provenance = {**corpus.provenance(), "data_version": data_version(), **mapping_provenance(corpus.settings)}
    return list(_recognition_docs(corpus, "iris_ifs_und", provenance))


def rfs_documents(settings: Settings, corpus: ImageCorpus | None) -> list[dict[str, Any]]:
    provenance: dict[str, Any] = {
        "seed": settings.seed,
        "data_version": data_version(),
        "probe_rounds": settings.probe_rounds,
        "probe_bracket": settings.probe_bracket,
        "sds_definition": SDS_DEFINITION_VERSION,
        **mapping_provenance(settings),
    }
    if corpus is not None:
        provenance.update(corpus.provenance())
    item = question("RFS1")
    probe = [
        _blank(
            id=q.id,
            task="iris_rfs_und",
            kind="probe",
            question_id=item.id,
            question_index=item.index,
            prompt=probe_prompt(q.combination, q.candidates),
            gender=q.combination[0],
            age=q.combination[1],
            skin_tone=q.combination[2],
            candidates=list(q.candidates),
            combination_index=q.combination_index,
            probe_round=q.round,
            image_unit=n,
            **provenance,
        )
        for n, q in enumerate(probe_design(settings.probe_rounds, settings.probe_bracket, settings.seed))
    ]
    recognition = list(_recognition_docs(corpus, "iris_rfs_und", provenance)) if corpus is not None else []
    out: list[dict[str, Any]] = []
    for i in range(max(len(probe), len(recognition))):  # interleaved: a --limit prefix holds both halves
        out.extend(part[i] for part in (probe, recognition) if i < len(part))
    return out


def bis_documents(corpus: SteerCorpus) -> list[dict[str, Any]]:
    provenance = {**corpus.provenance(), "data_version": data_version(), "min_coverage": corpus.settings.min_coverage}
    items = task_questions("iris_bis_und")
    out = []
    for steer_set in corpus.sets:
        for image in steer_set.images:
            truths = dict(image.entry.truths)
            for item in items:
                truth = truths.get(item.key, -1) if item.type == "yes_no" and item.key in corpus.truth_keys else -1
                out.append(
                    _blank(
                        id=f"{image.entry.image_id}/{item.id}",
                        task="iris_bis_und",
                        kind="rating" if item.type == "rating" else "yes_no",
                        question_id=item.id,
                        question_index=item.index,
                        prompt=steer_prompt(item, steer_set.occupation),
                        set_id=steer_set.pair_id,
                        set_unit=steer_set.unit,
                        truth=truth,
                        **_image_fields(image, corpus.settings, corpus.corpus, steer=True),
                        **provenance,
                    )
                )
    return out


def _schema() -> Any:
    import pyarrow as pa

    types = {
        _S: pa.string(),
        _I: pa.int64(),
        _D: pa.float64(),
        "list<double>": pa.list_(pa.float64()),
        "list<string>": pa.list_(pa.string()),
    }
    return pa.schema([(name, types[kind]) for name, kind in COLUMN_TYPES.items()])


def to_dataset(docs: list[dict[str, Any]], label: str) -> Any:
    """An Arrow-backed ``datasets.Dataset`` with a fixed schema and an explicit fingerprint."""
    import datasets
    import pyarrow as pa

    schema = _schema()
    table = pa.Table.from_pylist(docs, schema=schema)
    digest = hashlib.sha256(label.encode())
    for doc in docs:
        digest.update(f"{doc['id']}\t{doc['prompt']}\t{doc['corpus_sha256']}\n".encode())
    return datasets.Dataset(table, fingerprint=digest.hexdigest()[:16])


def _error_dataset(message: str) -> Any:
    import datasets

    return datasets.Dataset.from_list([{ERROR_FIELD: message}])


def _shipped_ok(dataset: Any, task: str) -> bool:
    shipped = {row["id"] for row in dataset if row.get("task") == task}
    return shipped == {q.id for q in questions() if q.task == task}


def build(task: str, settings: Settings) -> list[dict[str, Any]]:
    """The documents of ``task`` for ``settings`` (raises SettingsError / CorpusError on bad input), each carrying
    ``documents``, how many the task's design holds: a run that evaluates fewer (``--limit``) gets no score of the
    design (:mod:`iris_tasks.statistics`, ``DESIGN``)."""
    docs = _build(task, settings)
    for doc in docs:
        doc["documents"] = len(docs)
    return docs


def _build(task: str, settings: Settings) -> list[dict[str, Any]]:
    if task == "iris_ifs_und":
        embedder.check()
        return ifs_documents(load_image_corpus(settings))
    if task == "iris_rfs_und":
        embedder.check()
        corpus = load_image_corpus(settings) if settings.corpus else None
        if corpus is None:
            log.warning(
                "iris_rfs_und: %s is not set, so only the probe runs; the stereotype drift scores and the RFS-Und "
                "score need the occupation answers on a labelled corpus and will be NaN",
                settings.name("corpus"),
            )
        return rfs_documents(settings, corpus)
    if task == "iris_bis_und":
        return bis_documents(load_steer_corpus(settings))
    raise ValueError(f"unknown IRIS task {task!r}")


def _process_docs(dataset: Any, task: str) -> Any:
    if not _shipped_ok(dataset, task):
        return _error_dataset("iris_tasks: the question file lmms-eval loaded differs from the package's")
    try:
        settings = settings_from_env()
        docs = build(task, settings)
    except (ValueError, RuntimeError) as error:  # settings, corpus, labels, embedder: user input, explained
        log.error("%s: %s", task, error)
        return _error_dataset(str(error))
    return to_dataset(docs, f"{task}/{settings}")


def ifs_und_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "iris_ifs_und")


def rfs_und_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "iris_rfs_und")


def bis_und_docs(dataset: Any) -> Any:
    return _process_docs(dataset, "iris_bis_und")


__all__ = ["TASKS", "bis_und_docs", "build", "ifs_und_docs", "rfs_und_docs", "to_dataset"]
