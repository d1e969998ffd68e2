"""``fairness-evals iris-profile RESULTS...``: the IRIS fairness-space profile and IRIS-MBTI codes.

RESULTS are lmms-eval (or lm-eval) output folders or results files of the understanding tasks
(``iris_ifs_und``, ``iris_rfs_und``, ``iris_bis_und``) and of the generation tasks, for one model. Prints
the six dimension scores and, per sector with all three scores, the IRIS-MBTI code and archetype
(:mod:`iris_tasks.profile`). Errors are one line (exit status 2, from the ``fairness-evals`` CLI).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from iris_tasks.profile import as_text, profile, read_scores
from metrics.iris import MBTI_THRESHOLD


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", help="lmms-eval output folders or results JSON files (one model)")
    parser.add_argument("--format", choices=["text", "json"], default="text", help="output format (default text)")
    parser.add_argument("--out", help="write here instead of standard output")
    parser.add_argument("--name", help="model name to print (default: from the results files)")
    parser.add_argument(
        "--threshold", type=float, default=MBTI_THRESHOLD,
        help=f"IRIS-MBTI threshold tau (default {MBTI_THRESHOLD:g}, the paper's)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if not math.isfinite(args.threshold):
        raise ValueError(f"--threshold must be a finite number, got {args.threshold}")
    result = profile(read_scores(args.results), threshold=args.threshold, name=args.name)
    text = json.dumps(result, indent=2) + "\n" if args.format == "json" else as_text(result)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
