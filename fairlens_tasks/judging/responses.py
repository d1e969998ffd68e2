"""Open-ended answers given as a responses file (``{"id", "response"}`` lines), not as lmms-eval samples.

``fairness-evals export fairlens`` writes the open-ended documents too (:func:`fairlens_tasks.open_documents.
open_export_records`); a model run outside lmms-eval answers them and writes one JSON line per answer,
``{"id": <document id>, "response": <text>}``, the format ``fairness-evals score`` reads. The judge then needs
the documents again (the ids name an image and a question; the groups and bootstrap unit come from the corpus),
so these functions take the corpus the export was made from, with the same settings.

:func:`answers_from_replies` is the core (already-read replies, ``{id: reply}``); :func:`answers_from_responses`
reads files. Both return :class:`~fairlens_tasks.judging.samples.TaskAnswers` per task, exactly what
:func:`~fairlens_tasks.judging.samples.read_answers` returns for samples files, so the judging and the metrics
(:func:`fairlens_tasks.judging.results.judged_results`) are the same for both routes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fairlens_tasks.corpus import Corpus
from fairlens_tasks.judging.samples import TaskAnswers
from fairlens_tasks.open_documents import iter_open_documents, task_name
from fairlens_tasks.open_scoring import answer_text, record_for
from fairlens_tasks.questions import DOMAINS
from fairlens_tasks.scoring import PROVENANCE
from fairness_evals.jsonio import Answers, response_lines

__all__ = ["answers_from_replies", "answers_from_responses", "open_documents_by_task"]


def open_documents_by_task(corpus: Corpus, domains: Iterable[str] = DOMAINS) -> dict[str, list[dict[str, Any]]]:
    """The open-ended documents of ``domains`` per task (``fairlens_open_<domain>``), in document order."""
    chosen = set(domains)
    unknown = chosen - set(DOMAINS)
    if unknown:
        raise ValueError(f"unknown FairLens domain(s) {', '.join(sorted(unknown))}; expected {', '.join(DOMAINS)}")
    return {task_name(d): list(iter_open_documents(corpus, d)) for d in DOMAINS if d in chosen}


def answers_from_replies(
    docs_by_task: Mapping[str, Sequence[dict[str, Any]]], replies: Mapping[str, Any]
) -> dict[str, TaskAnswers]:
    """The answers per task for the documents that have a reply (``replies``: document id -> reply).

    A reply is read as the harness reads one (:func:`fairlens_tasks.open_scoring.answer_text`: ``None`` is a
    blank answer, a list gives its first element). Documents without a reply are left out (the caller reports
    how many); tasks without any reply are left out. Ids that are not documents of ``docs_by_task`` are ignored
    here: the reader decides whether they are an error (closed-ended ids in a combined file are not).
    """
    out: dict[str, TaskAnswers] = {}
    for task, docs in docs_by_task.items():
        answers = TaskAnswers(task)
        for doc in docs:
            if doc["id"] not in replies:
                continue
            text = answer_text([replies[doc["id"]]])
            answers.ids.append(doc["id"])
            answers.records.append(record_for(doc, text))
            answers.texts.append(text)
            for name in PROVENANCE:
                answers.provenance[name].append([doc.get(name)])
        if answers.ids:
            out[task] = answers
    return out


def answers_from_responses(
    paths: Sequence[str | Path], corpus: Corpus, *, domains: Iterable[str] = DOMAINS, closed_ids: Iterable[str] = ()
) -> dict[str, TaskAnswers]:
    """The open-ended answers in responses files (``{"id", "response"}`` JSON lines) for ``corpus``.

    Every line must be a JSON object with ``id`` and ``response`` (a string, or null for no answer). An id that
    is an open-ended document of ``corpus`` and ``domains`` is taken; an id in ``closed_ids`` (closed-ended
    answers in the same file) is skipped; any other id, a second answer for one id, or a malformed line is a
    ``ValueError`` naming the file and line (and the first line, for a duplicate). No answer at all is an error.
    """
    docs_by_task = open_documents_by_task(corpus, domains)
    known = {doc["id"] for docs in docs_by_task.values() for doc in docs}
    skip = set(closed_ids)
    replies = Answers()
    for name in paths:
        for where, row in response_lines(Path(name)):
            if not isinstance(row, dict) or "id" not in row or "response" not in row:
                raise ValueError(f'{where}: expected a JSON object {{"id", "response"}}')
            doc_id, reply = str(row["id"]), row["response"]
            if doc_id in skip:
                continue
            if doc_id not in known:
                raise ValueError(
                    f"{where}: id {doc_id!r} is not an open-ended document of this corpus and these settings"
                )
            if reply is not None and not isinstance(reply, str):
                raise ValueError(f"{where}: the response of {doc_id!r} is {type(reply).__name__}, not text")
            replies.add(doc_id, reply, where)
    replies.check()
    if not replies:
        raise ValueError(f"no open-ended responses in {', '.join(map(str, paths))}")
    return answers_from_replies(docs_by_task, replies.replies)
