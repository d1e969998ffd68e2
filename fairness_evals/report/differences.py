"""The "differences" view (``fairness-evals report ... --baseline MODEL``): every other model against the baseline.

For each model, ``compare``'s paired comparison with the baseline (:func:`fairness_evals.compare.comparison.
compare_pair`: the same documents resampled jointly, Holm-adjusted verdicts at 0.05) drawn as a forest plot, one per
benchmark: each metric's difference B - A with its 95% interval, coloured by the verdict, beside a table of the
numbers. Models whose runs used other documents are listed with the reason, not compared (``compare --unpaired``
compares them as independent samples). Published reference rows are never compared.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

from fairness_evals import benchmarks
from fairness_evals.compare.comparison import NOT_COMPARABLE, Options, Row, compare_pair
from fairness_evals.compare.engine import NotPaired
from fairness_evals.compare.runs import from_model
from fairness_evals.report.load import ModelRuns, ReportInputError, Run, models
from fairness_evals.report.model import PROSE, Figure, Section, Table, number, shorten, text
from fairness_evals.report.render import scales
from fairness_evals.report.svg import wrap

COLOURS = {"B": "#2e933c", "A": "#d1495b", "none": "#555555"}  # B better, A better, no detectable difference


def _favours(row: Row) -> str:
    """Which run the verdict finds better ("B", "A") by the metric's better direction, or "none"."""
    if row.verdict == NOT_COMPARABLE or not row.verdict.startswith(("A ", "B ")):
        return "none"
    return "B" if (row.difference > 0) == row.better.startswith("higher") else "A"


def _short(task: str) -> str:
    """The task's name without its benchmark's prefix (the plot's title names the benchmark)."""
    owner = benchmarks.of_task(task)
    prefix = next((p for p in owner.task_prefixes if task.startswith(f"{p}_")), None) if owner else None
    return task.removeprefix(f"{prefix}_") if prefix else task


def forest_plot(rows: list[Row], *, scale: float, unit: str, title: str) -> str:
    """Inline SVG: one line per metric, the difference B - A (x ``scale``) as a dot with its interval as a whisker,
    a vertical line at 0, the dot coloured by the verdict (green: B better, fairer where the metric measures
    fairness; red: A better; grey: no detectable difference); metrics not comparable are listed with a hollow marker
    at 0 and their reason on hover."""
    width, left, right, row_h = 640, 250, 30, 22
    height = 72 + row_h * len(rows)
    ends = [abs(v) * scale for r in rows for v in (r.ci_low, r.ci_high, r.difference) if math.isfinite(v)]
    span_max = max([1e-9, *ends])
    step = 10 ** math.floor(math.log10(span_max)) if span_max > 0 else 1.0
    limit = math.ceil(span_max / step) * step
    plot = width - left - right

    def px(v: float) -> float:
        return left + plot * (v * scale + limit) / (2 * limit)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(shorten(title, PROSE))}" font-family="sans-serif" font-size="12">'
    ]
    for i in range(-2, 3):
        v = limit * i / 2
        x = left + plot * (v + limit) / (2 * limit)
        parts.append(
            f'<line x1="{x:.1f}" y1="22" x2="{x:.1f}" y2="{height - 28}" stroke="{"#888" if i == 0 else "#ddd"}"/>'
        )
        parts.append(f'<text x="{x:.1f}" y="16" text-anchor="middle">{f"{v:+.3g}" if v else "0"}{unit}</text>')
    for i, row in enumerate(rows):
        y = 34 + row_h * i
        label = f"{_short(row.task)} · {row.metric}"
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{escape(wrap(label, 40)[0])}</text>')
        if row.verdict == NOT_COMPARABLE or not math.isfinite(row.difference):
            parts.append(
                f"<g><title>{escape(shorten(row.metric))}: not comparable: {escape(shorten(row.reason, PROSE))}</title>"
                f'<circle cx="{px(0.0):.1f}" cy="{y}" r="4" fill="white" stroke="#999"/></g>'
            )
            continue
        colour = COLOURS[_favours(row)]
        if math.isfinite(row.ci_low) and math.isfinite(row.ci_high):
            parts.append(
                f'<line x1="{px(row.ci_low):.1f}" y1="{y}" x2="{px(row.ci_high):.1f}" y2="{y}" stroke="{colour}" '
                'stroke-width="2"/>'
            )
        tip = (
            f"{row.metric}: B - A = {row.difference * scale:+.3g}{unit} [{row.ci_low * scale:+.3g}, "
            f"{row.ci_high * scale:+.3g}], p (Holm) = {row.p_holm:.3g}: {row.verdict} ({row.better})"
        )
        parts.append(f'<g><title>{escape(tip)}</title><circle cx="{px(row.difference):.1f}" cy="{y}" r="4.5" '
                     f'fill="{colour}"/></g>')  # fmt: skip
    parts.append(f'<text x="{px(0.0):.1f}" y="{height - 28}" text-anchor="middle">← B lower · B higher →</text>')
    legend_y, x = height - 8, 10
    for key, name in (("B", "B better"), ("A", "A better"), ("none", "no detectable difference")):
        parts.append(f'<circle cx="{x}" cy="{legend_y - 4}" r="4" fill="{COLOURS[key]}"/>')
        parts.append(f'<text x="{x + 8}" y="{legend_y}">{escape(name)}</text>')
        x += 8 + 7 * len(name) + 14
    parts.append("</svg>")
    return "".join(parts)


