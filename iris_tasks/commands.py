"""``fairness-evals export iris`` and ``fairness-evals score iris``: the IRIS tasks outside the harness.

``export`` writes one JSON line per document, in the harness's document order::

    {"tasks": [...], "id", "prompt", "image": <path, dataset row, or null for the blank probe image>,
     "box": [left, top, right, bottom] or null, "meta": {...}}

A document that two tasks share (the occupation question on a corpus image: ``iris_ifs_und`` and the SDS half
of ``iris_rfs_und``) is written once, with both tasks: one answer serves both. ``score`` reads replies
(lines ``{"id", "response"}``, or lmms-eval ``--log_samples`` files or folders) and prints ``{task: {metric:
value}}`` with the harness's metrics, names and numbers (the same records and ``compute_metrics``). Both take
the corpus settings as options (:mod:`iris_tasks.settings`); the embedder is ``IRIS_EMBEDDER``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from fairness_evals import jsonio, run_files
from fairness_evals.detail import Detail
from fairness_evals.generation.layout import add_layout_argument, announce, score_command, write_layout
from fairness_evals.jsonio import write_lines
from iris_tasks.settings import Settings, build_settings

TASK_NAMES = ("iris_ifs_und", "iris_rfs_und", "iris_bis_und")
#: Each corpus setting (:mod:`iris_tasks.settings`): its option of ``export`` and ``score`` and the option's help.
OPTIONS: dict[str, tuple[str, str]] = {
    "corpus": ("--corpus", "FACET annotations.csv, CSV/JSON-lines manifest, or hf:NAME (IFS, RFS SDS)"),
    "image_root": ("--image-root", "FACET image folder (default: the CSV's folder)"),
    "steer_corpus": ("--steer-corpus", "counterfactual sets: manifest or hf:NAME with pair_id (BIS)"),
    "sample_fraction": ("--sample-fraction", "stratified fraction of images / sets in (0, 1] (default 1)"),
    "max_per_cell": ("--max-per-cell", "at most N images per occupation x gender x age x skin cell"),
    "seed": ("--seed", "sampling and probe seed (default 0)"),
    "on_bad_input": ("--skip-bad-input", "skip and count bad items instead of stopping"),
    "hf_split": ("--hf-split", "split of an hf: --corpus"),
    "hf_columns": ("--hf-columns", "image=COL,occupation=COL,gender=COL,age=COL,skin_tone=COL"),
    "steer_hf_split": ("--steer-hf-split", "split of an hf: --steer-corpus"),
    "steer_hf_columns": ("--steer-hf-columns", "as --hf-columns, plus pair_id=COL"),
    "label_map": ("--label-map", 'JSON text or file, e.g. {"age": {"adult": "middle"}}'),
    "probe_rounds": ("--probe-rounds", "probe reshuffles per attribute combination (default 5)"),
    "probe_bracket": ("--probe-bracket", "occupations per probe question: 2, 4, 13, 26 or 52 (default 4)"),
    "threshold": ("--mapping-threshold", "cosine threshold of the embedding stage (default 0.6)"),
}
#: Each setting's option (the name errors give it).
CLI = {name: option for name, (option, _) in OPTIONS.items()}
#: Each setting's option attribute in the parsed arguments; ``score`` records these options (``score_inputs.settings``,
#: under the setting's name) and ``compare`` reads them back.
ATTRIBUTES = {name: option.lstrip("-").replace("-", "_") for name, option in CLI.items()}


def _add_settings(parser: argparse.ArgumentParser) -> None:
    """The corpus options (:data:`OPTIONS`, ``--skip-bad-input`` a flag) and ``--task``."""
    for name, (option, text) in OPTIONS.items():
        flag = {"action": "store_true"} if name == "on_bad_input" else {}
        parser.add_argument(option, help=text, **flag)
    parser.add_argument(
        "--task", action="append", choices=TASK_NAMES,
        help="only this task (repeatable; default: iris_rfs_und, plus iris_ifs_und with --corpus and iris_bis_und "
        "with --steer-corpus)",
    )  # fmt: skip


#: ``score --metadata`` keys -> settings (:mod:`iris_tasks.settings`); the documents carry them to the scoring.
METADATA_SETTINGS = {"iris_min_coverage": "min_coverage"}


def _settings(args: argparse.Namespace, metadata: dict[str, Any] | None = None) -> Settings:
    values = {key: getattr(args, ATTRIBUTES[key]) for key in CLI}
    values["on_bad_input"] = bool(args.skip_bad_input)
    values |= run_files.share_settings(
        metadata or {}, METADATA_SETTINGS, what="an IRIS scoring setting",
        hint="corpus and mapping settings are options, e.g. --mapping-threshold",
    )  # fmt: skip
    return build_settings(values, CLI)


def _tasks(args: argparse.Namespace, settings: Settings) -> list[str]:
    if args.task:
        return [t for t in TASK_NAMES if t in args.task]
    return [
        t
        for t in TASK_NAMES
        if t == "iris_rfs_und"
        or (t == "iris_ifs_und" and settings.corpus)
        or (t == "iris_bis_und" and settings.steer_corpus)
    ]


def _documents(
    args: argparse.Namespace, metadata: dict[str, Any] | None = None
) -> tuple[Settings, dict[str, list[dict[str, Any]]]]:
    from iris_tasks.documents import build

    settings = _settings(args, metadata)
    return settings, {task: build(task, settings) for task in _tasks(args, settings)}


_META = ("kind", "question_id", "occupation", "gender", "age", "skin_tone", "set_id", "candidates", "truth")


def export_records(docs_by_task: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The export lines: documents in task then document order, shared ones once."""
    lines: dict[str, dict[str, Any]] = {}
    for task, docs in docs_by_task.items():
        for doc in docs:
            found = lines.get(doc["id"])
            if found is not None and found["prompt"] == doc["prompt"]:
                found["tasks"].append(task)
                continue
            image: str | int | None = (
                None if doc["kind"] == "probe" else (doc["image_index"] if doc["hf_dataset"] else doc["image"])
            )
            meta = {k: doc[k] for k in _META if doc.get(k) not in ("", None, [], -1)}
            lines[doc["id"]] = {
                "tasks": [task],
                "id": doc["id"],
                "prompt": doc["prompt"],
                "image": image,
                "box": doc["box"] or None,
                "meta": meta,
            }
    return list(lines.values())


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    _add_settings(parser)
    parser.add_argument("--out", help="write here instead of standard output")
    add_layout_argument(
        parser,
        instead_of="the understanding documents",
        tasks="iris_gen_neutral and iris_gen_steer",
        more="; needs no corpus",
    )


