"""``fairness-evals report``: the papers' views of one or more harness output folders, side by side.

:mod:`.load` reads lm-eval and lmms-eval results files; :mod:`.fact_or_fair`, :mod:`.fairlens` and
:mod:`.iris` turn them into tables and figures (plain data); :mod:`.svg` draws the figures as inline SVG;
:mod:`.render` writes one self-contained HTML file (works offline, no scripts, no external resources) or
Markdown for pull requests and model cards. Every number comes from a results file unchanged (the report
never recomputes a metric), with its denominator and the seed and data version that produced it.
"""

from fairness_evals.report.build import build_report

__all__ = ["build_report"]
