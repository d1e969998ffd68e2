"""``fairness-evals compare RUN_A RUN_B [RUN_C ...] [--baseline RUN] [--alpha 0.05] [--json FILE]``.

A RUN is a harness output folder or results file (with ``--log_samples``), a ``fairness-evals score`` output or a
``fairness-evals judge --out`` output (:mod:`fairness_evals.compare.runs`). ``--judge-cache PATH`` names the
judgement cache that judged runs' judgements are read from (FairLens open-ended: its ``compare`` adapter)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairness_evals import jsonio


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs", nargs="+", metavar="RUN",
        help="lm-eval / lmms-eval --output_path folder or results file of one model, run with --log_samples; an "
        "Inspect log (or a folder of one model's logs); or a "
        "`fairness-evals score` or `fairness-evals judge --out` output (its JSON file: the responses or samples it "
        "recorded are read again and checked)",
    )  # fmt: skip
    parser.add_argument(
        "--baseline", metavar="RUN",
        help="compare every other run against this one (a RUN as given, or its model name; default: the first)",
    )  # fmt: skip
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="family-wise error level of the verdicts (default 0.05)"
    )
    parser.add_argument(
        "--metrics", action="append", default=[], metavar="PATTERN",
        help="compare these metrics instead of the headline ones: glob over 'metric' or 'task/metric' (repeatable); "
        "a smaller family chosen before looking gives the verdicts more power",
    )  # fmt: skip
    parser.add_argument(
        "--unpaired", action="store_true",
        help="resample each run on its own (runs on different documents, seeds or data versions; wider intervals)",
    )  # fmt: skip
    parser.add_argument(
        "--judge-cache", metavar="PATH",
        help="FairLens open-ended: read each answer's judgement from this judgement cache file (default: the cache a "
        "judge output recorded, else FAIRLENS_JUDGE_CACHE, else the default cache); only read, never created",
    )  # fmt: skip
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    parser.add_argument(
        "--json", metavar="FILE", help="also write the comparison as strict JSON here ('-': standard output)"
    )
    parser.add_argument("--out", metavar="FILE", help="write the Markdown table here instead of standard output")


def run(args: argparse.Namespace) -> int:
    from fairness_evals.compare.comparison import Options, compare_pair
    from fairness_evals.compare.engine import NotPaired
    from fairness_evals.compare.runs import load_run
    from fairness_evals.compare.table import document, markdown

    if len(args.runs) < 2:
        raise ValueError("compare needs at least two runs")
    if not 0.0 < args.alpha < 1.0:
        raise ValueError(f"--alpha must lie strictly between 0 and 1, got {args.alpha}")
    if args.resamples < 100:
        raise ValueError(f"--resamples must be at least 100, got {args.resamples}")
    if args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {args.seed}")
    judge_cache = None
    if args.judge_cache is not None:
        judge_cache = Path(args.judge_cache).expanduser()
        if not judge_cache.is_file():
            raise ValueError(
                f"--judge-cache {args.judge_cache}: no such file (compare reads a judgement cache, never creates one)"
            )
    runs = [load_run(path) for path in args.runs]
    for run_input in runs:
        for task in run_input.tasks.values():
            task.judge_cache = judge_cache
    _label(runs)
    seen: dict[Path, object] = {}
    for path, run_input in zip(args.runs, runs, strict=True):
        for task in run_input.tasks.values():
            key = task.source.resolve()
            if key in seen and seen[key] is not run_input:
                raise ValueError(f"{path} and {seen[key].path} are the same run ({task.source}); give each run once")
            seen[key] = run_input
    baseline = _baseline(runs, args.baseline)
    options = Options(args.alpha, args.resamples, args.seed, args.unpaired, tuple(args.metrics))
    results = []
    for other in runs:
        if other is baseline:
            continue
        try:
            rows, notes = compare_pair(baseline, other, options)
        except NotPaired as error:
            raise ValueError(
                f"{other.path} against {baseline.path}: not the same documents: {error}. A paired comparison needs "
                "runs on the same documents; --unpaired compares them as independent samples"
            ) from None
        if not rows:
            raise ValueError(
                f"{other.path} against {baseline.path}: nothing to compare: {_why_empty(baseline, other, options)}"
            )
        results.append((other, rows, notes))
    text = markdown(baseline, results, options)
    if args.json:
        jsonio.write_json(document(runs, baseline, results, options), None if args.json == "-" else args.json)
    if args.out:
        jsonio.write_text(text, args.out)  # whole or not at all
    elif args.json != "-":
        sys.stdout.write(text)
    return 0


def _why_empty(baseline, other, options) -> str:
    """Why two runs gave no row: no task in common that compare knows, or no metric to compare in those they share."""
    from fairness_evals.compare.comparison import adapter_of
    from fairness_evals.report.model import shorten

    def tasks(run) -> str:
        known = sorted(t for t in run.tasks if adapter_of(t) is not None)
        return shorten(", ".join(known), 200) or "none that compare knows"

    shared = sorted(t for t in set(baseline.tasks) & set(other.tasks) if adapter_of(t) is not None)
    if not shared:
        return f"the runs share no task (baseline: {tasks(baseline)}; other run: {tasks(other)})"
    tasks_shared = shorten(", ".join(shared), 200)
    if options.metrics:
        return f"--metrics {' '.join(options.metrics)} match no metric of the tasks both runs report ({tasks_shared})"
    return f"the tasks both runs report have no headline metric (a <name> with its <name>_coverage): {tasks_shared}"


def _label(runs: list) -> None:
    """Each run's label: its model name, or the path given where two runs share a model name."""
    names = [r.model for r in runs]
    for r in runs:
        r.label = r.model if names.count(r.model) == 1 else r.path


def _baseline(runs: list, wanted: str | None):
    if wanted is None:
        return runs[0]
    matches = [
        r for r in runs if wanted in (r.path, r.label, r.model) or Path(wanted).resolve() == Path(r.path).resolve()
    ]
    if len(matches) != 1:
        choices = ", ".join(f"{r.label} = {r.path} ({r.model})" for r in runs)
        what = "matches no run" if not matches else "matches several runs"
        raise ValueError(f"--baseline {wanted}: {what}; runs: {choices}")
    return matches[0]