def export_t2i_layout(folder: str) -> dict[str, int]:
    """Create the T2I image layout (:mod:`fairness_evals.generation.layout`) for both IRIS generation tasks."""
    from iris_tasks.gen_documents import IMAGES_PER_PROMPT, all_documents

    return write_layout(
        Path(folder), all_documents(), title="IRIS generation",
        score_command=score_command("iris_gen"), images_per_prompt=IMAGES_PER_PROMPT,
        images_per_prompt_source="our default; the paper does not publish its number",
        meta_fields=("occupation", "prompt_type", "flipped", "target_gender", "target_age", "target_skin_tone"),
        notes=(
            "IRIS labels an image by its largest face; an image without a face has no label (and counts as a "
            "failed instruction in iris_gen_steer).",
        ),
    )  # fmt: skip


def export(args: argparse.Namespace) -> int:
    if args.t2i_layout:
        return announce(PROG, export_t2i_layout(args.t2i_layout), args.t2i_layout)
    _, docs_by_task = _documents(args)
    records = export_records(docs_by_task)
    write_lines(records, args.out, sort_keys=False)
    counts = ", ".join(f"{task} {len(docs)}" for task, docs in docs_by_task.items())
    print(f"iris: {len(records)} lines ({counts} documents){' to ' + args.out if args.out else ''}", file=sys.stderr)
    return 0


