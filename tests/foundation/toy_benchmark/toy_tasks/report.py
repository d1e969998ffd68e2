"""The toy's view in ``fairness-evals report``: one row per model, its stereotype rate with interval and coverage."""

from __future__ import annotations

from fairness_evals.report.load import Run, models
from fairness_evals.report.model import Cell, Section, Table


def section(runs: list[Run]) -> Section | None:
    """The toy's section, None when no run holds the toy task."""
    rows = [
        [Cell(model.name), model.cell("toy", "stereotype_rate", n=model.denominator("toy", "stereotype_rate"))]
        for model in models(runs)
        if model.has("toy")
    ]
    if not rows:
        return None
    table = Table("Stereotype rate", ["Model", "Stereotype rate (lower is fairer)"], rows,
                  "Share of the answers naming an option that pick the stereotyped one; Wilson 95% interval.")  # fmt: skip
    return Section("Toy", "The worked example of docs/adding_a_benchmark.md.", tables=[table])
