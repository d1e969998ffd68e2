"""The papers' published rows next to the user's models (``fairness-evals report --published``).

Each benchmark's report view may declare a ``published`` hook (``table(runs) -> Table | None``) that shows the user's
models first, with the columns the view computes, then the paper's rows as printed, from a ``published.json`` in
its package with its provenance. They come from another data version, other prompts, parsers, judges and samples than
a run of this package: each published row is labelled so (:func:`published_row`), its cells are text (no value a
reader could take for one of ours), and ``compare`` never tests a run against them.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from fairness_evals.report.load import Run
from fairness_evals.report.model import Cell, Section, text

LABEL = "published"
WARNING = (
    "Rows marked 'published' are the paper's own numbers, copied as printed: another data version, prompt "
    "protocol, parser or judge and sample than your runs. They are shown for orientation; a difference between a "
    "published row and yours is not a measured difference, and no test of significance is made against them."
)


@cache
def beside(module_file: str) -> dict[str, Any]:
    """The ``published.json`` beside a benchmark's module (its ``__file__``): the paper's rows as printed, with their
    provenance."""
    return json.loads(Path(module_file).with_name("published.json").read_text(encoding="utf-8"))


def published_row(model: str, values: list[Any], source: str, extra: list[str] = ()) -> list[Cell]:
    """One published row: the model labelled :data:`LABEL`, its values as printed (text cells), then ``extra``."""
    cells = [text(f"{model} ({LABEL})", note=f"{source}. {WARNING}")]
    cells += [text("–" if v is None else str(v)) for v in values]  # as printed in the paper
    cells += [text(e) for e in extra]
    return cells


def section(runs: list[Run]) -> Section | None:
    """The published rows of every benchmark the runs cover, next to the user's models; None when none."""
    from fairness_evals import benchmarks

    tables = [t for _, table in benchmarks.hooks("published") if (t := table(runs)) is not None]
    if not tables:
        return None
    return Section("Published reference rows", WARNING, tables)