def add_score_arguments(parser: argparse.ArgumentParser) -> None:
    _add_settings(parser)
    READER.add_arguments(parser)


#: The tasks ``score`` reads from samples folders: the understanding tasks (generation is scored by lmms-eval).
SAMPLE_TASKS = re.compile(r"iris_[a-z]+_und")
PROG = "iris"
READER = run_files.Reader(PROG, SAMPLE_TASKS, "lmms-eval")


def read_replies(lines: list[run_files.Line]) -> list[tuple[str, str | None, str, Any]]:
    """(where, task or None, document id, reply) per line: lmms-eval samples name their task (from the file
    name) and their document (the id of the record our ``process_results`` logs:
    :func:`iris_tasks.scoring.sample_answer`), a plain ``{"id", "response"}`` line does not name its task (it
    answers that id in every task that has it)."""
    from iris_tasks.scoring import sample_answer

    out = []
    for line in lines:
        row = line.row
        response = run_files.response_of(line)
        logged = sample_answer(row, line.file.task) if isinstance(row, dict) and line.file.task else None
        if response is not None:
            out.append((line.where, None, *response))
        elif logged is not None:
            out.append((line.where, line.file.task, logged[0], run_files.sample_reply(row, line.where, logged[0])))
        else:
            raise ValueError(f'{line.where}: neither {{"id", "response"}} nor an lmms-eval IRIS sample')
    return out


def assign(
    lines: list[tuple[str, str | None, str, Any]], docs_by_task: dict[str, list[dict[str, Any]]]
) -> dict[tuple[str, str], Any]:
    """(task, document id) -> reply; unknown ids and second replies are errors naming the line."""
    ids = {task: {doc["id"] for doc in docs} for task, docs in docs_by_task.items()}
    answers = jsonio.Answers()
    for where, task, doc_id, reply in lines:
        tasks = (
            [t for t in ids if doc_id in ids[t]] if task is None else ([task] if doc_id in ids.get(task, ()) else [])
        )
        if not tasks:
            scope = task or ", ".join(ids) or "the tasks"
            raise ValueError(f"{where}: id {doc_id!r} is not a document of {scope} for this corpus and these settings")
        for t in tasks:
            answers.add((t, doc_id), reply, where, f"{doc_id!r} of {t}")
    answers.check()
    return answers.replies


