"""Assemble the report from harness output folders."""

from __future__ import annotations

from pathlib import Path

from fairness_evals.report import fact_or_fair, fairlens, iris, render
from fairness_evals.report.load import Run, load_runs


def build_report(paths: list[str | Path], *, fmt: str = "html", title: str = "Fairness evaluation report") -> str:
    """The report of every results file of ours under ``paths``, as HTML or Markdown text."""
    runs = load_runs(paths)
    sections = [s for s in (fact_or_fair.section(runs), fairlens.section(runs), iris.section(runs)) if s is not None]
    sources = [f"{run.model}: {run.source} ({run.harness}, {run.date})" for run in runs]
    notes = _notes(runs)
    if fmt == "html":
        return render.html(title, sections, sources, notes)
    if fmt == "markdown":
        return render.markdown(title, sections, sources, notes)
    raise ValueError(f"--format must be html or markdown, got {fmt!r}")


def _notes(runs: list[Run]) -> list[str]:
    limited = [run for run in runs if run.limit]
    if not limited:
        return []
    names = ", ".join(sorted({run.model for run in limited}))
    return [f"Limited runs (--limit): {names}. Their numbers test the plumbing; they are not benchmark results."]
