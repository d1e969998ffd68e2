"""``fairness-evals judge``: judge the saved answers of FairLens open-ended runs; resumable.

::

    fairness-evals judge results/ --judge openai:gpt-5-mini                         # OPENAI_API_KEY set
    fairness-evals judge results/ --judge openai:Qwen/Qwen2.5-7B-Instruct --base-url http://localhost:8000/v1
    fairness-evals judge results/ --judge hf:/models/Qwen2.5-1.5B-Instruct --out judged.json
    fairness-evals judge answers.jsonl --corpus UTKFace/ --judge openai:gpt-5-mini    # a model run elsewhere

Reads the answers two ways, each through the shared reader (:mod:`fairness_evals.run_files`):

* the ``samples_fairlens_open_*.jsonl`` files of lmms-eval ``--log_samples`` output folders (no corpus options: the
  samples carry the records; ``--model`` / ``--run`` choose when a folder holds several models or runs);
* responses files, ``{"id", "response"}`` JSON lines answering the open-ended documents of ``fairness-evals export
  fairlens`` (with the corpus options the export used: the ids name an image and a question; closed-ended
  answers in the same file are skipped).

It judges every distinct answer not already in the judgement cache (:mod:`.runner`) and prints ``{task: {metric:
value}}`` with the metric names and code of a judged harness run (:func:`fairlens_tasks.judging.results.
judged_results`), plus the ``fairlens_open`` roll-ups when all three domains are there, as strict JSON.
``--metadata '{"fairlens_min_judged": 0.8}'`` sets the share of answers that must be judged for the bias scores.
Beside the tasks, the output records what was judged under ``"score_inputs"`` (as ``fairness-evals score`` outputs
do: :func:`fairness_evals.run_files.score_inputs`): benchmark ``fairlens_judge``, every samples or responses file
read (absolute path and sha256) and the settings (the corpus options of a responses file, the domains,
``--metadata`` and the judgement cache file, absolute). ``fairness-evals compare`` reads the answers again from those
files by this module's own path (:func:`compare_records`) and each answer's judgement from that cache.
Every judge option falls back to its ``FAIRLENS_JUDGE*`` variable (:mod:`.config`). Standard error says what was
done and why answers are unjudged (each reason counted). Exit status 0 only when every answer was judged; 1 when an
answer is left unjudged (an invalid reply after every attempt, a failed call) or judging stopped early because calls
kept failing (the output is still written, counting those answers as unjudged; rerun to resume, ``--retry-unjudged``
to ask again about invalid replies); 2 for a user error, named in one line; 3 when the judge refused answers (a
content policy, a content filter): the output is written with every bias score of the tasks holding a refused answer
withheld (null), because refusals are not missing at random (``fairlens_tasks/README.md``, "How judge refusals
count"). ``fairness-evals check`` reads the output (``--out``) as it reads a run.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fairlens_tasks.commands import add_corpus_arguments
from fairlens_tasks.judging.config import CLI, DEFAULT_MAX_TOKENS, DEFAULTS, ENV, build_judge_settings
from fairlens_tasks.settings import SCORING_KEYS as ALL_SCORING_KEYS
from fairness_evals import jsonio, run_files
from fairness_evals.jsonio import write_json, write_lines

#: The tasks read from samples folders.
SAMPLE_TASKS = re.compile(r"fairlens_open_(?:hiring|legal|healthcare)")
PROG = "fairlens judge"
#: ``--metadata`` keys -> keyword arguments of :func:`fairlens_tasks.judging.results.judged_results`.
SCORING_KEYS = ALL_SCORING_KEYS["open"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="+", metavar="RESULTS",
        help='lmms-eval --log_samples output folders, samples_fairlens_open_<domain>.jsonl files, or responses files '
        '({"id", "response"} lines answering the exported open-ended documents; they need --corpus)',
    )  # fmt: skip
    parser.add_argument("--judge", help="openai:MODEL (an OpenAI-compatible endpoint) or hf:PATH (a local model)")
    parser.epilog = (
        "Every option falls back to its FAIRLENS_JUDGE_* environment variable (fairlens_tasks/README.md, "
        "'Open-ended questions'). Exit status: 0 every answer judged, 1 answers left unjudged (invalid replies, failed "
        "calls) or stopped early (rerun to resume), 2 user error, 3 the judge refused answers (their tasks' bias "
        "scores are withheld)."
    )
    parser.add_argument(
        "--base-url", help="OpenAI-compatible base URL (default: OPENAI_BASE_URL, else https://api.openai.com/v1)"
    )
    parser.add_argument("--api-key", help="API key (default: FAIRLENS_JUDGE_API_KEY, else OPENAI_API_KEY)")
    parser.add_argument("--temperature", type=float, help=f"judge temperature (default {DEFAULTS['temperature']:g})")
    parser.add_argument(
        "--max-tokens", type=int, help=f"reply token limit (default {DEFAULT_MAX_TOKENS}; 8192 for reasoning models)"
    )
    parser.add_argument(
        "--json-mode", choices=["1", "0"], help="ask the endpoint for response_format json_object (default 1)"
    )
    parser.add_argument("--concurrency", type=int, help=f"HTTP requests in flight (default {DEFAULTS['concurrency']})")
    parser.add_argument("--timeout", type=float, help=f"seconds per HTTP request (default {DEFAULTS['timeout']:g})")
    parser.add_argument(
        "--retries", type=int, help=f"HTTP retries on timeouts, 429 and 5xx (default {DEFAULTS['retries']})"
    )
    parser.add_argument(
        "--attempts",
        type=int,
        help=f"judge replies per step before an answer is unjudged (default {DEFAULTS['attempts']})",
    )
    parser.add_argument("--device", help="device of an hf: judge (cpu, cuda, auto; default auto)")
    parser.add_argument("--cache", help="the judgement cache file (default: under the fairness-evals cache folder)")
    parser.add_argument(
        "--retry-unjudged",
        action="store_true",
        help="judge again answers whose cached judgement was invalid or refused",
    )
    parser.add_argument(
        "--out",
        help="write the metrics JSON here instead of standard output (with score_inputs: the answers files judged and "
        "the judgement cache, so that fairness-evals compare can take this file as a run)",
    )
    parser.add_argument("--details", help="also write one JSON line per answer with its judgement here")
    run_files.add_selection_arguments(parser)
    run_files.add_metadata_argument(parser, '{"fairlens_min_judged": 0.8}')
    corpus = parser.add_argument_group("documents of a responses file (the settings fairness-evals export used)")
    add_corpus_arguments(corpus, required=False, why=" (needed for responses files only)")


def _settings(args: argparse.Namespace) -> Any:
    values: dict[str, Any] = {}
    names: dict[str, str] = {}
    for key, env_name in ENV.items():
        given = getattr(args, key, None)
        if given is not None:
            values[key], names[key] = given, CLI[key]
        else:
            values[key], names[key] = os.environ.get(env_name), env_name
    settings = build_judge_settings(values, names)
    if settings is None:
        raise ValueError(
            "no judge: give --judge openai:MODEL (an OpenAI-compatible endpoint) or hf:PATH (a local model), "
            "or set FAIRLENS_JUDGE"
        )
    return settings


class _Progress:
    """A status line on stderr at most every few seconds."""

    def __init__(self, total: int, every: float = 5.0) -> None:
        self.total, self.every, self.last = total, every, 0.0

    def __call__(self, stats: Any) -> None:
        now = time.monotonic()
        if now - self.last >= self.every or stats.done == self.total:
            self.last = now
            print(
                f"fairlens judge: {stats.done}/{self.total} answers ({stats.cached} cached, {stats.invalid} invalid, "
                f"{stats.refused} refused, {stats.errors} failed calls), {stats.calls} judge calls",
                file=sys.stderr,
            )


def answers_of_responses(
    files: list[run_files.InputFile], args: argparse.Namespace, *, notes: bool = True
) -> dict[str, Any]:
    """The open-ended answers of responses files, per task (:class:`~fairlens_tasks.judging.samples.TaskAnswers`),
    for the documents of the corpus options; closed-ended ids are skipped, any other id is an error. ``notes``:
    say on standard error what was skipped or left unanswered."""
    from fairlens_tasks.commands import chosen_domains, corpus_settings
    from fairlens_tasks.corpus import load_corpus
    from fairlens_tasks.documents import iter_documents
    from fairlens_tasks.judging.responses import answers_from_replies, open_documents_by_task

    lines = list(run_files.read_lines(files))  # bad input fails before the corpus is loaded
    if not args.corpus:
        raise ValueError(
            f"{files[0].path}: a responses file is judged against the documents it answers: give --corpus (and the "
            "--sample-fraction, --seed, ... that fairness-evals export fairlens used)"
        )
    corpus = load_corpus(corpus_settings(args))
    domains = chosen_domains(args)
    docs_by_task = open_documents_by_task(corpus, domains)
    known = {doc["id"] for docs in docs_by_task.values() for doc in docs}
    closed = {doc["id"] for domain in domains for doc in iter_documents(corpus, domain)}
    answers = jsonio.Answers()
    skipped = 0
    for line in lines:
        row = line.row
        if not isinstance(row, dict) or "id" not in row or "response" not in row:
            raise ValueError(f'{line.where}: expected a JSON object {{"id", "response"}}')
        doc_id, reply = str(row["id"]), row["response"]
        if doc_id in closed:
            skipped += 1
            continue
        if doc_id not in known:
            raise ValueError(f"{line.where}: id {doc_id!r} is not an open-ended document of this corpus and settings")
        if reply is not None and not isinstance(reply, str):
            raise ValueError(f"{line.where}: the response of {doc_id!r} is {type(reply).__name__}, not text")
        answers.add(doc_id, reply, line.where, repr(doc_id))
    answers.check()
    if skipped and notes:
        run_files.note(PROG, f"skipped {skipped} closed-ended answers (score them with fairness-evals score fairlens)")
    if not answers:
        raise ValueError(f"no open-ended responses in {', '.join(str(f.path) for f in files)}")
    tasks = answers_from_replies(docs_by_task, answers.replies)
    for task, docs in docs_by_task.items():
        answered = len(tasks[task].ids) if task in tasks else 0
        if notes and answered and answered < len(docs):
            run_files.note(PROG, f"{task}: {answered} of {len(docs)} documents answered")
    return tasks


def input_files(args: argparse.Namespace) -> list[run_files.InputFile]:
    """The samples and responses files ``args.paths`` name (one model and run: ``--model`` / ``--run``)."""
    found = run_files.input_files(args.paths, SAMPLE_TASKS, "lmms-eval samples_fairlens_open_*.jsonl file")
    return run_files.select_runs(found, model=args.model, run=args.run, prog=PROG)


def answers_of_files(
    files: list[run_files.InputFile], args: argparse.Namespace, *, notes: bool = True
) -> dict[str, Any]:
    """The answers per task of ``files`` (samples files; responses files with the corpus options of ``args``): the
    one path of ``judge`` and ``compare``. A task answered by both kinds is an error."""
    from fairlens_tasks.judging.samples import read_answers

    samples = [f for f in files if f.is_samples]
    responses = [f for f in files if not f.is_samples]
    tasks: dict[str, Any] = read_answers([(f.path, str(f.task)) for f in samples]) if samples else {}
    if responses:
        more = answers_of_responses(responses, args, notes=notes)
        both = sorted(set(more) & set(tasks))
        if both:
            raise ValueError(
                f"{responses[0].path} and the samples files both answer {', '.join(both)}: judge one or the other"
            )
        tasks.update(more)
    return tasks


#: The ``score_inputs`` benchmark of a judge output (``fairness-evals compare`` reads it with :func:`compare_records`).
BENCHMARK = "fairlens_judge"


def recorded_settings(
    args: argparse.Namespace, files: list[run_files.InputFile], metadata: dict[str, Any], cache: Path
) -> dict[str, Any]:
    """The settings a judge output records (``score_inputs.settings``): ``--metadata`` and the judgement cache file
    (absolute); when ``files`` hold a responses file, also the corpus options its documents were built from (paths
    absolute) and the domains (samples files carry their records: no corpus options)."""
    from fairlens_tasks.commands import recorded_corpus

    settings: dict[str, Any] = {"metadata": metadata, "cache": str(Path(cache).expanduser().resolve())}
    if any(not f.is_samples for f in files):
        settings.update(recorded_corpus(args))
    return settings


def compare_records(recorded: dict[str, Any], files: list[run_files.InputFile]) -> dict[str, dict[str, Any]]:
    """Every task's answers of a judge output (document id -> [record, answer text], as the samples log them),
    read again from its recorded ``files`` and settings by the path ``judge`` took (:func:`answers_of_files`), for
    ``fairness-evals compare``; the judgements are read from the recorded cache there."""
    from fairlens_tasks.commands import corpus_options

    settings = recorded.get("settings")
    if not isinstance(settings, dict):
        raise ValueError(f"{run_files.SCORE_INPUTS} records no settings")
    tasks = answers_of_files(files, corpus_options(settings), notes=False)
    return {
        task: {doc_id: [list(record), text] for doc_id, record, text in zip(a.ids, a.records, a.texts, strict=True)}
        for task, a in tasks.items()
    }


def run(args: argparse.Namespace) -> int:
    from fairlens_tasks.judging.pipeline import REFUSED
    from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION
    from fairlens_tasks.judging.results import distinct_texts, judge_answers, judged_results
    from fairlens_tasks.judging.runner import counted

    metadata = run_files.metadata(args.metadata, "fairlens_")
    scoring = run_files.share_settings(metadata, SCORING_KEYS, what="a setting of the judged scores", command="judge")
    settings = _settings(args)
    files = input_files(args)
    tasks = answers_of_files(files, args)
    texts = distinct_texts(tasks)
    total = sum(len(a.ids) for a in tasks.values())
    print(
        f"fairlens judge: {total} answers of {', '.join(sorted(tasks))} ({len(texts)} distinct); judge {settings.name}, "
        f"prompt {JUDGE_PROMPT_VERSION}, cache {settings.cache}",
        file=sys.stderr,
    )
    outcomes, stats = judge_answers(tasks, settings, retry_unjudged=args.retry_unjudged, progress=_Progress(len(texts)))
    print(f"fairlens judge: {stats.summary()}", file=sys.stderr)
    refusals = Counter(o.problem for rid, o in outcomes.items() if rid in texts and o.status == REFUSED)
    if refusals:
        print(
            f"fairlens judge: the judge refused {sum(refusals.values())} of {len(texts)} distinct answers: "
            f"{counted(refusals)}; the bias scores of their tasks are withheld, refusals being no random sample "
            "(fairlens_tasks/README.md, 'How judge refusals count'): judge with a judge that does not refuse, or "
            "ask again with --retry-unjudged",
            file=sys.stderr,
        )
    results: dict[str, Any] = judged_results(tasks, outcomes, settings, **scoring)
    recorded = recorded_settings(args, files, metadata, settings.cache)
    results[run_files.SCORE_INPUTS] = run_files.score_inputs(BENCHMARK, files, recorded)
    write_json(results, args.out)
    if args.details:
        _write_details(Path(args.details), tasks, outcomes)
    if stats.stopped:
        print(
            f"fairlens judge: stopped early ({stats.stopped}); the output counts the rest as unjudged; "
            "what was judged is cached: rerun to resume",
            file=sys.stderr,
        )
        return 1
    if refusals:
        return 3
    return _left_unjudged(texts, outcomes)


def _left_unjudged(texts: dict[str, str], outcomes: dict[str, Any]) -> int:
    """Exit status 1, saying so, when an answer of ``texts`` has no judgement (an invalid reply after every attempt, a
    failed call); else 0."""
    from fairlens_tasks.judging.pipeline import ERROR, INVALID
    from fairlens_tasks.judging.runner import counted

    why = {INVALID: "invalid replies after every attempt", ERROR: "failed calls"}
    left = Counter(
        why.get(outcome.status, outcome.status) if outcome is not None else "not judged"
        for outcome in (outcomes.get(rid) for rid in texts)
        if outcome is None or outcome.status in why
    )
    if not left:
        return 0
    print(
        f"fairlens judge: {sum(left.values())} of {len(texts)} distinct answers are left unjudged ({counted(left)}); "
        "the output counts them as unjudged. Rerun to retry failed calls (judged answers come from the cache); "
        "--retry-unjudged also asks again about invalid replies",
        file=sys.stderr,
    )
    return 1


def _write_details(path: Path, tasks: dict[str, Any], outcomes: dict[str, Any]) -> None:
    from fairlens_tasks import open_scoring

    f = open_scoring._F

    def lines() -> Iterator[dict[str, Any]]:
        for task, answers in tasks.items():
            for doc_id, record, text in zip(answers.ids, answers.records, answers.texts, strict=True):
                outcome = outcomes.get(record[f["response_id"]])
                line: dict[str, Any] = {
                    "task": task, "id": doc_id, "response_id": record[f["response_id"]],
                    "declined": open_scoring.declined_reason(record[f["question"]], text),
                }  # fmt: skip
                if outcome is None:
                    line.update(status="not judged (the run stopped early)", score=None)
                else:
                    line.update(score=outcome.score, **outcome.to_json())
                yield line

    write_lines(lines(), path, sort_keys=False)