def _table(baseline: str, results: list[tuple[str, list[Row]]]) -> Table:
    rows = []
    for name, found in results:
        for row in found:
            owner = benchmarks.of_task(row.task)
            scale = owner.differences[0] if owner is not None else 1.0
            comparable = row.verdict != NOT_COMPARABLE
            diff = (
                number(row.difference, row.ci_low, row.ci_high, scale=scale == 100.0, note=row.method)
                if comparable else text("–", note=row.reason)
            )  # fmt: skip
            rows.append([
                text(name), text(row.task), text(row.metric), text(row.better or "–"),
                number(row.a, scale=scale == 100.0), number(row.b, scale=scale == 100.0), diff,
                text(f"{row.p_holm:.3g}" if comparable else "–"),
                text(row.verdict if comparable else f"not comparable: {row.reason}"),
            ])  # fmt: skip
    return Table(
        f"Differences against {baseline} (A)",
        ["Model (B)", "Task", "Metric", "Better", "A", "B", "B - A [95% CI]", "p (Holm)", "Verdict"],
        rows,
        "B - A with its 95% paired bootstrap interval (the same documents and images resampled jointly within the "
        "design strata); p (Holm): adjusted over the metrics compared for that model; verdicts at 0.05: 'B fairer' / "
        "'A fairer' for fairness metrics (by each metric's fairer direction), 'B higher' / 'A higher' for the others, "
        "'no detectable difference' otherwise (not evidence of equality). "
        f"{scales('x100 (differences in percentage points)', 'as reported')}. docs/compare.md explains how to read a verdict.",
    )


def _find(items: list[ModelRuns], wanted: str) -> ModelRuns:
    """The model named ``wanted`` as the report shows it, or whose results file is ``wanted`` or lies below it."""
    path = Path(wanted).resolve()

    def holds(run: Run) -> bool:
        source = run.source.resolve()
        return source == path or path in source.parents

    matches = [m for m in items if m.name == wanted] or [m for m in items if any(holds(r) for r in m.runs)]
    if len(matches) != 1:
        names = ", ".join(shorten(m.name) for m in items)
        raise ReportInputError(f"--baseline {wanted}: {'no' if not matches else 'more than one'} model of that name "
                               f"in the report (models: {names})")  # fmt: skip
    return matches[0]


def section(runs: list[Run], baseline: str | None, options: Options | None = None) -> Section | None:
    """The differences of every model against ``baseline`` (a model name as the report shows it); None without."""
    if baseline is None:
        return None
    items = models(runs)
    base = _find(items, baseline)
    options = options or Options()
    base_input = from_model(base, base.name)
    results: list[tuple[str, list[Row]]] = []
    notes: list[str] = []
    figures: list[Figure] = []
    for model in items:
        if model is base:
            continue
        try:
            found, left_out = compare_pair(base_input, from_model(model, model.name), options)
        except (NotPaired, ValueError) as error:
            notes.append(f"{model.name}: not compared ({error})")
            continue
        notes += [f"{model.name}: {n}" for n in left_out]
        results.append((model.name, found))
        for benchmark in benchmarks.registry().values():  # one plot each: their differences are on different scales
            scale, unit = benchmark.differences
            mine = [r for r in found if benchmarks.of_task(r.task) is benchmark]
            if mine:
                title = f"{benchmark.title}: {model.name} (B) - {base.name} (A)"
                figures.append(Figure(title, forest_plot(mine, scale=scale, unit=unit, title=title),
                                      "Dots: B - A; whiskers: 95% paired bootstrap intervals; colour: the Holm-adjusted "
                                      "verdict at 0.05 (green: B better or fairer, red: A better or fairer, grey: no "
                                      "detectable difference); hollow: not comparable (hover for why)."))  # fmt: skip
    if not results and not notes:
        return None
    intro = (
        f"Each model (B) against the baseline {base.name} (A), on the documents and images both runs answered. "
        + " ".join(notes)
    )
    return Section("Differences", intro, [_table(base.name, results)] if results else [], figures)
