"""``fairness-evals export toy`` and ``fairness-evals score toy``, and what the shared commands read of a toy run.

``export`` writes every document as a JSON line ``{"id", "prompt", "meta"}``; ``score`` reads replies made outside the
harness (``{"id", "response"}`` lines, or lm-eval ``--log_samples`` files) and writes the statistics the harness task
reports, by the same :func:`toy_tasks.scoring.compute_metrics`. :func:`detail` is what ``fairness-evals score
<output folder>``, ``check``, ``report`` and ``compare`` read of a harness run; :func:`compare_records` what
``compare`` reads of a ``score`` output.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from fairness_evals import jsonio, run_files
from fairness_evals.detail import Detail
from fairness_evals.notes import Notes
from toy_tasks import documents, scoring

TASK = "toy"
READER = run_files.Reader("toy", re.compile(TASK), "lm-eval")


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", help="write here instead of standard output")


def export(args: argparse.Namespace) -> int:
    lines = [
        {"id": doc["id"], "prompt": scoring.doc_to_text(doc), "meta": {"options": doc["options"]}}
        for doc in documents.documents()
    ]
    jsonio.write_lines(lines, args.out, sort_keys=False)
    READER.note(f"{len(lines)} documents{' to ' + args.out if args.out else ''}")
    return 0


def add_score_arguments(parser: argparse.ArgumentParser) -> None:
    READER.add_arguments(parser)


def _records(files: list[run_files.InputFile], metadata: dict[str, Any]) -> dict[str, list[int]]:
    """Document id -> record of every reply in ``files``; an unknown id or a second reply is an error naming it."""
    docs = {doc["id"]: doc for doc in documents.rows(metadata)}
    answers = jsonio.Answers()
    for line in run_files.read_lines(files):
        given = run_files.response_of(line)
        if given is not None:
            doc_id, reply = given
            if doc_id not in docs:
                raise ValueError(f"{line.where}: id {doc_id!r} is not a toy document")
            record = scoring.readable_record(docs[doc_id], reply)["record"]
        else:
            logged = scoring.logged_record(line.row) if isinstance(line.row, dict) else None
            if logged is None:
                raise ValueError(f'{line.where}: neither {{"id", "response"}} nor an lm-eval sample of the toy task')
            doc_id, record = logged
        answers.add(doc_id, record, line.where, f"document {doc_id!r}")
    answers.check()
    return answers.replies


def score(args: argparse.Namespace) -> int:
    metadata = READER.metadata(args.metadata)
    settings = documents.settings(metadata)
    files = READER.files(args.responses, model=args.model, run=args.run)
    records = _records(files, metadata)
    READER.note_unanswered({TASK: len(documents.documents())}, {TASK: len(documents.documents()) - len(records)})
    metrics: dict[str, Any] = scoring.compute_metrics(list(records.values()), min_coverage=settings["toy_min_coverage"])
    metrics["data_sha256"] = documents.data_sha256()
    READER.write({TASK: metrics}, files, {"metadata": metadata}, args.out)
    return 0


def detail(files: list[run_files.InputFile]) -> Detail:
    """Every statistic, the reason for each null and the provenance of the toy task in one run's samples ``files``,
    from the records the run logged (:func:`toy_tasks.scoring.logged_record`)."""
    records, provenance = run_files.sample_records(
        files,
        lambda task, row: scoring.logged_record(row),
        lambda task: scoring.CARRIER,
        lambda task: "not an lm-eval sample of the toy task (no logged record)",
    )
    out = Detail()
    for task, rows in records.items():
        notes = Notes(task)
        given = provenance.get(task, {})
        out.results[task] = scoring.compute_metrics(rows, min_coverage=given.get("min_coverage"), notes=notes)
        out.nulls[task] = notes.reasons
        out.provenance[task] = {**given, "answers": len(rows)}
    return out


def compare_records(recorded: dict[str, Any], files: list[run_files.InputFile]) -> dict[str, dict[str, Any]]:
    """The records (document id -> record) of a ``score`` output, read again from the ``files`` it recorded."""
    settings = run_files.recorded_settings(recorded)
    return {TASK: _records(files, settings.get("metadata") or {})}
