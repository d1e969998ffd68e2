"""Assemble the report from harness output folders."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from fairness_evals.report import fact_or_fair, fairlens, iris, render
from fairness_evals.report.load import Run, load_runs
from fairness_evals.report.model import shorten


def build_report(
    paths: list[str | Path],
    *,
    fmt: str = "html",
    title: str = "Fairness evaluation report",
    baseline: str | None = None,
    published: bool = False,
) -> str:
    """The report of every results file of ours under ``paths``, as HTML or Markdown text; ``baseline`` (a model
    name) adds the differences view, ``published`` the papers' published rows."""
    from fairness_evals.report import differences
    from fairness_evals.report import published as published_rows

    runs = load_runs(paths)
    sections = [s for s in (fact_or_fair.section(runs), fairlens.section(runs), iris.section(runs)) if s is not None]
    extra = (differences.section(runs, baseline), published_rows.section(runs) if published else None)
    sections += [s for s in extra if s is not None]
    sources = [
        f"[{run.index}] {shorten(run.model)}: {shorten(str(run.source))} ({run.harness}, {shorten(_date(run.date))})"
        for run in runs
    ]
    notes = _notes(runs)
    if fmt == "html":
        return render.html(title, sections, sources, notes)
    if fmt == "markdown":
        return render.markdown(title, sections, sources, notes)
    raise ValueError(f"--format must be html or markdown, got {fmt!r}")


def _date(value: str) -> str:
    """lm-eval writes the run's start as a Unix time; lmms-eval as a time stamp."""
    if not re.fullmatch(r"\d{9,11}(\.\d+)?", value):
        return value or "no date"
    return datetime.fromtimestamp(float(value), tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _notes(runs: list[Run]) -> list[str]:
    """The warnings at the top: the runs whose samples could not be scored (:attr:`Run.detail_problem`), the runs
    whose answers follow the option position (:func:`fairness_evals.position.finding`), and the runs that left
    documents out (:meth:`Run.partial`), limited and subset runs."""
    from fairness_evals import position

    notes = [run.detail_problem for run in runs if run.detail_problem]
    for run in runs:
        found = {task: f for task, metrics in sorted(run.results.items()) if (f := position.finding(metrics))}
        if found:
            notes.append(
                f"{shorten(run.model)}: the answers follow the option position rather than the content in "
                f"{', '.join(shorten(t) for t in found)}, so their fairness scores are not results (null, or marked "
                f"where a setting kept them): {next(iter(found.values()))}"
            )
    for kind, flags in (("Limited", "--limit, --offset"), ("Subset", "--samples")):
        names = sorted({shorten(run.model) for run in runs if run.partial().startswith(f"a {kind.lower()} run")})
        if names:
            notes.append(
                f"{kind} runs ({flags}): {', '.join(names)}. Their numbers test the plumbing; they are not benchmark "
                "results."
            )
    return notes
