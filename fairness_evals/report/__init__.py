"""``fairness-evals report``: the papers' views of one or more harness output folders, side by side.

:mod:`.load` reads lm-eval and lmms-eval results files and Inspect logs; each benchmark's own report module (the
``report`` hook of its :class:`fairness_evals.benchmarks.Benchmark`) turns them into tables and figures (plain data,
:mod:`.model`), drawn with the parts of :mod:`.svg`; :mod:`.render` writes one self-contained HTML file (works
offline, no scripts, no external resources) or Markdown for pull requests and model cards. Every number is copied
unchanged from a results file, except a few plain means that a view computes and marks as such; each shows its
denominator, and provenance tables give the seed and data version that produced it.
:func:`.load.load_runs` makes the runs of one model that cover different tasks one model row.
"""

from fairness_evals.report.build import build_report

__all__ = ["build_report"]
