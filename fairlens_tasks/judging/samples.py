"""Reading the answers of a FairLens open-ended lmms-eval run from its ``--log_samples`` files.

lmms-eval 0.7.3 writes ``<output>/<model>/<date>_samples_<task>.jsonl``, one line per document, without the
document itself. Each line of a ``fairlens_open_*`` task holds our ``answers`` payload (document id, the
six-field record, the answer text; :func:`fairlens_tasks.open_scoring.process_results`) and the provenance
items (``"seed": [0]``...), which is all the judge and the metrics need: no corpus options.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairlens_tasks.judging.cache import response_id
from fairlens_tasks.open_scoring import OPEN_RECORD_FIELDS
from fairlens_tasks.scoring import PROVENANCE
from fairness_evals.jsonio import numbered_json_lines
from fairness_evals.scoring_cli import samples_name

#: The open-ended domain tasks, in the order results list them.
TASK_ORDER = ("fairlens_open_hiring", "fairlens_open_legal", "fairlens_open_healthcare")


def open_task(path: Path) -> str | None:
    """The ``fairlens_open_<domain>`` task of a samples file named as a harness names it
    (:func:`fairness_evals.scoring_cli.samples_name`), None for any other name."""
    found = samples_name(path.name)
    return found[1] if found is not None and found[1] in TASK_ORDER else None


@dataclass
class TaskAnswers:
    """The answers of one task, in file order."""

    task: str
    ids: list[str] = field(default_factory=list)
    records: list[list[Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    provenance: dict[str, list[Any]] = field(default_factory=lambda: {name: [] for name in PROVENANCE})


def samples_files(paths: list[str]) -> list[Path]:
    """Each path as given if it is a file, else the ``*_samples_fairlens_open_*.jsonl`` files below the folder."""
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*samples_fairlens_open_*.jsonl") if open_task(p))
            if not found:
                raise ValueError(
                    f"{path}: no lmms-eval samples_fairlens_open_*.jsonl file in this folder (run with --log_samples)"
                )
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"{path}: no such file or folder")
    return files


def _record(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list) or len(value) != len(OPEN_RECORD_FIELDS):
        raise ValueError(f"{where}: the answers record must be a list of {len(OPEN_RECORD_FIELDS)} fields")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value[:5]) or not isinstance(value[5], str):
        raise ValueError(f"{where}: the answers record must hold five integers and an answer id")
    return value


def read_answers(paths: list[str]) -> dict[str, TaskAnswers]:
    """The answers per task in ``paths`` (files or folders); a document answered twice is an error."""
    tasks: dict[str, TaskAnswers] = {}
    seen: dict[tuple[str, str], str] = {}
    for path in samples_files(paths):
        task = open_task(path)
        if task is None:
            raise ValueError(
                f"{path}: not a samples file of a fairlens_open task (expected *_samples_fairlens_open_<domain>.jsonl)"
            )
        answers = tasks.setdefault(task, TaskAnswers(task))
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(f"{path}: cannot read it ({error})") from None
        for where, row in numbered_json_lines(path.name, lines):
            payload = row.get("answers") if isinstance(row, dict) else None
            if not isinstance(payload, dict) or not {"id", "record", "response"} <= set(payload):
                raise ValueError(f"{where}: no fairlens_open answers payload (id, record, response)")
            doc_id, text = str(payload["id"]), payload["response"]
            if not isinstance(text, str):
                raise ValueError(f"{where}: the answer of {doc_id!r} is not text")
            if (task, doc_id) in seen:
                raise ValueError(f"{where}: a second answer for {doc_id!r} of {task} (first at {seen[(task, doc_id)]})")
            seen[(task, doc_id)] = where
            record = _record(payload["record"], where)
            if record[5] != response_id(text):
                raise ValueError(f"{where}: the answer id {record[5]} of {doc_id!r} does not match its text")
            answers.ids.append(doc_id)
            answers.records.append(record)
            answers.texts.append(text)
            for name in PROVENANCE:
                value = row.get(name)
                answers.provenance[name].append(value if isinstance(value, list) else [value])
    empty = [task for task, answers in tasks.items() if not answers.ids]
    if empty:
        raise ValueError(f"no answers for {', '.join(empty)} in {', '.join(paths)}")
    return tasks
