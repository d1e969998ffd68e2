"""``fairness-evals judge``: judge the saved answers of FairLens open-ended runs; resumable.

::

    fairness-evals judge results/ --judge openai:gpt-5-mini                         # OPENAI_API_KEY set
    fairness-evals judge results/ --judge openai:Qwen/Qwen2.5-7B-Instruct --base-url http://localhost:8000/v1
    fairness-evals judge results/ --judge hf:/models/Qwen2.5-1.5B-Instruct --out judged.json

Reads the ``samples_fairlens_open_*.jsonl`` files of lmms-eval ``--log_samples`` output folders (no corpus
options: the samples carry the records), judges every distinct answer not already in the judgement cache
(:mod:`.runner`), and prints ``{task: {metric: value}}`` with the metric names and code of a judged harness
run (:func:`fairlens_tasks.open_scoring.compute_open_metrics`), plus the ``fairlens_open`` roll-ups when all
three domains are there. Every option falls back to its ``FAIRLENS_JUDGE*`` variable
(:mod:`.config`). Exit status 0 when judging finished (unjudged answers are counted in the output); 1 when
it stopped early because calls kept failing (the output is still written; rerun to resume); 2 for a user
error, named in one line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from fairlens_tasks.judging.config import CLI, DEFAULT_MAX_TOKENS, DEFAULTS, ENV, build_judge_settings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="+", metavar="RESULTS",
        help="lmms-eval --log_samples output folders, or samples_fairlens_open_<domain>.jsonl files",
    )  # fmt: skip
    parser.add_argument("--judge", help="openai:MODEL (an OpenAI-compatible endpoint) or hf:PATH (a local model)")
    parser.epilog = (
        "Every option falls back to its FAIRLENS_JUDGE_* environment variable (fairlens_tasks/README.md, "
        "'Open-ended questions'). Exit status: 0 judged, 1 stopped early (rerun to resume), 2 user error."
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
        "--retry-unjudged", action="store_true", help="judge again answers whose cached judgement was invalid"
    )
    parser.add_argument("--out", help="write the metrics JSON here instead of standard output")
    parser.add_argument("--details", help="also write one JSON line per answer with its judgement here")


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
                f"{stats.errors} failed calls), {stats.calls} judge calls",
                file=sys.stderr,
            )


def run(args: argparse.Namespace) -> int:
    from fairlens_tasks.judging.cache import JudgmentCache
    from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION
    from fairlens_tasks.judging.runner import judge_texts
    from fairlens_tasks.judging.samples import read_answers
    from fairlens_tasks.open_scoring import ROLLUPS, compute_open_metrics, pooled_over_domains
    from fairlens_tasks.scoring import PROVENANCE
    from fairness_evals.aggregation import provenance_value

    settings = _settings(args)
    tasks = read_answers(args.paths)
    texts: dict[str, str] = {}
    for answers in tasks.values():
        texts.update((record[5], text) for record, text in zip(answers.records, answers.texts, strict=True))
    total = sum(len(a.ids) for a in tasks.values())
    print(
        f"fairlens judge: {total} answers of {', '.join(sorted(tasks))} ({len(texts)} distinct); judge {settings.name}, "
        f"prompt {JUDGE_PROMPT_VERSION}, cache {settings.cache}",
        file=sys.stderr,
    )
    with JudgmentCache(settings.cache) as cache:
        outcomes, stats = judge_texts(
            texts, settings, cache, retry_unjudged=args.retry_unjudged, progress=_Progress(len(texts))
        )
    print(f"fairlens judge: {stats.summary()}", file=sys.stderr)
    results: dict[str, dict[str, Any]] = {}
    order = ("fairlens_open_hiring", "fairlens_open_legal", "fairlens_open_healthcare")
    for task in sorted(tasks, key=order.index):
        answers = tasks[task]
        metrics: dict[str, Any] = dict(compute_open_metrics(answers.records, outcomes, task=task))
        metrics.update(
            judge=settings.name, judge_prompt_version=JUDGE_PROMPT_VERSION, judge_settings=settings.recorded_json()
        )
        for name in PROVENANCE:
            metrics[name] = provenance_value(name, answers.provenance[name], task=task)
        results[task] = metrics
    if len(results) == 3:
        sizes = [results[t]["answers"] for t in order]
        results["fairlens_open"] = {
            name: pooled_over_domains([results[t][name] for t in order], sizes) for name in ROLLUPS
        }
    text = json.dumps(results, indent=2) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.details:
        _write_details(Path(args.details), tasks, outcomes)
    if stats.stopped:
        print(
            f"fairlens judge: stopped early ({stats.stopped}); the output counts the rest as unjudged; "
            "what was judged is cached: rerun to resume",
            file=sys.stderr,
        )
        return 1
    return 0


def _write_details(path: Path, tasks: dict[str, Any], outcomes: dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for task, answers in tasks.items():
            for doc_id, record in zip(answers.ids, answers.records, strict=True):
                outcome = outcomes.get(record[5])
                line: dict[str, Any] = {"task": task, "id": doc_id, "response_id": record[5]}
                if outcome is None:
                    line.update(status="not judged (the run stopped early)", score=None)
                else:
                    line.update(score=outcome.score, **outcome.to_json())
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
