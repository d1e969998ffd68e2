"""``fairness-evals export fact_or_fair`` and ``fairness-evals score fact_or_fair``.

Export writes every document as one JSON line, ``{"task", "id", "prompt", "meta"}``, in the order the
harness builds them (objective, then the four subjective contexts). Score reads replies produced outside
the harness and reports exactly the metrics the harness tasks report, computed by the same
:func:`fact_fair_tasks.scoring.compute_metrics`.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from fact_fair_tasks.documents import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    document_settings,
    documents_for,
    scoring_settings,
)
from fact_fair_tasks.items import CONTEXTS, statistics
from fairness_evals import jsonio, run_files
from fairness_evals.detail import Detail
from fairness_evals.generation.layout import add_layout_argument, announce, score_command, write_layout
from fairness_evals.jsonio import write_lines

KINDS = ("objective", *CONTEXTS)


def _add_document_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed", type=int,
        help=f"document seed (default: the metadata's fact_or_fair_seed, else {DEFAULT_SEED})",
    )  # fmt: skip
    parser.add_argument(
        "--draws", type=int,
        help=f"profile draws per subjective scenario (default: the metadata's fact_or_fair_draws, else "
        f"{DEFAULT_DRAWS}; the lite tasks use 10)",
    )  # fmt: skip
    parser.add_argument(
        "--tasks", default=",".join(KINDS),
        help="comma-separated subset of: objective," + ",".join(CONTEXTS),
    )  # fmt: skip


def _kinds(value: str) -> list[str]:
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ValueError(f"--tasks: unknown {', '.join(unknown) or '(empty)'}; choose from {', '.join(KINDS)}")
    return kinds


def export_meta(doc: dict[str, Any]) -> dict[str, Any]:
    if doc.get("context") is None:
        return {k: doc[k] for k in ("statistic", "axis", "target", "options", "answer")}
    return {
        "statistic": doc["statistic"],
        "target": doc["target"],
        "context": doc["context"],
        "options": [{"gender": o["gender"], "race": o["race"]} for o in doc["options"]],
        "background": dict(doc["identity"]) if doc["identity_in_prompt"] else None,
    }


def export_records(
    kinds: list[str], seed: int, draws: int, metadata: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    from fact_fair_tasks import scoring

    return [
        {"task": doc["task"], "id": doc["id"], "prompt": scoring.doc_to_text(doc), "meta": export_meta(doc)}
        for kind in kinds
        for doc in documents_for(kind, seed=seed, draws=draws, metadata=metadata)
    ]


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    _add_document_arguments(parser)
    parser.add_argument(
        "--metadata", metavar="JSON",
        help="task-metadata settings as a JSON object (or a file holding one), e.g. "
        "'{\"fact_or_fair_conventions\": \"released\"}' for the released documents",
    )  # fmt: skip
    parser.add_argument("--out", help="write to this file instead of standard output")
    add_layout_argument(parser, instead_of="the LLM documents", tasks="fact_or_fair_t2i_objective and _subjective")


def export_t2i_layout(folder: str) -> dict[str, int]:
    """Create the T2I image layout (:mod:`fairness_evals.generation.layout`) for both Fact-or-Fair T2I tasks."""
    from fact_fair_tasks.t2i_documents import IMAGES_PER_PROMPT, all_documents

    return write_layout(
        Path(folder), all_documents(), title="Fact-or-Fair text-to-image",
        score_command=score_command("fact_or_fair_t2i"), images_per_prompt=IMAGES_PER_PROMPT,
        images_per_prompt_source="the paper's number",
        meta_fields=("statistic", "target", "truth_gender", "truth_race"),
        notes=(
            "The paper counts every detected face: several people in one image each count; an image without a "
            "face is left out (and counted).",
        ),
    )  # fmt: skip


def export(args: argparse.Namespace) -> int:
    if args.t2i_layout:
        return announce(PROG, export_t2i_layout(args.t2i_layout), args.t2i_layout)
    metadata, seed, draws = _settings(args)
    write_lines(export_records(_kinds(args.tasks), seed, draws, metadata), args.out)
    return 0


def add_score_arguments(parser: argparse.ArgumentParser) -> None:
    READER.add_arguments(parser)
    parser.add_argument(
        "--by-statistic", action="store_true",
        help='also score each statistic on its own: entries "<task>/<statistic slug>", e.g. fact_or_fair_objective/employment_rate',
    )  # fmt: skip
    _add_document_arguments(parser)


#: The tasks ``score`` reads from samples folders: the LLM tasks (not the text-to-image ones, scored by lmms-eval).
SAMPLE_TASKS = re.compile(
    r"fact_or_fair_(?:objective|subjective_(?:" + "|".join(CONTEXTS) + r"))(?:_lite|_mc)?"
)  # fmt: skip
PROG = "fact_or_fair"
READER = run_files.Reader(PROG, SAMPLE_TASKS, "lm-eval")


def _preview(ids: list[str]) -> str:
    shown = ", ".join(ids[:5])
    return f"{shown}, ..." if len(ids) > 5 else shown


def _settings(args: argparse.Namespace) -> tuple[dict[str, Any], int, int]:
    """``--metadata`` (every key a setting: :func:`fact_fair_tasks.documents.scoring_settings`) and the document
    settings: ``--seed`` / ``--draws``, else the metadata's ``fact_or_fair_seed`` / ``fact_or_fair_draws`` (the task
    metadata keys), else the defaults."""
    metadata = READER.metadata(getattr(args, "metadata", None))
    given = {key: getattr(args, name) for name, key in (("seed", "fact_or_fair_seed"), ("draws", "fact_or_fair_draws"))}
    try:
        scoring_settings(metadata)
        seed, draws = document_settings(metadata | {key: value for key, value in given.items() if value is not None})
    except ValueError as error:
        raise ValueError(f"--metadata: {error}") from None
    return metadata, seed, draws


def _records_from_responses(
    lines: list[run_files.Line], kinds: list[str], seed: int, draws: int, metadata: dict[str, Any]
) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]], jsonio.Answers]:
    """Records per task (document id -> record, in reply order) from ``{"id", "response"}`` lines; unknown ids, and
    documents of an answered task without a reply, are errors naming them."""
    from fact_fair_tasks import scoring

    answers = jsonio.Answers()
    for line in lines:
        found = run_files.response_of(line)
        if found is None:
            raise ValueError(f'{line.where}: each line needs "id" and "response" (a JSON object)')
        doc_id, response = found
        answers.add(doc_id, response, line.where, repr(doc_id))
    answers.check()
    # Build only the documents of the kinds answered (ids start with their kind): a file of the 198 objective
    # replies must not pay for the 45,600 subjective documents.
    prefixes = {key.split("/", 1)[0] for key in answers.replies}
    wanted = [k for k in kinds if k in prefixes] if prefixes <= set(KINDS) else kinds
    docs = {doc["id"]: doc for kind in wanted for doc in documents_for(kind, seed=seed, draws=draws, metadata=metadata)}
    unknown = [i for i in answers.replies if i not in docs]
    if unknown:
        first = answers.where[unknown[0]]
        raise ValueError(
            f"{first}: {len(unknown)} unknown ids (not in the documents of {', '.join(kinds)} for seed {seed}, "
            f"draws {draws}): {_preview(unknown)}"
        )
    answered_tasks = {docs[i]["task"] for i in answers.replies}
    missing = [i for i, doc in docs.items() if doc["task"] in answered_tasks and i not in answers.replies]
    if missing:
        raise ValueError(
            f"{lines[0].file.path}: {len(missing)} documents have no response, e.g. {_preview(missing)} "
            "(score answers to every document of a task, or use the --draws the documents were exported with)"
        )
    records: dict[str, dict[str, Any]] = defaultdict(dict)
    shas: dict[str, list[str]] = defaultdict(list)
    for key, reply in answers.replies.items():
        doc = docs[key]
        records[doc["task"]][key] = scoring.record_for(doc, scoring.parse_reply(doc, reply))
        shas[doc["task"]].append(doc["doc_sha"])
    return records, shas, answers


def _records_from_samples(
    lines: list[run_files.Line],
) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]], set[int], jsonio.Answers]:
    """Records per task (document id -> record, in file order) from lm-eval ``--log_samples`` lines (each carries
    its document), as the harness made them."""
    from fact_fair_tasks import scoring

    answers = jsonio.Answers()
    records: dict[str, dict[str, Any]] = defaultdict(dict)
    shas: dict[str, list[str]] = defaultdict(list)
    seeds: set[int] = set()
    for line in lines:
        task = line.file.task or ""
        sample, doc = line.row, _sample_document(line, task)
        answers.add((task, str(doc["id"])), None, line.where, f"{doc['id']!r} of {task}")
        if not task.endswith("_mc"):  # a reply that is not text is refused as in a responses file
            logged = sample.get("filtered_resps") or sample.get("resps") or [None]
            reply = logged[0] if isinstance(logged, list) else logged
            response = run_files.sample_text(reply, line.where, str(doc["id"]))
        try:
            if task.endswith("_mc"):
                record = scoring.process_results_mc(doc, sample.get("filtered_resps") or [])
                records[task][str(doc["id"])] = record[scoring.CARRIER].record
            else:
                records[task][str(doc["id"])] = scoring.record_for(doc, scoring.parse_reply(doc, response))
        except (KeyError, IndexError, TypeError, ValueError, OverflowError) as error:
            raise ValueError(
                f"{line.where}: the sample of {doc['id']!r} cannot be scored as a {task} document "
                f"({type(error).__name__}: {error})"
            ) from None
        run_files.checked_record(records[task][str(doc["id"])], line.where, str(doc["id"]))
        shas[task].append(doc["doc_sha"])
        seeds.add(doc["seed"])
    answers.check()
    return records, shas, seeds, answers


#: The fields of a document that its record is made of (:func:`fact_fair_tasks.scoring.record_for`), besides its
#: id, ``doc_sha`` and ``seed``.
_RECORD_FIELDS = {
    "objective": ("statistic_index", "axis", "target", "options", "answer"),
    "subjective": ("statistic_index", "target", "options", "identity", "truth_gender", "truth_race", "positive"),
}


def _sample_document(line: run_files.Line, task: str) -> dict[str, Any]:
    """The document of an lm-eval sample of ``task`` (lm-eval logs it under ``doc``), or an error naming the line:
    a sample must carry a Fact-or-Fair document of that task, with its ``doc_sha``, its ``seed`` (a whole number)
    and the fields its record is made of."""
    sample = line.row
    doc = sample.get("doc") if isinstance(sample, dict) else None
    if not isinstance(doc, dict) or "id" not in doc:
        raise ValueError(f"{line.where}: not an lm-eval sample of a fact_or_fair task (no doc.id)")
    name, expected = repr(doc["id"]), re.sub(r"_(?:lite|mc)$", "", task)
    if doc.get("task") not in (task, expected):  # a _lite or _mc task's documents name it (their kind's before)
        raise ValueError(
            f"{line.where}: doc {name} is not a document of {task} (its task is {doc.get('task')!r}); score the "
            "samples files lm-eval --log_samples wrote, under their own names"
        )
    fields = _RECORD_FIELDS["objective" if doc.get("context") is None else "subjective"]
    missing = [key for key in ("doc_sha", "seed", *fields) if key not in doc]
    if missing:
        raise ValueError(
            f"{line.where}: doc {name} has no {', '.join(missing)}: not a Fact-or-Fair document as lm-eval "
            "--log_samples writes it"
        )
    if not isinstance(doc["doc_sha"], str) or not doc["doc_sha"]:
        raise ValueError(f"{line.where}: doc {name} has doc_sha {doc['doc_sha']!r}, not a document hash")
    if isinstance(doc["seed"], bool) or not isinstance(doc["seed"], int):
        raise ValueError(f"{line.where}: doc {name} has seed {doc['seed']!r}, not a whole number")
    from fact_fair_tasks.scoring import min_coverage_of

    try:
        min_coverage_of(doc)
    except ValueError:
        raise ValueError(
            f"{line.where}: doc {name} has min_coverage {doc['min_coverage']!r}, not a share in [0, 1]"
        ) from None
    return doc


def _is_t2i(task: str | None) -> bool:
    return (task or "").startswith("fact_or_fair_t2i")


def detail(files: list[run_files.InputFile]) -> Detail:
    """Every statistic, the reason for each null and the provenance of the Fact-or-Fair tasks of one run's samples
    ``files`` (:mod:`fairness_evals.detail`): each reply parsed again against the document lm-eval logged with it,
    and scored by :func:`fact_fair_tasks.scoring.compute_metrics`, as the harness did; the text-to-image tasks'
    lmms-eval lines by :func:`fact_fair_tasks.t2i_scoring.score_samples`."""
    from fact_fair_tasks import scoring, t2i_scoring
    from fairness_evals.detail import samples_detail
    from fairness_evals.notes import Notes

    out = samples_detail([f for f in files if _is_t2i(f.task)], t2i_scoring.score_samples)
    files = [f for f in files if not _is_t2i(f.task)]
    if not files:
        return out
    lines = list(run_files.read_lines(files))
    records, shas, _, _ = _records_from_samples(lines)
    docs = {}
    for line in lines:
        docs.setdefault(line.file.task or "", line.row["doc"])
    for task, by_id in records.items():
        notes = Notes(task)
        out.results[task] = scoring.compute_metrics(list(by_id.values()), task=task, notes=notes)
        out.nulls[task] = notes.reasons
        doc = docs[task]
        out.provenance[task] = {
            "seed": doc["seed"], "data_version": doc.get("data_version"), "conventions": doc.get("conventions"),
            "min_coverage": doc.get("min_coverage"), "documents": len(by_id),
            "documents_sha256": scoring.documents_sha256(shas[task]),
        }  # fmt: skip
    return out


def _with_provenance(
    records: dict[str, dict[str, Any]], shas: dict[str, list[str]], seed: int, metadata: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    from fact_fair_tasks import scoring

    out: dict[str, dict[str, Any]] = {}
    for task in records:
        rows = list(records[task].values())
        metrics: dict[str, Any] = dict(scoring.compute_metrics(rows, task=task, metadata=metadata))
        metrics["seed"] = seed
        metrics["documents_sha256"] = scoring.documents_sha256(shas[task])
        out[task] = metrics
    return out


def by_statistic(records: dict[str, list[Any]], metadata: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Every task's metrics on each statistic's records alone, keyed "<task>/<statistic slug>" (the record field
    ``statistic`` is the statistic's index; a statistic with no records of a task is left out). S_KLD of one statistic is
    exp(-KL) of its own highest/lowest pair; the entropy and S_fact are over its own cells."""
    from fact_fair_tasks import scoring

    names = [s.slug for s in statistics()]
    out: dict[str, dict[str, Any]] = {}
    for task, rows in records.items():
        grouped: dict[int, list[Any]] = defaultdict(list)
        for row in rows:
            grouped[int(row[scoring._F["statistic"]])].append(row)
        for index in sorted(grouped):
            name = f"{task}/{names[index]}"
            out[name] = scoring.compute_metrics(grouped[index], task=name, metadata=metadata, design=[index])
    return out


