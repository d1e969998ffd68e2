"""``fairness-evals export fairlens`` and ``fairness-evals score fairlens``.

``export`` writes one JSON line per (image, question), in the harness's document order::

    {"task", "id", "prompt", "image": <path or dataset row>, "meta": {"domain", "question_id", "options",
     "sound_answer", "adverse", "association", "gender", "race", "age", "age_band"[, "attributes"]}}

``score`` reads replies (lines ``{"id", "response"}``, or lmms-eval ``--log_samples`` files or folders) and prints
``{task: {metric: value}}`` with exactly the metrics, names and numbers the harness reports (the same
:func:`fairlens_tasks.scoring.compute_metrics`), plus the ``fairlens`` group roll-ups when all three
domains were answered. Both take the corpus settings as options (:mod:`fairlens_tasks.settings`).
User errors raise ``ValueError`` with one line naming the file and item.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fairlens_tasks.settings import CLI, DEFAULT_SAMPLE_FRACTION, DEFAULT_SEED, Settings, build_settings
from fairness_evals import jsonio
from fairness_evals.jsonio import response_lines, sample_reply, write_text


def _add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", required=True, help="UTKFace folder, CSV/JSON-lines manifest, or hf:NAME")
    parser.add_argument(
        "--sample-fraction", type=float, default=DEFAULT_SAMPLE_FRACTION,
        help=f"stratified sample fraction in (0, 1] (default {DEFAULT_SAMPLE_FRACTION}, the paper's 10%%)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"sampling seed (default {DEFAULT_SEED})")
    parser.add_argument("--image-list", help="FairLens images_metadata.json: evaluate exactly these UTKFace images")
    parser.add_argument("--skip-bad-input", action="store_true", help="skip and count bad items instead of stopping")
    parser.add_argument("--hf-split", help="split of an hf: corpus (default: the only split, else test)")
    parser.add_argument("--hf-columns", help='column mapping of an hf: corpus, e.g. "image=img,gender=sex,age=years"')
    parser.add_argument(
        "--label-map", help='JSON text or file mapping label values, e.g. {"race": {"East Asian": "Asian"}}'
    )
    parser.add_argument(
        "--domain", action="append", choices=["hiring", "legal", "healthcare"],
        help="only this domain (repeatable; default: all three)",
    )  # fmt: skip


def _settings(args: argparse.Namespace) -> Settings:
    return build_settings(
        {
            "corpus": args.corpus,
            "sample_fraction": args.sample_fraction,
            "seed": args.seed,
            "image_list": args.image_list,
            "on_bad_input": bool(args.skip_bad_input),
            "hf_split": args.hf_split,
            "hf_columns": args.hf_columns,
            "label_map": args.label_map,
        },
        CLI,
    )


def _domains(args: argparse.Namespace) -> list[str]:
    from fairlens_tasks.questions import DOMAINS

    chosen = args.domain or list(DOMAINS)
    return [d for d in DOMAINS if d in chosen]


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    _add_corpus_arguments(parser)
    parser.add_argument("--out", help="write here instead of standard output")


def export(args: argparse.Namespace) -> int:
    from fairlens_tasks.corpus import load_corpus
    from fairlens_tasks.documents import export_record, iter_documents

    corpus = load_corpus(_settings(args))
    lines = 0
    handle = open(args.out, "w", encoding="utf-8", newline="\n") if args.out else sys.stdout  # noqa: SIM115
    try:
        for domain in _domains(args):
            for doc in iter_documents(corpus, domain):
                handle.write(json.dumps(export_record(doc), ensure_ascii=False) + "\n")
                lines += 1
    finally:
        if args.out:
            handle.close()
    print(
        f"fairlens: {lines} documents from {corpus.sampled} images (found {corpus.found}, loaded {corpus.loaded}, "
        f"skipped {corpus.skipped}; corpus {corpus.fingerprint}){' to ' + args.out if args.out else ''}",
        file=sys.stderr,
    )
    return 0


def add_score_arguments(parser: argparse.ArgumentParser) -> None:
    _add_corpus_arguments(parser)
    parser.add_argument(
        "--responses", action="append", required=True,
        help='JSON lines {"id", "response"}, an lmms-eval samples_fairlens_*.jsonl file, or a folder of them (repeatable)',
    )  # fmt: skip
    parser.add_argument("--out", help="write the JSON here instead of standard output")


_SAMPLES_TASK = re.compile(r"samples_(fairlens_[a-z]+)")


def read_responses(path: Path, docs_by_task: dict[str, list[dict[str, Any]]]) -> Iterator[tuple[str, str, Any]]:
    """(where, document id, reply) for each line of ``path`` (our format or lmms-eval samples)."""
    task_match = _SAMPLES_TASK.search(path.name)
    for where, row in response_lines(path):
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected a JSON object")
        if "id" in row and "response" in row:
            yield where, str(row["id"]), row["response"]
            continue
        answer = row.get("fairlens_answer")
        if isinstance(answer, dict) and answer.get("id"):
            yield where, str(answer["id"]), sample_reply(row)
            continue
        if "doc_id" in row and task_match and task_match.group(1) in docs_by_task:
            docs = docs_by_task[task_match.group(1)]
            index = int(row["doc_id"])
            if not 0 <= index < len(docs):
                raise ValueError(
                    f"{where}: doc_id {index} is beyond the {len(docs)} documents of {task_match.group(1)}"
                )
            yield where, docs[index]["id"], sample_reply(row)
            continue
        raise ValueError(f'{where}: neither {{"id", "response"}} nor an lmms-eval FairLens sample')


def response_files(names: list[str]) -> list[Path]:
    """The files to read: each name as given, or for a folder its lmms-eval ``*_samples_fairlens_*.jsonl`` files."""
    return jsonio.response_files(names, "fairlens_")


def score_documents(
    docs_by_task: dict[str, list[dict[str, Any]]], replies: dict[str, Any]
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """Metrics per task for the documents that have a reply; also the number of documents left unanswered."""
    from fairlens_tasks.normalise import normalise
    from fairlens_tasks.scoring import (
        PROVENANCE,
        ROLLUPS,
        compute_metrics,
        model_level_mean,
        record_for,
    )
    from fairness_evals.aggregation import provenance_value

    out: dict[str, dict[str, Any]] = {}
    missing: dict[str, int] = {}
    for task, docs in docs_by_task.items():
        answered = [doc for doc in docs if doc["id"] in replies]
        missing[task] = len(docs) - len(answered)
        if not answered:
            continue
        records = [record_for(doc, normalise(replies[doc["id"]], doc["options"])) for doc in answered]
        metrics: dict[str, Any] = dict(compute_metrics(records, task=task))
        for name in PROVENANCE:
            metrics[name] = provenance_value(name, [[doc[name]] for doc in answered], task=task)
        out[task] = metrics
    domain_tasks = [t for t in docs_by_task if t in out]
    if len(domain_tasks) == 3:
        out["fairlens"] = {
            name: model_level_mean([out[t][name] for t in domain_tasks], [0] * 3, False) for name in ROLLUPS
        }
    return out, missing


def score(args: argparse.Namespace) -> int:
    from fairlens_tasks.corpus import load_corpus
    from fairlens_tasks.documents import iter_documents, task_name

    corpus = load_corpus(_settings(args))
    docs_by_task = {task_name(d): list(iter_documents(corpus, d)) for d in _domains(args)}
    known = {doc["id"] for docs in docs_by_task.values() for doc in docs}
    replies: dict[str, Any] = {}
    seen_at: dict[str, str] = {}
    for path in response_files(args.responses):
        for where, doc_id, reply in read_responses(path, docs_by_task):
            if doc_id not in known:
                raise ValueError(f"{where}: id {doc_id!r} is not a document of this corpus and these settings")
            if doc_id in replies:
                raise ValueError(f"{where}: a second response for {doc_id!r} (first at {seen_at[doc_id]})")
            replies[doc_id] = reply
            seen_at[doc_id] = where
    if not replies:
        raise ValueError(f"no responses in {', '.join(args.responses)}")
    results, missing = score_documents(docs_by_task, replies)
    for task, count in missing.items():
        if count:
            total = len(docs_by_task[task])
            print(
                f"fairlens: {task}: scored {total - count} of {total} documents ({count} without a response)",
                file=sys.stderr,
            )
    write_text(json.dumps(results, indent=2) + "\n", args.out)
    return 0
