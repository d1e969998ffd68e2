"""The signature figure of Fact-or-Fair (paper Fig. 2a / 4): S_fact against S_E on [0, 1]^2, with the upper bounds
g_k of S_E given S_fact (:func:`metrics.fact_fair.fact_fair_bound`, paper Conclusion 1) and each point's 95%
intervals, drawn as inline SVG with the report's figure parts (:mod:`fairness_evals.report.svg`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from fairness_evals.report.model import PROSE, shorten
from fairness_evals.report.svg import PALETTE, finite, marker, wrap
from metrics.fact_fair import fact_fair_bound, fact_fair_bound_batch

#: The point shape of each task column (paper Table 2's columns) and its legend name.
MARKERS = {"O": "square", "S-B": "circle", "S-R": "diamond", "S-A": "triangle", "S-G": "triangle-down"}
MARKER_NAMES = {"O": "objective", "S-B": "base", "S-R": "represent.", "S-A": "attribution", "S-G": "in-group"}


@dataclass
class Point:
    """One task's (S_fact, S_E) with their intervals; ``series`` names the model, ``label`` the column (a MARKERS key)."""

    x: float
    y: float
    x_low: float = math.nan
    x_high: float = math.nan
    y_low: float = math.nan
    y_high: float = math.nan
    series: str = ""
    label: str = ""


def _stroke(style: str) -> str:
    """The stroke attributes of a bound curve drawn in ``style`` ("solid" or dashed), on the plot and in the legend."""
    solid = style == "solid"
    return f'stroke="#333" stroke-width="{1.6 if solid else 1}"' + ("" if solid else ' stroke-dasharray="5,4"')


def bound_styles(ks: tuple[int, ...], highlight: int) -> dict[int, str]:
    """How :func:`fact_fair_plot` draws each bound curve g_k: ``"solid"`` (the highlighted k) or ``"dashed"``."""
    return {k: "solid" if k == highlight else "dashed" for k in ks}


def fact_fair_plot(points: list[Point], *, ks: tuple[int, ...] = (2, 4), highlight: int = 2, title: str = "") -> str:
    """S_fact (x) against S_E (y) on [0, 1]^2 with the bound curves g_k and each point's 95% intervals.

    The series legend sits under the plot with each name in full (wrapped), so that two series never
    look alike; the right column explains the point shapes and the line style of each g_k.
    """
    width, left, top, plot = 600, 60, 30, 340
    points = [p for p in points if finite(p.x, p.y)]  # a NaN or infinite score has no place on [0, 1]^2
    series = list(dict.fromkeys(p.series for p in points))
    legend_lines = [wrap(shorten(name), 78) for name in series]
    legend_top = top + plot + 58
    height = legend_top + sum(16 * len(lines) + 4 for lines in legend_lines) + 10
    styles = bound_styles(ks, highlight)

    def px(v: float) -> float:
        return left + v * plot

    def py(v: float) -> float:
        return top + (1 - v) * plot

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(shorten(title, PROSE))}" font-family="sans-serif" font-size="12">',
        f'<rect x="{left}" y="{top}" width="{plot}" height="{plot}" fill="#fafafa" stroke="#999"/>',
    ]
    for i in range(0, 11, 2):
        v = i / 10
        parts.append(f'<line x1="{px(v):.1f}" y1="{top + plot}" x2="{px(v):.1f}" y2="{top + plot + 5}" stroke="#555"/>')
        parts.append(f'<text x="{px(v):.1f}" y="{top + plot + 18}" text-anchor="middle">{v:.1f}</text>')
        parts.append(f'<line x1="{left - 5}" y1="{py(v):.1f}" x2="{left}" y2="{py(v):.1f}" stroke="#555"/>')
        parts.append(f'<text x="{left - 8}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
    parts.append(f'<text x="{left + plot / 2}" y="{top + plot + 36}" text-anchor="middle">S_fact (factuality)</text>')
    parts.append(
        f'<text x="16" y="{top + plot / 2}" text-anchor="middle" transform="rotate(-90 16 {top + plot / 2})">'
        "S_E (entropy: evenness of choices)</text>"
    )
    grid = [x / 400 for x in range(401)]
    for k in ks:
        curve = fact_fair_bound_batch(grid, k)
        path = " ".join(
            f"{'M' if i == 0 else 'L'}{px(a):.1f},{py(float(g)):.1f}"
            for i, (a, g) in enumerate(zip(grid, curve, strict=True))
        )
        parts.append(f'<path d="{path}" fill="none" {_stroke(styles[k])} data-bound="g_{k}" data-style="{styles[k]}"/>')
        parts.append(f'<text x="{px(0.02):.1f}" y="{py(fact_fair_bound(0.02, k)) - 6:.1f}" fill="#333">g_{k}</text>')
    for p in points:
        color = PALETTE[series.index(p.series) % len(PALETTE)]
        if finite(p.x_low, p.x_high):
            parts.append(
                f'<line x1="{px(p.x_low):.1f}" y1="{py(p.y):.1f}" x2="{px(p.x_high):.1f}" y2="{py(p.y):.1f}" stroke="{color}"/>'
            )
        if finite(p.y_low, p.y_high):
            parts.append(
                f'<line x1="{px(p.x):.1f}" y1="{py(p.y_low):.1f}" x2="{px(p.x):.1f}" y2="{py(p.y_high):.1f}" stroke="{color}"/>'
            )
        parts.append(
            f"<g><title>{escape(shorten(p.series))} {escape(p.label)}: S_fact {p.x:.4f}, S_E {p.y:.4f}</title>"
            + marker(MARKERS.get(p.label, "circle"), px(p.x), py(p.y), color)
            + "</g>"
        )
    # right column: point shapes, then the line style of each bound curve
    legend_x, y = left + plot + 18, top + 6
    for label, shape in MARKERS.items():
        parts.append(marker(shape, legend_x + 5, y + 5, "#555", 4))
        parts.append(f'<text x="{legend_x + 16}" y="{y + 9}">{label} ({MARKER_NAMES[label]})</text>')
        y += 18
    y += 10
    for k in ks:
        parts.append(f'<line x1="{legend_x}" y1="{y + 5}" x2="{legend_x + 26}" y2="{y + 5}" {_stroke(styles[k])}/>')
        parts.append(f'<text x="{legend_x + 32}" y="{y + 9}">g_{k} ({styles[k]})</text>')
        y += 18
    # under the plot: one entry per series, full names
    y = legend_top
    for i, lines in enumerate(legend_lines):
        color = PALETTE[i % len(PALETTE)]
        parts.append(f'<rect x="{left}" y="{y}" width="10" height="10" fill="{color}"/>')
        for j, line in enumerate(lines):
            parts.append(f'<text x="{left + 16}" y="{y + 9 + 16 * j}">{escape(line)}</text>')
        y += 16 * len(lines) + 4
    parts.append("</svg>")
    return "".join(parts)
