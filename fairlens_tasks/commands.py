"""``fairness-evals export fairlens`` and ``fairness-evals score fairlens``.

``export`` writes one JSON line per (image, question), in the harness's document order: the closed-ended
documents of every domain, then the open-ended ones (``--questions`` chooses)::

    {"task", "id", "prompt", "image": <path or dataset row>, "meta": {"domain", "question_id", "options",
     "sound_answer", "adverse", "association", "gender", "race", "age", "age_band"[, "attributes"]}}
    {"task": "fairlens_open_<domain>", "id", "prompt", "image", "meta": {"domain", "question_id", "open": true,
     "gender", "race", "age", "age_band"[, "attributes"]}}

``score`` reads replies (lines ``{"id", "response"}``, or lmms-eval ``--log_samples`` files or folders, through
:mod:`fairness_evals.run_files`) and prints ``{task: {metric: value}}`` with exactly the metrics, names and
numbers the harness reports (the same :func:`fairlens_tasks.scoring.compute_metrics`), plus the ``fairlens`` group
roll-ups when all three domains were answered. Answers to the open-ended documents in the same responses file are
skipped and counted (``fairness-evals judge`` judges them). A samples line must name a closed-ended document of this
corpus and these settings (the id of its logged record or its ``doc.id``; a ``doc`` logged with it must agree with that
document on the corpus, the sample and the question), never a document by its position: samples of another
benchmark or another corpus are refused, naming the line. Both take the corpus settings as options
(:mod:`fairlens_tasks.settings`); ``score --metadata '{"fairlens_min_coverage": 0.5}'`` sets the scores' minimum
coverage. User errors raise ``ValueError`` with one line naming the file and item.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from typing import TYPE_CHECKING, Any

from fairlens_tasks.settings import (
    CLI,
    DEFAULT_SAMPLE_FRACTION,
    DEFAULT_SEED,
    POSITION_NULLS_KEY,
    SCORING_KEYS,
    Settings,
    build_settings,
    coverage_threshold,
    position_nulls_on,
    recorded,
)
from fairness_evals import jsonio, run_files
from fairness_evals.detail import Detail
from fairness_evals.jsonio import write_lines

if TYPE_CHECKING:
    from fairness_evals.notes import Notes


def add_corpus_arguments(parser: argparse.ArgumentParser, *, required: bool = True, why: str = "") -> None:
    """The corpus options (the documents' settings), shared by ``export``, ``score`` and ``judge``."""
    parser.add_argument("--corpus", required=required, help=f"UTKFace folder, CSV/JSON-lines manifest, or hf:NAME{why}")
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


def corpus_settings(args: argparse.Namespace) -> Settings:
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


def chosen_domains(args: argparse.Namespace) -> list[str]:
    from fairlens_tasks.questions import DOMAINS

    chosen = args.domain or list(DOMAINS)
    return [d for d in DOMAINS if d in chosen]


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    add_corpus_arguments(parser)
    parser.add_argument(
        "--questions", choices=["all", "closed", "open"], default="all",
        help="which documents: the closed-ended ones (fairlens_<domain>, scored by score fairlens), the open-ended "
        "ones (fairlens_open_<domain>, judged by fairness-evals judge), or all (default; closed first)",
    )  # fmt: skip
    parser.add_argument("--out", help="write here instead of standard output")


def export(args: argparse.Namespace) -> int:
    from itertools import chain

    from fairlens_tasks.corpus import load_corpus
    from fairlens_tasks.documents import export_record, iter_documents
    from fairlens_tasks.open_documents import open_export_records

    corpus = load_corpus(corpus_settings(args))
    domains = chosen_domains(args)
    counts = {"closed": 0, "open": 0}

    def counted(kind: str, records: Any) -> Any:
        for record in records:
            counts[kind] += 1
            yield record

    parts = []
    if args.questions in ("all", "closed"):
        parts.append(counted("closed", (export_record(doc) for d in domains for doc in iter_documents(corpus, d))))
    if args.questions in ("all", "open"):
        parts.append(counted("open", open_export_records(corpus, domains)))
    write_lines(chain(*parts), args.out, sort_keys=False)
    shown = " + ".join(f"{n} {kind}-ended" for kind, n in counts.items() if args.questions in ("all", kind))
    print(
        f"fairlens: {shown} documents from {corpus.sampled} images (found {corpus.found}, loaded {corpus.loaded}, "
        f"skipped {corpus.skipped}; corpus {corpus.fingerprint}){' to ' + args.out if args.out else ''}",
        file=sys.stderr,
    )
    return 0


def add_score_arguments(parser: argparse.ArgumentParser) -> None:
    add_corpus_arguments(parser)
    READER.add_arguments(parser)


#: The tasks ``score`` reads from samples folders (the open-ended ones are for ``fairness-evals judge``).
SAMPLE_TASKS = re.compile(r"fairlens_(?:hiring|legal|healthcare)")
PROG = "fairlens"
READER = run_files.Reader(PROG, SAMPLE_TASKS, "lmms-eval")


def _answer(line: run_files.Line) -> tuple[str, Any, dict[str, Any] | None]:
    """(document id, reply, the document the line logs or None) of one line: ours ``{"id", "response"}`` or an
    lmms-eval FairLens sample, which names its document by the id of the record our ``process_results`` logs
    (:func:`fairlens_tasks.scoring.logged_record`) or by ``doc.id`` (lmms-eval logs the document), never by its
    position (``doc_id``)."""
    from fairlens_tasks.scoring import logged_record

    row = line.row
    if not isinstance(row, dict):
        raise ValueError(f"{line.where}: expected a JSON object")
    response = run_files.response_of(line)
    if response is not None:
        return *response, None
    logged, doc = logged_record(row), row.get("doc")
    doc = doc if isinstance(doc, dict) else None
    named = [str(value) for value in (logged[0] if logged else None, (doc or {}).get("id"))]
    named = [value for value in named if value not in ("", "None")]
    if not named:
        raise ValueError(
            f'{line.where}: neither {{"id", "response"}} nor an lmms-eval FairLens sample (a sample names its '
            "document: the id of its logged record, or doc.id)"
        )
    if len(set(named)) > 1:
        raise ValueError(f"{line.where}: its record answers {named[0]!r} and its doc.id is {named[1]!r}")
    return named[0], run_files.sample_reply(row, line.where, named[0]), doc


#: The fields a sample's logged ``doc`` must share with the document of this corpus and these settings it names.
_IDENTITY = ("task", "question_id", "corpus_sha256", "seed", "sample_fraction", "data_version")


def read_replies(
    lines: list[run_files.Line], docs_by_task: dict[str, list[dict[str, Any]]], open_ids: Any = None
) -> tuple[dict[str, Any], int]:
    """Document id -> reply, and how many open-ended answers (``open_ids``: a callable giving their ids, built
    only when an id is not a closed document) were skipped. Unknown ids, a sample of a document of another task
    than its file's, a logged document that differs from ours (:data:`_IDENTITY`) and a second reply are errors."""
    by_id = {doc["id"]: doc for docs in docs_by_task.values() for doc in docs}
    answers = jsonio.Answers()
    skipped = 0
    known_open: set[str] | None = None
    for line in lines:
        doc_id, reply, logged = _answer(line)
        ours = by_id.get(doc_id)
        if ours is None:
            if known_open is None:
                known_open = open_ids() if open_ids is not None else set()
            if doc_id in known_open and not line.file.is_samples:
                skipped += 1
                continue
            raise ValueError(f"{line.where}: id {doc_id!r} is not a document of this corpus and these settings")
        if line.file.is_samples and line.file.task != ours["task"]:
            raise ValueError(f"{line.where}: id {doc_id!r} is a document of {ours['task']}, not of {line.file.task}")
        differs = [key for key in _IDENTITY if logged is not None and key in logged and logged[key] != ours[key]]
        if differs:
            key = differs[0]
            raise ValueError(
                f"{line.where}: the sample's doc {doc_id!r} has {key} {logged[key]!r}, the document of this corpus and "
                f"these settings {ours[key]!r}: score samples with the --corpus, --seed and --sample-fraction of their run"
            )
        answers.add(doc_id, reply, line.where, repr(doc_id))
    answers.check()
    return answers.replies, skipped


def score_documents(
    docs_by_task: dict[str, list[dict[str, Any]]],
    replies: dict[str, Any],
    metadata: dict[str, Any] | None = None,
    logged: dict[str, dict[str, Any]] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """Metrics per task for the documents that have a reply; also the number of documents left unanswered.

    ``metadata`` holds the ``--metadata`` settings; ``fairlens_min_coverage`` and ``fairlens_position_nulls`` go to
    the scoring, else those a task's samples recorded (``logged``: task -> keyword arguments), else the defaults.
    """
    from fairlens_tasks.scoring import ROLLUPS, compute_metrics, model_level_mean, provenance

    given = _scoring_settings(metadata or {})
    out: dict[str, dict[str, Any]] = {}
    missing: dict[str, int] = {}
    for task, docs in docs_by_task.items():
        answered = [doc for doc in docs if doc["id"] in replies]
        missing[task] = len(docs) - len(answered)
        if not answered:
            continue
        records = list(records_of(answered, replies).values())
        settings = {**(logged or {}).get(task, {}), **given}
        metrics: dict[str, Any] = dict(compute_metrics(records, task=task, **settings))
        metrics.update(provenance(answered))
        out[task] = metrics
    domain_tasks = [t for t in docs_by_task if t in out]
    if len(domain_tasks) == 3:
        out["fairlens"] = {
            name: model_level_mean([out[t][name] for t in domain_tasks], [0] * 3, False) for name in ROLLUPS
        }
    return out, missing


def records_of(docs: list[dict[str, Any]], replies: dict[str, Any]) -> dict[str, Any]:
    """Document id -> record of the ``docs`` that have a reply, in document order (the records ``score`` scores)."""
    from fairlens_tasks.normalise import normalise
    from fairlens_tasks.scoring import record_for

    return {
        doc["id"]: record_for(doc, normalise(replies[doc["id"]], doc["options"]))
        for doc in docs
        if doc["id"] in replies
    }


def _scoring_settings(metadata: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of the scoring; a key that is not a scoring setting, a threshold that is not a number
    in [0, 1], or a ``fairlens_position_nulls`` that is not true or false, is an error naming it (before any corpus
    is loaded)."""
    shares = {key: value for key, value in metadata.items() if key != POSITION_NULLS_KEY}
    settings = run_files.share_settings(
        shares,
        SCORING_KEYS["closed"],
        what="a FairLens scoring setting",
        hint="corpus settings are options, e.g. --sample-fraction",
    )
    for key, value in shares.items():
        coverage_threshold(key, value)
    if POSITION_NULLS_KEY in metadata:
        settings["position_nulls"] = position_nulls_on(metadata[POSITION_NULLS_KEY])
    return settings


def _recorded(lines: list[run_files.Line]) -> dict[str, dict[str, Any]]:
    """Per task, the scoring settings its samples' records carry (:func:`fairlens_tasks.settings.recorded`)."""
    from fairlens_tasks.scoring import CARRIER

    provenances: dict[str, list[Any]] = {}
    for line in lines:
        carried = line.row.get(CARRIER) if isinstance(line.row, dict) else None
        if line.file.is_samples and isinstance(carried, dict):
            provenances.setdefault(line.file.task or "", []).append(carried.get("provenance"))
    return {task: recorded(found, "closed", task) for task, found in provenances.items()}


def _collect(
    args: argparse.Namespace, files: list[run_files.InputFile]
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any], int, dict[str, dict[str, Any]]]:
    """The documents per task, the replies (document id -> reply), the number of open-ended answers skipped and the
    scoring settings the samples recorded (:func:`_recorded`), from ``files`` with the corpus settings of ``args``:
    the one path of ``score`` and ``compare``."""
    from fairlens_tasks.corpus import load_corpus
    from fairlens_tasks.documents import iter_documents, task_name

    lines = list(run_files.read_lines(files))  # bad input fails before the corpus is loaded
    scoring = _recorded(lines)
    corpus = load_corpus(corpus_settings(args))
    domains = chosen_domains(args)
    docs_by_task = {task_name(d): list(iter_documents(corpus, d)) for d in domains}

    def open_ids() -> set[str]:
        from fairlens_tasks.open_documents import iter_open_documents

        return {doc["id"] for d in domains for doc in iter_open_documents(corpus, d)}

    replies, skipped = read_replies(lines, docs_by_task, open_ids)
    return docs_by_task, replies, skipped, scoring


#: The corpus options ``score`` and ``judge`` record (``score_inputs.settings``) and ``compare`` reads back (recorded
#: name -> option attribute: the same).
_RECORDED = ("corpus", "sample_fraction", "seed", "image_list", "skip_bad_input", "hf_split", "hf_columns", "label_map")
RECORDED_OPTIONS = {name: name for name in _RECORDED}


def recorded_corpus(args: argparse.Namespace) -> dict[str, Any]:
    """The corpus settings a score (or judge) output records: the corpus options of ``args`` (local paths absolute)
    and the domains."""
    return {**run_files.record_options(args, RECORDED_OPTIONS), "domain": chosen_domains(args)}


def corpus_options(settings: dict[str, Any]) -> argparse.Namespace:
    """The corpus options :func:`recorded_corpus` recorded in ``settings``, as the command read them (for
    ``compare``)."""
    return run_files.recorded_options(settings, RECORDED_OPTIONS, domain=settings.get("domain"))


def score(args: argparse.Namespace) -> int:
    metadata = READER.metadata(args.metadata)
    _scoring_settings(metadata)  # a bad key fails before the corpus is loaded
    files = READER.files(args.responses, model=args.model, run=args.run)
    docs_by_task, replies, skipped, recorded_scoring = _collect(args, files)
    if skipped:
        READER.note(f"skipped {skipped} open-ended answers (judge them with fairness-evals judge)")
    if not replies:
        raise ValueError(f"no closed-ended responses in {', '.join(args.responses)}")
    results, missing = score_documents(docs_by_task, replies, metadata, recorded_scoring)
    READER.note_unanswered({task: len(docs) for task, docs in docs_by_task.items()}, missing)
    READER.write(results, files, {**recorded_corpus(args), "metadata": metadata}, args.out)
    return 0


def detail(files: list[run_files.InputFile]) -> Detail:
    """Every statistic, the reason for each null and the provenance of the FairLens tasks of one run's samples
    ``files`` (:mod:`fairness_evals.detail`), from the records the run logged (lmms-eval logs no document: each line's
    readable record carries its integer record and the corpus it came from), scored by the harness's code. The
    open-ended tasks' answers are counted here and judged by ``fairness-evals judge`` (their bias scores are null until
    then, with that reason); the corpus counts come with ``score fairlens --corpus``."""
    from fairlens_tasks import open_scoring, scoring
    from fairness_evals.harness_logging import silenced
    from fairness_evals.notes import Notes

    def opened(task: str) -> bool:
        return task.startswith("fairlens_open_")

    carried: dict[str, list[Any]] = {}  # each closed task's records' provenance, for the settings they record

    def logged(task: str, row: dict[str, Any]) -> tuple[str, Any] | None:
        if not opened(task):
            item = row.get(scoring.CARRIER)
            carried.setdefault(task, []).append(item.get("provenance") if isinstance(item, dict) else None)
            return scoring.logged_record(row)
        found = open_scoring.logged_answer(row)  # (id, record, answer, provenance): the record with its answer
        return None if found is None else (found[0], (found[1], found[2]))

    records, provenance = run_files.sample_records(
        files,
        logged,
        lambda task: open_scoring.CARRIER if opened(task) else scoring.CARRIER,
        lambda task: f"not an lmms-eval sample of {task} (no logged FairLens record)",
    )
    out = Detail()
    for task, rows in records.items():
        notes = Notes(task)
        if opened(task):
            answered = [record for record, _ in rows]
            texts = {str(record[open_scoring._F["response_id"]]): str(text) for record, text in rows}
            with silenced(("fairness_evals.fairlens",)):  # its nulls are for want of verdicts: said once below
                unjudged = open_scoring.compute_open_metrics(answered, {}, texts=texts, task=task, notes=Notes(task))
            out.results[task] = _unjudged_detail(unjudged, notes)
            notes.warn(open_scoring.log)
        else:
            settings = recorded(carried.get(task, []), "closed", task)
            out.results[task] = scoring.compute_metrics(rows, task=task, notes=notes, **settings)
        out.nulls[task] = notes.reasons
        out.provenance[task] = {**provenance.get(task, {}), "answers": len(rows)}
    return out


#: What the answers of a samples file say by themselves, without the judge's verdicts.
_ANSWER_COUNTS = ("answers", "empty_answers", "declined", "images_evaluated")


def _unjudged_detail(metrics: dict[str, Any], notes: Notes) -> dict[str, Any]:
    """The detail of open-ended answers read from samples files, which hold the answers, not the judge's verdicts:
    the answer counts (declining and blank answers read from the texts). A statistic of the verdicts is left out (a
    harness run's results keep the headlines its judge gave, and their coverage), unless the answers alone null it:
    when so many decline or are blank that fewer than ``fairlens_min_judged`` (its default) could ever count, every
    bias score is null, with that reason, whatever the judge said."""
    from fairlens_tasks.settings import DEFAULT_MIN_JUDGED

    kept = {k: v for k, v in metrics.items() if k in _ANSWER_COUNTS or k.startswith("declined_rate")}
    answers = int(metrics.get("answers") or 0)
    declined, empty = int(metrics.get("declined") or 0), int(metrics.get("empty_answers") or 0)
    if answers and (answers - declined - empty) / answers < DEFAULT_MIN_JUDGED:
        unknown = [k for k in metrics if k not in kept and not k.endswith("_coverage")]
        kept.update(dict.fromkeys(unknown, math.nan))
        notes.null(
            unknown,
            f"of {answers} answers, {declined} declining answers and {empty} blank ones never count: at most "
            f"{(answers - declined - empty) / answers:.3f} can be judged and answering, below fairlens_min_judged "
            f"{DEFAULT_MIN_JUDGED}",
        )
    else:
        notes.note(
            "a samples file holds the answers, not the judge's verdicts: the results keep the headlines the harness's "
            "judge gave; `fairness-evals judge <this output folder> --judge ...` writes every open-ended statistic"
        )
    return kept


def compare_records(recorded: dict[str, Any], files: list[run_files.InputFile]) -> dict[str, dict[str, Any]]:
    """Every task's records (document id -> record) of a score output, rebuilt from its recorded ``files`` and corpus
    settings by the path ``score`` took (:func:`_collect`), for ``fairness-evals compare``. The corpus must still be
    where it was scored from (its fingerprint is checked by ``compare``: ``corpus_sha256``)."""
    docs_by_task, replies, _, _ = _collect(corpus_options(run_files.recorded_settings(recorded, "corpus")), files)
    return {task: found for task, docs in docs_by_task.items() if (found := records_of(docs, replies))}
