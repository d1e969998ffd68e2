"""IRIS view: the six dimension scores per model as a radar, and the IRIS-MBTI code of each sector."""

from __future__ import annotations

import math

from fairness_evals.report.load import Run
from fairness_evals.report.model import Figure, Section, Table, number, text
from fairness_evals.report.svg import radar

# The dimension score metrics the IRIS tasks report (see iris_tasks/README.md) and their task.
DIMENSIONS = {
    "IFS-Und": ("iris_ifs_und", "ifs_und_score"),
    "RFS-Und": ("iris_rfs_und", "rfs_und_score"),
    "BIS-Und": ("iris_bis_und", "bis_und_score"),
    "IFS-Gen": ("iris_gen_neutral", "ifs_gen_score"),
    "RFS-Gen": ("iris_gen_neutral", "rfs_gen_score"),
    "BIS-Gen": ("iris_gen_steer", "bis_gen_score"),
}


def scores(runs: list[Run]) -> dict[str, dict[str, tuple[float, str]]]:
    """Model -> dimension -> (score, source), from every run that has IRIS results."""
    out: dict[str, dict[str, tuple[float, str]]] = {}
    for run in runs:
        for dimension, (task, metric) in DIMENSIONS.items():
            value = run.metric(task, metric)
            if not math.isnan(value):
                out.setdefault(run.model, {})[dimension] = (value, run.source_of(task, metric))
    return out


def _code(values: dict[str, float], sector: str) -> str:
    names = [f"{d}-{sector}" for d in ("IFS", "RFS", "BIS")]
    if not all(n in values for n in names):
        return "–"
    from metrics.iris import archetype_name, mbti

    code = mbti({n: values[n] for n in names})
    return f"{code} ({archetype_name(code)})"


def section(runs: list[Run]) -> Section | None:
    table = scores(runs)
    if not table:
        return None
    axes = list(DIMENSIONS)
    rows = []
    series = []
    for model, found in table.items():
        values = {d: v for d, (v, _) in found.items()}
        cells = [number(found[d][0], scale=False, source=found[d][1]) if d in found else text("–") for d in axes]
        rows.append([text(model), *cells, text(_code(values, "Und")), text(_code(values, "Gen"))])
        series.append((model, values))
    return Section(
        "IRIS",
        "Dimension scores S·exp(−K·m) of the fairness space (uncapped; higher is fairer) and IRIS-MBTI codes "
        "(τ = 60): Utopian/Heuristic (IFS), Accurate/Distorted (RFS), Flexible/Rigid (BIS).",
        [Table("IRIS dimension scores", ["Model", *axes, "Und. code", "Gen. code"], rows)],
        [
            Figure(
                "Fairness space",
                radar(series, axes, title="IRIS dimension scores"),
                "One polygon per model; missing dimensions are left out of its polygon.",
            )
        ],
    )
