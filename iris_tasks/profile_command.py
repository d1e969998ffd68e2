"""``fairness-evals iris-profile RESULTS...``: the IRIS fairness-space profile and IRIS-MBTI codes.

RESULTS are lmms-eval (or lm-eval) output folders or results files of the understanding tasks
(``iris_ifs_und``, ``iris_rfs_und``, ``iris_bis_und``) and of the generation tasks, or files written by
``fairness-evals score iris``, for one model. Prints the six dimension scores with their coverage and, per sector
with all three scores covered, the IRIS-MBTI code and archetype (:mod:`iris_tasks.profile`). Errors are one line
(exit status 2, from the ``fairness-evals`` CLI).

A run that left documents out (``--limit``, ``--samples``, ``--offset``: :meth:`fairness_evals.report.load.Run.partial`,
as ``check`` reads it; a ``score`` output whose provenance records a limit) is refused with one line: its scores
are not benchmark results. ``--allow-limited`` shows its dimension scores with a note and no IRIS-MBTI code or
archetype (a verdict on a few documents would read as a result).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

# Building the parser imports nothing heavy (metrics.iris loads numpy and scipy): `--help` stays instant.


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results", nargs="+", help="lmms-eval output folders, results JSON files or `score iris` outputs (one model)"
    )
    parser.add_argument("--format", choices=["text", "json"], default="text", help="output format (default text)")
    parser.add_argument("--out", help="write here instead of standard output")
    parser.add_argument("--name", help="model name to print (default: from the results files)")
    parser.add_argument(
        "--threshold", type=float, default=None, help="IRIS-MBTI threshold tau (default: the paper's, 60)"
    )
    parser.add_argument(
        "--allow-mixed-models", action="store_true",
        help="combine results that name different models (e.g. images made elsewhere, scored with from_folder)",
    )  # fmt: skip
    parser.add_argument(
        "--min-coverage", type=float, default=None,
        help="least score coverage for a letter, where a result does not record its own min_coverage "
        "(default: iris_min_coverage's default, iris_tasks.profile.DEFAULT_MIN_COVERAGE)",
    )  # fmt: skip
    parser.add_argument(
        "--allow-limited", action="store_true",
        help="show the scores of a run that left documents out (--limit, --samples, --offset), with a note and no "
        "IRIS-MBTI code; by default such a run is refused",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from fairness_evals.jsonio import dumps, write_text
    from iris_tasks.profile import DEFAULT_MIN_COVERAGE, as_text, profile, read_scores
    from metrics.iris import MBTI_THRESHOLD

    if args.threshold is None:
        args.threshold = MBTI_THRESHOLD
    if args.min_coverage is None:
        args.min_coverage = DEFAULT_MIN_COVERAGE
    if not math.isfinite(args.threshold):
        raise ValueError(f"--threshold must be a finite number, got {args.threshold}")
    if not 0.0 <= args.min_coverage <= 1.0:
        raise ValueError(f"--min-coverage must be a share in [0, 1], got {args.min_coverage}")
    found = read_scores(args.results, allow_mixed_models=args.allow_mixed_models)
    limited = limited_runs(sorted({hit.source for hit in found.values()}))
    if limited and not args.allow_limited:
        raise ValueError(
            f"{limited[0]}: its scores are not benchmark results, so it gets no IRIS profile (--allow-limited shows "
            "the scores without an IRIS-MBTI code)"
        )
    result = profile(found, threshold=args.threshold, name=args.name, min_coverage=args.min_coverage, limited=limited)
    text = dumps(result, indent=2) + "\n" if args.format == "json" else as_text(result)
    write_text(text, args.out)
    return 0


def limited_runs(sources: list[str]) -> list[str]:
    """``<file>: <how>`` for each of ``sources`` that left documents out: a harness results file as ``check`` reads
    it (:meth:`fairness_evals.report.load.Run.partial`), a ``score`` output whose provenance records a limit."""
    from fairness_evals.report.load import ReportInputError, load_results_file

    out = []
    for source in sources:
        path = Path(source)
        try:
            how = load_results_file(path, detail=False).partial()
        except ReportInputError:  # a score output: no harness results table
            how = _recorded_limit(path)
        if how:
            out.append(f"{source}: {how}")
    return out


def _recorded_limit(path: Path) -> str:
    """How a ``fairness-evals score`` output's provenance says its run left documents out ("" when it does not)."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    provenance = data.get("provenance") if isinstance(data, dict) else None
    for task, entry in (provenance or {}).items() if isinstance(provenance, dict) else ():
        if not isinstance(entry, dict):
            continue
        for key, flag in (("limit", "--limit"), ("samples", "--samples"), ("limited", "limited")):
            if entry.get(key) not in (None, "", -1):
                return f"a limited run ({flag} {entry[key]}; {task})"
    return ""
