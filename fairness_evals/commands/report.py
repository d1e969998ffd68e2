"""``fairness-evals report FOLDER... [--out FILE] [--format html|markdown]``."""

from __future__ import annotations

import argparse
import sys

from fairness_evals import jsonio, run_files
from fairness_evals.report.build import build_report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    run_files.add_runs_argument(parser, "folders")
    parser.add_argument("--out", help="write here (default: report.html or report.md); '-' for standard output")
    parser.add_argument("--format", choices=["html", "markdown"], default="html")
    parser.add_argument("--title", default="Fairness evaluation report")
    parser.add_argument("--baseline", metavar="MODEL", help="add the differences view: every model against this one")
    parser.add_argument("--published", action="store_true", help="add the papers' published rows (never compared)")


def run(args: argparse.Namespace) -> int:
    text = build_report(
        args.folders, fmt=args.format, title=args.title, baseline=args.baseline, published=args.published
    )
    out = args.out or ("report.html" if args.format == "html" else "report.md")
    if out == "-":
        sys.stdout.write(text)
    else:
        jsonio.write_text(text, out)  # whole or not at all
        print(out)
    return 0