def _collect(
    files: list[run_files.InputFile], kinds: list[str], seed: int, draws: int, metadata: dict[str, Any]
) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]], int]:
    """Every task's records (document id -> record), its documents' hashes and the documents' seed (-1 when
    several), from responses and samples ``files`` with these settings: the one path of ``score`` and ``compare``."""
    lines = list(run_files.read_lines(files))
    plain = [line for line in lines if not line.file.is_samples]
    harness = [line for line in lines if line.file.is_samples]
    records: dict[str, dict[str, Any]] = {}
    shas: dict[str, list[str]] = {}
    seeds: set[int] = set()
    if harness:
        records, shas, seeds, _ = _records_from_samples(harness)
    if plain:
        more, more_shas, _ = _records_from_responses(plain, kinds, seed, draws, metadata)
        both = sorted(set(more) & set(records))
        if both:
            raise ValueError(
                f"{plain[0].file.path} and the samples files both answer {', '.join(both)}: score one or the other"
            )
        records, shas = {**records, **more}, {**shas, **more_shas}
        seeds.add(seed)
    return records, shas, seeds.pop() if len(seeds) == 1 else -1


def score(args: argparse.Namespace) -> int:
    metadata, seed, draws = _settings(args)
    kinds = _kinds(args.tasks)
    files = READER.files(args.responses, model=args.model, run=args.run)
    records, shas, documents_seed = _collect(files, kinds, seed, draws, metadata)
    scores = _with_provenance(records, shas, documents_seed, metadata)
    for task, rows in records.items():
        parsed = scores[task].get("parsed")
        shown = f", {parsed:.0f} parsed" if isinstance(parsed, float) and parsed == parsed else ""
        READER.note(f"{task}: scored {len(rows)} documents{shown}")
    if getattr(args, "by_statistic", False):
        scores.update(by_statistic({task: list(rows.values()) for task, rows in records.items()}, metadata))
    READER.write(scores, files, {"seed": seed, "draws": draws, "tasks": kinds, "metadata": metadata}, args.out)
    return 0


def compare_records(recorded: dict[str, Any], files: list[run_files.InputFile]) -> dict[str, dict[str, Any]]:
    """Every task's records (document id -> record) of a score output, rebuilt from its recorded ``files`` and
    settings by the path ``score`` took (:func:`_collect`), for ``fairness-evals compare``."""
    settings = run_files.recorded_settings(recorded)
    metadata = settings.get("metadata") or {}
    seed, draws, kinds = settings.get("seed", DEFAULT_SEED), settings.get("draws", DEFAULT_DRAWS), settings.get("tasks")
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (seed, draws))
    listed = kinds is None or (isinstance(kinds, list) and all(isinstance(k, str) for k in kinds))
    if not isinstance(metadata, dict) or not whole or not listed:
        raise ValueError(f"{run_files.SCORE_INPUTS}: malformed settings {settings!r}")
    kinds = _kinds(",".join(kinds)) if kinds is not None else list(KINDS)
    records, _, _ = _collect(files, kinds, seed, draws, metadata)
    return records
