"""``fairness-evals iris-profile RESULTS...``: the IRIS fairness-space profile and IRIS-MBTI codes.

RESULTS are lmms-eval (or lm-eval) output folders or results files of the understanding tasks
(``iris_ifs_und``, ``iris_rfs_und``, ``iris_bis_und``) and of the generation tasks, or files written by
``fairness-evals score iris``, for one model. Prints the six dimension scores with their coverage and, per sector
with all three scores covered, the IRIS-MBTI code and archetype (:mod:`iris_tasks.profile`). Errors are one line
(exit status 2, from the ``fairness-evals`` CLI).
"""

from __future__ import annotations

import argparse
import math

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
    result = profile(found, threshold=args.threshold, name=args.name, min_coverage=args.min_coverage)
    text = dumps(result, indent=2) + "\n" if args.format == "json" else as_text(result)
    write_text(text, args.out)
    return 0
