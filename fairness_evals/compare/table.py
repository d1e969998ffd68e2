"""``compare``'s output: a strict-JSON document and a Markdown table (readable in a terminal as it is)."""

from __future__ import annotations

import math
from typing import Any

from fairness_evals.compare.comparison import NOT_COMPARABLE, Options, Row
from fairness_evals.compare.runs import RunInput
from fairness_evals.report.model import SHOWN
from fairness_evals.report.render import md_escape

HOW_TO_READ = (
    "B - A is the run's value minus the baseline's, with its {confidence:.0%} bootstrap interval ({kind}; "
    "{units}). p is the p-value of no difference; the verdict uses Holm's adjustment over the "
    '{count} metrics compared for this run (family-wise error at most {alpha:g}): "B fairer" / "A fairer" for '
    'fairness metrics, by each metric\'s fairer direction; "B higher" / "A higher" for the others (accuracy '
    'and the like); "no detectable difference" when the adjusted p-value is above {alpha:g}, which is not evidence '
    'that the runs are equal. An interval that excludes 0 can still come with "no detectable difference": the '
    "interval is not adjusted for the number of metrics."
)


def document(runs: list[RunInput], baseline: RunInput, results: list[tuple[RunInput, list[Row], list[str]]],
             options: Options) -> dict[str, Any]:  # fmt: skip
    """The JSON document (write it with :func:`fairness_evals.jsonio.write_json`: NaN becomes null)."""
    return {
        "alpha": options.alpha,
        "confidence": 1.0 - options.alpha,
        "n_resamples": options.n_resamples,
        "seed": options.seed,
        "paired": not options.unpaired,
        "multiple_comparisons": "Holm, over the comparable metrics of each run against the baseline",
        "metrics": list(options.metrics) or "headline (every metric reported with <name>_coverage)",
        "runs": [{"label": r.label, "model": r.model, "path": r.path} for r in runs],
        "baseline": baseline.label,
        "comparisons": [
            {"baseline": baseline.label, "run": run.label, "rows": [row.as_json() for row in rows], "notes": notes}
            for run, rows, notes in results
        ],
    }


def _number(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return f"{value:.4f}"


def _p(value: float) -> str:
    if math.isnan(value):
        return "–"
    return f"{value:.3g}" if value >= 0.001 else f"{value:.1e}"


def markdown(baseline: RunInput, results: list[tuple[RunInput, list[Row], list[str]]], options: Options) -> str:
    """One table per run against the baseline, then how to read it; every name and text escaped as the report's
    Markdown escapes it (:func:`fairness_evals.report.render.md_escape`: a run named ``<script>`` is shown, not
    run)."""
    lines: list[str] = []
    for run, rows, notes in results:
        lines += [f"## {md_escape(run.name, limit=SHOWN)} (B) against {md_escape(baseline.name, limit=SHOWN)} (A)", ""]
        lines += ["| task | metric | better | A | B | B - A [interval] | p | p (Holm) | verdict |", "|" + "---|" * 9]
        for row in rows:
            interval = (
                f"{_number(row.difference)} [{_number(row.ci_low)}, {_number(row.ci_high)}]"
                if row.verdict != NOT_COMPARABLE else "–"
            )  # fmt: skip
            verdict = row.verdict if row.verdict != NOT_COMPARABLE else f"not comparable: {row.reason}"
            cells = [row.task, row.metric, row.better or "–", _number(row.a), _number(row.b), interval,
                     _p(row.p_value), _p(row.p_holm), verdict]  # fmt: skip
            lines.append("| " + " | ".join(md_escape(c) for c in cells) + " |")
        compared = sum(row.verdict != NOT_COMPARABLE for row in rows)
        units = sorted({f"{row.units} {row.unit} of {row.task}" for row in rows if row.units})
        if options.unpaired:
            kind = "unpaired: each run resampled on its own"
        else:
            kind = "paired: both runs' answers to the same resampled units, within the design strata"
            if any(row.method.startswith("unpaired") for row in rows):
                kind += "; a generator's images, its own draws, resampled on their own"
        lines += ["", HOW_TO_READ.format(
            confidence=1.0 - options.alpha, kind=kind,
            units=", ".join(units[:3]) + (", ..." if len(units) > 3 else "") if units else "the runs' units",
            count=compared, alpha=options.alpha,
        ), ""]  # fmt: skip
        lines += [f"- {md_escape(note)}" for note in notes]
        if notes:
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
