"""The papers' published rows next to the user's models (``fairness-evals report --published``).

``published.json`` (beside this module) holds paper Table 2 of Fact-or-Fair, the model-level Table 2 of FairLens and
the IRIS dimension scores (appendix Tables 23-28) with the IRIS leaderboard, as printed. They come from another data
version, other prompts, parsers, judges and samples than a run of this package: each published row is labelled so,
its cells are text (no value a reader could take for one of ours), and ``compare`` never tests a run against them.
Each table shows the user's models first, with the same columns computed as the report's own views compute them.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from fairness_evals.report.load import Run, models
from fairness_evals.report.model import Cell, Section, Table, text

PUBLISHED = Path(__file__).with_name("published.json")
LABEL = "published"
WARNING = (
    "Rows marked 'published' are the paper's own numbers, copied as printed: another data version, prompt "
    "protocol, parser or judge and sample than your runs. They are shown for orientation; a difference between a "
    "published row and yours is not a measured difference, and no test of significance is made against them."
)


@lru_cache(maxsize=1)
def published() -> dict[str, Any]:
    return json.loads(PUBLISHED.read_text(encoding="utf-8"))


def _published_row(model: str, values: list[Any], source: str, extra: list[str] = ()) -> list[Cell]:
    cells = [text(f"{model} ({LABEL})", note=f"{source}. {WARNING}")]
    cells += [text("–" if v is None else str(v)) for v in values]  # as printed in the paper
    cells += [text(e) for e in extra]
    return cells


def fact_or_fair_table(runs: list[Run]) -> Table | None:
    from fairness_evals.report import fact_or_fair as view

    items = [e for e in view.entries(runs) if not e.variant]
    if not items:
        return None
    base = view.table2(items)
    data = published()["fact_or_fair"]
    rows = [row for row in base.rows]
    for model, row in data["rows"].items():
        rows.append(_published_row(model, row["values"], f"{data['source']} ({row['kind'].upper()})"))
    notes = "; ".join(data.get("known_inconsistencies", {}).values())
    return Table(
        "Fact-or-Fair: your models and the published Table 2 (x100)",
        base.columns,
        rows,
        f"{base.caption} Published rows: {data['source']}; protocol: {data['protocol']}. {WARNING}"
        + (f" Known inconsistency of the paper: {notes}" if notes else ""),
    )


def fairlens_table(runs: list[Run]) -> Table | None:
    data = published()["fairlens"]
    rows = []
    for model in models(runs):
        if not model.has("fairlens"):
            continue
        values = [
            model.metric("fairlens", "soundness"), model.metric("fairlens", "parity_gap"),
            model.metric("fairlens", "association_rate"), model.metric("fairlens", "association_gap"),
            model.metric("fairlens_open", "oe_bias_mean") if model.has("fairlens_open") else math.nan,
        ]  # fmt: skip
        rows.append([text(model.name, note=model.sources), *[_percent(v) for v in values]])
    if not rows:
        return None
    for model, row in data["rows"].items():
        rows.append(_published_row(model, row["values"], data["source"]))
    return Table(
        "FairLens: your models and the published model-level Table 2 (percent; gaps in percentage points)",
        ["Model", "Soundness", "Parity gap", "Association rate", "Association gap", "OE bias"],
        rows,
        "Your models: the fairlens group's means over the three domains (and fairlens_open's oe_bias_mean), x100. "
        f"Published rows: {data['source']}; protocol: {data['protocol']}. {WARNING}",
    )


def _percent(value: float) -> Cell:
    from fairness_evals.report.model import number

    return number(value, digits=1)


def iris_table(runs: list[Run]) -> Table | None:
    from fairness_evals.report import iris as view
    from fairness_evals.report.model import number

    data = published()["iris"]
    dims = data["columns"]
    rows = []
    for item in view.profiles(runs):
        cells = [text(item.model.name, note=item.model.sources)]
        for name in dims:
            dim = item.dimensions.get(name)
            cells.append(number(dim.run.metric(dim.task, dim.metric), scale=False) if dim else text("–"))
        rows.append([*cells, text("–"), text("–"), text("–")])
    if not rows:
        return None
    for model, row in data["rows"].items():
        total = row.get("total")
        extra = ["–" if total is None else str(total), row.get("gen_profile") or "–", row.get("und_profile") or "–"]
        rows.append(_published_row(model, row["values"], data["source"], extra))
    return Table(
        "IRIS: your models and the published dimension scores and leaderboard",
        ["Model", *dims, "Total (leaderboard)", "Gen profile", "Und profile"],
        rows,
        "Your models: the dimension scores the tasks report (no total is computed: the released total does not "
        f"reproduce the leaderboard). Published rows: {data['source']}; protocol: {data['protocol']}. "
        f"{data['warning']} {WARNING}",
    )


def section(runs: list[Run]) -> Section | None:
    """The published rows of every benchmark the runs cover, next to the user's models; None when none."""
    tables = [t for t in (fact_or_fair_table(runs), fairlens_table(runs), iris_table(runs)) if t is not None]
    if not tables:
        return None
    return Section("Published reference rows", WARNING, tables)
