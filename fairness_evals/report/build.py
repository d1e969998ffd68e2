"""Assemble the report from harness output folders."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from fairness_evals.benchmarks import hooks, ours
from fairness_evals.report import reading, render
from fairness_evals.report.load import Run, load_runs
from fairness_evals.report.model import Section, shorten


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
    sections = [s for _, view in hooks("report") if (s := view(runs)) is not None]
    guide = reading.section(runs) if sections else None
    sections = ([guide] if guide is not None else []) + sections
    extra = (differences.section(runs, baseline), published_rows.section(runs) if published else None)
    sections += [s for s in extra if s is not None]
    sources = [
        f"[{run.index}] {shorten(run.model)}: {shorten(str(run.source))} ({run.harness}, {shorten(_date(run.date))})"
        for run in runs
    ]
    notes = _notes(runs) + not_shown(runs, sections)
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
    whose answers follow the option position (:func:`fairness_evals.position.finding`), the runs that left documents
    out (:meth:`Run.partial`), limited and subset runs, and the few-shot runs (:meth:`Run.few_shot`)."""
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
    few_shot = sorted({shorten(run.model) for run in runs if run.few_shot()})
    if few_shot:
        from fairness_evals.detail import FEW_SHOT

        notes.append(f"Few-shot runs (n-shot above 0): {', '.join(few_shot)}. {FEW_SHOT[0].upper()}{FEW_SHOT[1:]}.")
    return notes


_NAME = re.compile(r"[A-Za-z0-9_]+")


def not_shown(runs: list[Run], sections: list[Section]) -> list[str]:
    """One note per task of ours that a run reports and no table of the report shows, with the reason. A task is
    shown when a table cell copies one of its numbers (its ``source``) or names it; a group is shown when its tasks
    are (nested groups expanded: :func:`_leaves`)."""
    from fairness_evals import statistics

    shown: set[str] = set()
    for table in (t for section in sections for t in section.tables):
        for cell in (c for row in table.rows for c in row):
            if cell.source:
                shown.add(cell.source.split("|")[1])
            shown.update(_NAME.findall(cell.text))
    out = []
    for run in runs:
        for task in sorted(t for t in run.results if ours(t) and t not in shown):
            try:
                declared = statistics.task(task)
            except KeyError:
                declared = None
            if declared is not None and declared.members and all(m in shown for m in _leaves(task)):
                continue
            metrics = run.results[task]
            if not [name for name in metrics if name not in ("alias", "name", "sample_len")] or "bypass" in metrics:
                why = "the run scored nothing for it (lm-eval --predict_only)"
            elif declared is None:
                why = "not a task of this version of fairness-evals"
            else:
                why = "this report has no table for it; `fairness-evals score <run folder>` writes every statistic"
            out.append(f"Not shown: {shorten(task)} of {shorten(run.model)} [{run.index}]: {why}.")
    return out


def _leaves(group: str) -> list[str]:
    """The tasks of ``group``, nested groups expanded (as ``fairness-evals metrics --task`` declares them)."""
    from fairness_evals import statistics

    try:
        members = statistics.task(group).members
    except KeyError:
        return [group]
    return [leaf for member in members for leaf in _leaves(member)] if members else [group]
