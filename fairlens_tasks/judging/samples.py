"""Reading the answers of a FairLens open-ended lmms-eval run from its ``--log_samples`` files.

lmms-eval 0.7.3 writes ``<output>/<model>/<date>_samples_<task>.jsonl``, one line per document, without the
document itself. Each line of a ``fairlens_open_*`` task holds our readable record (document id, the six-field record,
the answer text and the corpus provenance, under the carrier metric; a task version 2 line, its ``answers`` payload and
provenance items: :func:`fairlens_tasks.open_scoring.logged_answer`), which is all the judge and the metrics need: no
corpus options. Which files, and the task
of each, come from the shared reader (:func:`fairness_evals.run_files.input_files`, which names a samples file by
:func:`~fairness_evals.run_files.samples_name`): this module has no file-name rule of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairlens_tasks import open_scoring
from fairlens_tasks.judging.cache import response_id
from fairlens_tasks.open_scoring import CARRIER, OPEN_RECORD_FIELDS, logged_answer
from fairlens_tasks.scoring import PROVENANCE
from fairlens_tasks.settings import SCORING_KEYS
from fairness_evals.jsonio import OneRun, numbered_json_lines

#: The open-ended domain tasks, in the order results list them.
TASK_ORDER = ("fairlens_open_hiring", "fairlens_open_legal", "fairlens_open_healthcare")


@dataclass
class TaskAnswers:
    """The answers of one task, in file order, with the provenance of each and the scoring settings its run recorded
    (:func:`fairlens_tasks.settings.recorded` reads them)."""

    task: str
    ids: list[str] = field(default_factory=list)
    records: list[list[Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    provenance: dict[str, list[Any]] = field(default_factory=lambda: {name: [] for name in PROVENANCE})
    scoring: list[dict[str, Any]] = field(default_factory=list)


def _record(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list) or len(value) != len(OPEN_RECORD_FIELDS):
        raise ValueError(f"{where}: the answers record must be a list of {len(OPEN_RECORD_FIELDS)} fields")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value[:5]) or not isinstance(value[5], str):
        raise ValueError(f"{where}: the answers record must hold five integers and an answer id")
    return value


def read_answers(files: Iterable[tuple[Path, str]]) -> dict[str, TaskAnswers]:
    """The answers per task of the samples ``files``, each given with its task (as the shared reader names a samples
    file: :func:`fairness_evals.run_files.input_files`, by :func:`~fairness_evals.run_files.samples_name`); a
    document answered twice, and the answers of one task from two runs (:class:`~fairness_evals.jsonio.OneRun`),
    are errors."""
    tasks: dict[str, TaskAnswers] = {}
    seen: dict[tuple[str, str], str] = {}
    runs = OneRun()
    files = list(files)
    for path, task in files:
        if task not in TASK_ORDER:
            raise ValueError(f"{path}: not a samples file of a fairlens_open task ({task})")
        answers = tasks.setdefault(task, TaskAnswers(task))
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(f"{path}: cannot read it ({error})") from None
        for where, row in numbered_json_lines(path.name, lines):
            runs.add(task, row, where)
            logged = logged_answer(row) if isinstance(row, dict) else None
            if logged is None:
                raise ValueError(f"{where}: no fairlens_open answer record (id, record, response) under {CARRIER}")
            doc_id, logged_record, text, provenance = logged
            if not isinstance(text, str):
                raise ValueError(f"{where}: the answer of {doc_id!r} is not text")
            if (task, doc_id) in seen:
                raise ValueError(f"{where}: a second answer for {doc_id!r} of {task} (first at {seen[(task, doc_id)]})")
            seen[(task, doc_id)] = where
            record = _record(logged_record, where)
            answer_id = record[open_scoring._F["response_id"]]
            if answer_id != response_id(text):
                raise ValueError(f"{where}: the answer id {answer_id} of {doc_id!r} does not match its text")
            answers.ids.append(doc_id)
            answers.records.append(record)
            answers.texts.append(text)
            for name in PROVENANCE:
                answers.provenance[name].append([provenance.get(name)])
            answers.scoring.append({key: provenance.get(key) for key in SCORING_KEYS["open"]})
    empty = [task for task, answers in tasks.items() if not answers.ids]
    if empty:
        raise ValueError(f"no answers for {', '.join(empty)} in {', '.join(str(path) for path, _ in files)}")
    return tasks