def score_documents(
    docs_by_task: dict[str, list[dict[str, Any]]], replies: dict[tuple[str, str], Any]
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """Metrics per task for the documents with a reply, and the number left unanswered per task."""
    from iris_tasks import bis_und, ifs_und, rfs_und
    from iris_tasks.scoring import provenance

    modules = {"iris_ifs_und": ifs_und, "iris_rfs_und": rfs_und, "iris_bis_und": bis_und}
    out: dict[str, dict[str, Any]] = {}
    missing: dict[str, int] = {}
    for task, docs in docs_by_task.items():
        answered = [doc for doc in docs if (task, doc["id"]) in replies]
        missing[task] = len(docs) - len(answered)
        if not answered:
            continue
        module = modules[task]
        records = list(records_of(task, answered, replies).values())
        metrics: dict[str, Any] = dict(module.compute_metrics(records, design_size=len(docs)))
        metrics.update(provenance(answered))
        out[task] = metrics
    return out, missing


def records_of(task: str, docs: list[dict[str, Any]], replies: dict[tuple[str, str], Any]) -> dict[str, Any]:
    """Document id -> record of ``task``'s ``docs`` that have a reply, in document order (the records ``score``
    scores)."""
    from iris_tasks.scoring import read_reply

    return {doc["id"]: read_reply(doc, replies[(task, doc["id"])])[0] for doc in docs if (task, doc["id"]) in replies}


def _collect(
    args: argparse.Namespace, metadata: dict[str, Any], files: list[run_files.InputFile]
) -> tuple[dict[str, list[dict[str, Any]]], dict[tuple[str, str], Any]]:
    """The documents per task and the replies ((task, document id) -> reply) of ``files`` with the settings of
    ``args``: the one path of ``score`` and ``compare``."""
    lines = read_replies(list(run_files.read_lines(files)))  # bad input fails before the corpus is loaded
    _, docs_by_task = _documents(args, metadata)
    return docs_by_task, assign(lines, docs_by_task)


def score(args: argparse.Namespace) -> int:
    from iris_tasks.embedder import configured

    metadata = READER.metadata(args.metadata)
    files = READER.files(args.responses, model=args.model, run=args.run)
    docs_by_task, replies = _collect(args, metadata, files)
    results, missing = score_documents(docs_by_task, replies)
    READER.note_unanswered({task: len(docs) for task, docs in docs_by_task.items()}, missing)
    settings = run_files.record_options(args, ATTRIBUTES)
    settings.update(task=list(docs_by_task), metadata=metadata, embedder=configured())
    READER.write(results, files, settings, args.out)
    return 0


def detail(files: list[run_files.InputFile]) -> Detail:
    """Every statistic, the reason for each null and the provenance of the IRIS tasks of one run's samples ``files``
    (:mod:`fairness_evals.detail`), from the records the run logged (lmms-eval logs no document: each line's readable
    record carries its record and the corpus it came from), scored by the harness's code (the generation tasks' by
    :func:`iris_tasks.gen_harness.score_samples`). The understanding image and set accounting comes with
    ``score iris --corpus``."""
    from fairness_evals.detail import samples_detail
    from fairness_evals.notes import Notes
    from iris_tasks import gen_harness, scoring

    out = samples_detail([f for f in files if (f.task or "").startswith("iris_gen")], gen_harness.score_samples)
    files = [f for f in files if not (f.task or "").startswith("iris_gen")]
    if not files:
        return out
    records, provenance = run_files.sample_records(
        files,
        lambda task, row: scoring.sample_answer(row, task) if task in scoring.MODULES else None,
        scoring.CARRIERS.__getitem__,
        lambda _: "not an lmms-eval sample of an IRIS understanding task (no logged record)",
    )
    for task, rows in records.items():
        notes = Notes(task)
        design = scoring.design_of([provenance.get(task)])
        out.results[task] = scoring.MODULES[task].compute_metrics(rows, notes=notes, design_size=design)
        out.nulls[task] = notes.reasons
        out.provenance[task] = {**provenance.get(task, {}), "answers": len(rows)}
    return out


def compare_records(recorded: dict[str, Any], files: list[run_files.InputFile]) -> dict[str, dict[str, Any]]:
    """Every task's records (document id -> record) of a score output, rebuilt from its recorded ``files`` and
    settings by the path ``score`` took (:func:`_collect`), for ``fairness-evals compare``. The corpora must still be
    where they were scored from, and the answer mapper's embedder (``IRIS_EMBEDDER``) the same."""
    from iris_tasks.embedder import EMBEDDER_ENV, configured

    settings = run_files.recorded_settings(recorded)
    embedder = str(settings.get("embedder") or "")
    if embedder != configured():
        raise ValueError(
            f"scored with {EMBEDDER_ENV}={embedder!r}, now {configured()!r}: the answers would map differently; set "
            f"{EMBEDDER_ENV} as it was scored"
        )
    args = run_files.recorded_options(settings, ATTRIBUTES, task=settings.get("task"))
    metadata = settings.get("metadata") or {}
    docs_by_task, replies = _collect(args, metadata, files)
    return {task: found for task, docs in docs_by_task.items() if (found := records_of(task, docs, replies))}
