"""The report's "How to read these numbers" table (issue 33): for each benchmark the report shows, which printed
scores are better high and which low (from its statistics table's declared directions), and what chance gives (its
statistics table's ``CHANCE``, measured by ``bench/chance.py``; each benchmark README's "How to read your numbers"
says more). The caption says what a null and an interval mean."""

from __future__ import annotations

import importlib

from fairness_evals.report.load import Run
from fairness_evals.report.model import Cell, Section, Table

CAPTION = (
    "Scores print as the papers print them (x100 where they do). A dash is a null: the run cannot support the number "
    "(too few answers counted, too few per cell or group, as in a --limit run, or answers that follow the option "
    "position rather than the content), never 0; its reason shows under it and in `fairness-evals score`. Brackets "
    "are 95% intervals of the population value (each table's caption names their methods); an interval can lie "
    "beside a biased plug-in estimate, and the value it is centred on then shows under the number."
)


def _directions(tasks: list) -> tuple[list[str], list[str]]:
    """The declared names of the headline statistics of ``tasks`` that are better high, and better low."""
    higher: list[str] = []
    lower: list[str] = []
    for task in tasks:
        for statistic in task.headline_statistics():
            side = {"higher": higher, "lower": lower}.get(statistic.direction)
            if side is not None and statistic.name not in side:
                side.append(statistic.name)
    return higher, lower


def section(runs: list[Run]) -> Section | None:
    """The table, one row per benchmark with a task in ``runs``; None when the runs hold none of ours."""
    from fairness_evals import benchmarks, statistics

    present = {task for run in runs for task in run.results}
    rows = []
    for benchmark, tasks in statistics.tables().items():
        shown = [task for task in tasks if task.name in present]
        if not shown:
            continue
        module = importlib.import_module(benchmarks.get(benchmark).statistics)
        higher, lower = _directions(shown)
        rows.append([
            Cell(module.PAPER.split(" (")[0]), Cell(", ".join(higher) or "–"), Cell(", ".join(lower) or "–"),
            Cell(module.CHANCE),
        ])  # fmt: skip
    if not rows:
        return None
    table = Table("Directions and chance", ["Benchmark", "Higher is better", "Lower is better", "Chance"], rows,
                  CAPTION)  # fmt: skip
    return Section("How to read these numbers", tables=[table])
