"""``fairness-evals export fact_or_fair`` and ``fairness-evals score fact_or_fair``.

Export writes every document as one JSON line, ``{"task", "id", "prompt", "meta"}``, in the order the
harness builds them (objective, then the four subjective contexts). Score reads replies produced outside
the harness and reports exactly the metrics the harness tasks report, computed by the same
:func:`fact_fair_tasks.scoring.compute_metrics`.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from fact_fair_tasks import scoring
from fact_fair_tasks.documents import DEFAULT_DRAWS, DEFAULT_SEED, documents_for
from fact_fair_tasks.items import CONTEXTS, statistics
from fairness_evals.jsonio import harness_sample_files, read_lines, write_lines, write_scores

KINDS = ("objective", *CONTEXTS)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"document seed (default {DEFAULT_SEED})")
    parser.add_argument(
        "--draws", type=int, default=DEFAULT_DRAWS,
        help=f"profile draws per subjective scenario (default {DEFAULT_DRAWS}; the lite tasks use 10)",
    )  # fmt: skip
    parser.add_argument(
        "--tasks", default=",".join(KINDS),
        help="comma-separated subset of: objective," + ",".join(CONTEXTS),
    )  # fmt: skip
    parser.add_argument("--out", help="write to this file instead of standard output")


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


def export_records(kinds: list[str], seed: int, draws: int) -> list[dict[str, Any]]:
    return [
        {"task": doc["task"], "id": doc["id"], "prompt": scoring.doc_to_text(doc), "meta": export_meta(doc)}
        for kind in kinds
        for doc in documents_for(kind, seed=seed, draws=draws)
    ]


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    _add_common(parser)
    parser.add_argument(
        "--t2i-layout", metavar="DIR",
        help="instead of the LLM documents, create the text-to-image folder layout in DIR (one folder per "
        "prompt of fact_or_fair_t2i_objective and _subjective, a manifest and a README) for images generated "
        "elsewhere, scored by lmms-eval's from_folder model",
    )  # fmt: skip


T2I_SCORE_COMMAND = (
    "lmms-eval --model from_folder --model_args root={root} --tasks fact_or_fair_t2i "
    "--batch_size 1 --output_path results/ --log_samples"
)


def export_t2i_layout(folder: str) -> dict[str, int]:
    """Create the T2I image layout (:mod:`generation_backends.layout`) for both Fact-or-Fair T2I tasks."""
    from fact_fair_tasks.t2i_documents import IMAGES_PER_PROMPT, all_documents
    from generation_backends.layout import write_layout

    return write_layout(
        Path(folder), all_documents(), title="Fact-or-Fair text-to-image", score_command=T2I_SCORE_COMMAND,
        images_per_prompt=IMAGES_PER_PROMPT,
        images_per_prompt_source="the paper's number",
        meta_fields=("statistic", "target", "truth_gender", "truth_race"),
        notes=(
            "The paper counts every detected face: several people in one image each count; an image without a "
            "face is left out (and counted).",
        ),
    )  # fmt: skip


def export(args: argparse.Namespace) -> int:
    if args.t2i_layout:
        counts = export_t2i_layout(args.t2i_layout)
        summary = ", ".join(f"{task} {n}" for task, n in counts.items())
        print(f"fact_or_fair: {summary} prompt folders in {args.t2i_layout}", file=sys.stderr)
        return 0
    write_lines(export_records(_kinds(args.tasks), args.seed, args.draws), args.out)
    return 0


def add_score_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--responses", required=True,
        help='JSON lines {"id", "response"}, or an lm-eval --log_samples output folder',
    )  # fmt: skip
    parser.add_argument(
        "--by-statistic", action="store_true",
        help='also score each statistic on its own: entries "<task>/<statistic slug>", e.g. fact_or_fair_objective/employment_rate',
    )  # fmt: skip
    _add_common(parser)


def _preview(ids: list[str]) -> str:
    shown = ", ".join(ids[:5])
    return f"{shown}, ..." if len(ids) > 5 else shown


def _from_jsonl(
    path: Path, kinds: list[str], seed: int, draws: int, keep: dict[str, list[list[int]]] | None = None
) -> dict[str, dict[str, Any]]:
    docs = {doc["id"]: doc for kind in kinds for doc in documents_for(kind, seed=seed, draws=draws)}
    replies: dict[str, Any] = {}
    duplicates: list[str] = []
    for number, obj in read_lines(path):
        if "id" not in obj or "response" not in obj:
            raise ValueError(f"{path}:{number}: each line needs 'id' and 'response'")
        key = str(obj["id"])
        if key in replies:
            duplicates.append(key)
        replies[key] = obj["response"]
    if duplicates:
        raise ValueError(f"{path}: {len(duplicates)} duplicate ids, e.g. {_preview(duplicates)}")
    unknown = [i for i in replies if i not in docs]
    if unknown:
        raise ValueError(
            f"{path}: {len(unknown)} unknown ids (not in the documents for seed {seed}, draws {draws}): "
            f"{_preview(unknown)}"
        )
    answered_tasks = {docs[i]["task"] for i in replies}
    missing = [i for i, doc in docs.items() if doc["task"] in answered_tasks and i not in replies]
    if missing:
        raise ValueError(f"{path}: {len(missing)} documents have no response, e.g. {_preview(missing)}")
    records: dict[str, list[list[int]]] = defaultdict(list)
    shas: dict[str, list[str]] = defaultdict(list)
    for key, reply in replies.items():
        doc = docs[key]
        records[doc["task"]].append(scoring.record_for(doc, scoring.parse_reply(doc, reply)))
        shas[doc["task"]].append(doc["doc_sha"])
    if keep is not None:
        keep.update(records)
    return _with_provenance(records, shas, seed)


_TASK_IN_NAME = re.compile(r"samples_(fact_or_fair_[a-z_]+?)(?:_\d{4}-\d\d-\d\dT[\d\-.:]+)?\.jsonl$")


def _from_samples(folder: Path, keep: dict[str, list[list[int]]] | None = None) -> dict[str, dict[str, Any]]:
    files = harness_sample_files(folder, "fact_or_fair_")
    if not files:
        raise ValueError(f"{folder}: no lm-eval samples_fact_or_fair_*.jsonl files (run with --log_samples)")
    records: dict[str, list[list[int]]] = defaultdict(list)
    shas: dict[str, list[str]] = defaultdict(list)
    seeds: set[int] = set()
    for path in files:
        match = _TASK_IN_NAME.search(path.name)
        task = match.group(1) if match else path.stem
        for number, sample in read_lines(path):
            doc = sample.get("doc")
            if not isinstance(doc, dict) or "id" not in doc:
                raise ValueError(f"{path}:{number}: not an lm-eval sample of a fact_or_fair task (no doc.id)")
            response = (sample.get("filtered_resps") or sample.get("resps") or [None])[0]
            if task.endswith("_mc"):
                record = scoring.process_results_mc(doc, sample.get("filtered_resps") or [])
                records[task].append(record[scoring.SCORES[0] + "_gender"])
            else:
                records[task].append(scoring.record_for(doc, scoring.parse_reply(doc, response)))
            shas[task].append(doc["doc_sha"])
            seeds.add(int(doc["seed"]))
    if keep is not None:
        keep.update(records)
    return _with_provenance(records, shas, seeds.pop() if len(seeds) == 1 else -1)


def _with_provenance(
    records: dict[str, list[list[int]]], shas: dict[str, list[str]], seed: int
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for task in records:
        metrics: dict[str, Any] = scoring.compute_metrics(records[task], task=task)
        metrics["seed"] = seed
        metrics["documents_sha256"] = scoring.agg_documents_sha256(shas[task])
        out[task] = metrics
    return out


def by_statistic(records: dict[str, list[list[int]]]) -> dict[str, dict[str, Any]]:
    """Every task's metrics on each statistic's records alone, keyed "<task>/<statistic slug>" (record field 1 is
    the statistic's index; a statistic with no records of a task is left out). S_KLD of one statistic is
    exp(-KL) of its own highest/lowest pair; the entropy and S_fact are over its own cells."""
    names = [s.slug for s in statistics()]
    out: dict[str, dict[str, Any]] = {}
    for task, rows in records.items():
        grouped: dict[int, list[list[int]]] = defaultdict(list)
        for row in rows:
            grouped[int(row[1])].append(row)
        for index in sorted(grouped):
            out[f"{task}/{names[index]}"] = scoring.compute_metrics(grouped[index], task=f"{task}/{names[index]}")
    return out


def score(args: argparse.Namespace) -> int:
    source = Path(args.responses)
    if not source.exists():
        raise ValueError(f"--responses: {source} does not exist")
    records: dict[str, list[list[int]]] = {}
    if source.is_dir():
        scores = _from_samples(source, records)
    else:
        scores = _from_jsonl(source, _kinds(args.tasks), args.seed, args.draws, records)
    if getattr(args, "by_statistic", False):
        scores.update(by_statistic(records))
    write_scores(scores, args.out)
    return 0
