"""Hand-written inline SVG figures (no plotting library, no scripts, no external resources)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from fairness_evals.report.model import PROSE, shorten

PALETTE = ("#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#6f42c1", "#00798c", "#8c564b", "#e377c2")
MARKERS = {"O": "square", "S-B": "circle", "S-R": "diamond", "S-A": "triangle", "S-G": "triangle-down"}
MARKER_NAMES = {"O": "objective", "S-B": "base", "S-R": "represent.", "S-A": "attribution", "S-G": "in-group"}


@dataclass
class Point:
    x: float
    y: float
    x_low: float = math.nan
    x_high: float = math.nan
    y_low: float = math.nan
    y_high: float = math.nan
    series: str = ""
    label: str = ""


def bound(a: float, k: int) -> float:
    """g_k(a), the upper bound of S_E given S_fact = a (paper Conclusion 1); see metrics.fact_fair."""
    if a <= 0.0:
        return math.log(k - 1) / math.log(k) if k > 1 else 0.0
    if a >= 1.0:
        return 0.0
    return -((1 - a) * math.log((1 - a) / (k - 1)) + a * math.log(a)) / math.log(k)


def _stroke(style: str) -> str:
    """The stroke attributes of a bound curve drawn in ``style`` ("solid" or dashed), on the plot and in the legend."""
    solid = style == "solid"
    return f'stroke="#333" stroke-width="{1.6 if solid else 1}"' + ("" if solid else ' stroke-dasharray="5,4"')


def _marker(shape: str, x: float, y: float, color: str, size: float = 5.0) -> str:
    if shape == "square":
        return f'<rect x="{x - size:.1f}" y="{y - size:.1f}" width="{2 * size:.1f}" height="{2 * size:.1f}" fill="{color}"/>'
    if shape == "diamond":
        pts = f"{x:.1f},{y - size * 1.3:.1f} {x + size * 1.3:.1f},{y:.1f} {x:.1f},{y + size * 1.3:.1f} {x - size * 1.3:.1f},{y:.1f}"
        return f'<polygon points="{pts}" fill="{color}"/>'
    if shape in ("triangle", "triangle-down"):
        s = -1 if shape == "triangle" else 1
        pts = f"{x:.1f},{y + s * size * 1.3:.1f} {x + size * 1.2:.1f},{y - s * size:.1f} {x - size * 1.2:.1f},{y - s * size:.1f}"
        return f'<polygon points="{pts}" fill="{color}"/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size:.1f}" fill="{color}"/>'


def _finite(*values: float) -> bool:
    return all(v is not None and math.isfinite(v) for v in values)


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at spaces (a longer word is cut); linear in the
    length of ``text``."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        if len(word) > width:
            if line:
                lines.append(line)
            pieces = [word[i : i + width] for i in range(0, len(word), width)]
            lines += pieces[:-1]
            line = pieces[-1]
            continue
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line or not lines:
        lines.append(line)
    return lines


def bound_styles(ks: tuple[int, ...], highlight: int) -> dict[int, str]:
    """How :func:`fact_fair_plot` draws each bound curve g_k: ``"solid"`` (the highlighted k) or ``"dashed"``."""
    return {k: "solid" if k == highlight else "dashed" for k in ks}


def fact_fair_plot(points: list[Point], *, ks: tuple[int, ...] = (2, 4), highlight: int = 2, title: str = "") -> str:
    """S_fact (x) against S_E (y) on [0, 1]^2 with the bound curves g_k and each point's 95% intervals.

    The series legend sits under the plot with each name in full (wrapped), so that two series never
    look alike; the right column explains the point shapes and the line style of each g_k.
    """
    width, left, top, plot = 600, 60, 30, 340
    points = [p for p in points if _finite(p.x, p.y)]  # a NaN or infinite score has no place on [0, 1]^2
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
    for k in ks:
        path = " ".join(
            f"{'M' if i == 0 else 'L'}{px(a):.1f},{py(bound(a, k)):.1f}"
            for i, a in enumerate(x / 400 for x in range(401))
        )
        parts.append(f'<path d="{path}" fill="none" {_stroke(styles[k])} data-bound="g_{k}" data-style="{styles[k]}"/>')
        parts.append(f'<text x="{px(0.02):.1f}" y="{py(bound(0.02, k)) - 6:.1f}" fill="#333">g_{k}</text>')
    for p in points:
        color = PALETTE[series.index(p.series) % len(PALETTE)]
        if _finite(p.x_low, p.x_high):
            parts.append(
                f'<line x1="{px(p.x_low):.1f}" y1="{py(p.y):.1f}" x2="{px(p.x_high):.1f}" y2="{py(p.y):.1f}" stroke="{color}"/>'
            )
        if _finite(p.y_low, p.y_high):
            parts.append(
                f'<line x1="{px(p.x):.1f}" y1="{py(p.y_low):.1f}" x2="{px(p.x):.1f}" y2="{py(p.y_high):.1f}" stroke="{color}"/>'
            )
        parts.append(
            f"<g><title>{escape(shorten(p.series))} {escape(p.label)}: S_fact {p.x:.4f}, S_E {p.y:.4f}</title>"
            + _marker(MARKERS.get(p.label, "circle"), px(p.x), py(p.y), color)
            + "</g>"
        )
    # right column: point shapes, then the line style of each bound curve
    legend_x, y = left + plot + 18, top + 6
    for label, shape in MARKERS.items():
        parts.append(_marker(shape, legend_x + 5, y + 5, "#555", 4))
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


def interval_bars(rows: list[tuple[str, float, float, float]], *, title: str = "", unit: str = "%") -> str:
    """Horizontal dot-and-whisker chart: (label, value, low, high) with values in [0, 1]."""
    width, left, right, row_h = 560, 190, 40, 22
    height = 40 + row_h * len(rows)
    scale_max = max([1e-9, *[h for _, _, _, h in rows if _finite(h)], *[v for _, v, _, _ in rows if _finite(v)]])
    scale_max = min(1.0, math.ceil(scale_max * 10 + 1e-9) / 10) or 1.0
    span = width - left - right

    def px(v: float) -> float:
        return left + span * v / scale_max

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(shorten(title, PROSE))}" font-family="sans-serif" font-size="12">'
    ]
    for i in range(0, 6):
        v = scale_max * i / 5
        parts.append(f'<line x1="{px(v):.1f}" y1="20" x2="{px(v):.1f}" y2="{height - 16}" stroke="#ddd"/>')
        parts.append(f'<text x="{px(v):.1f}" y="14" text-anchor="middle">{100 * v:.0f}{unit}</text>')
    for i, (label, value, low, high) in enumerate(rows):
        y = 30 + row_h * i
        label = shorten(label)
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{escape(label)}</text>')
        if _finite(low, high):
            parts.append(
                f'<line x1="{px(low):.1f}" y1="{y}" x2="{px(high):.1f}" y2="{y}" stroke="#1b6ca8" stroke-width="2"/>'
            )
        if _finite(value):
            parts.append(
                f"<g><title>{escape(label)}: {100 * value:.2f}{unit}</title>"
                f'<circle cx="{px(value):.1f}" cy="{y}" r="4" fill="#1b6ca8"/></g>'
            )
    parts.append("</svg>")
    return "".join(parts)


@dataclass
class RadarSeries:
    """One model's radar: its name, and per axis its value and 95% interval (NaN when missing)."""

    name: str
    values: dict[str, float]
    intervals: dict[str, tuple[float, float]]


RADAR_RINGS = (25, 50, 75, 100)


def radar(series: RadarSeries, axes: list[str], *, color: str = PALETTE[0], maximum: float = 100.0) -> str:
    """One small radar on a fixed scale [0, ``maximum``] with labelled rings.

    Each axis label carries the value (or "n/a"). A missing value draws a hollow marker at the rim and
    breaks the outline: no line joins the axes on either side of it. A value above the scale is drawn at
    the rim as an outward triangle, labelled with its value. Whiskers along the axes: 95% intervals.
    """
    label = shorten(series.name)
    title = wrap(label, 44)
    width, radius = 340, 96
    head = 18 + 15 * len(title)
    cx, cy = width / 2, head + 36 + radius
    height = int(cy + radius + 44)
    n = len(axes)

    def point(i: float, value: float) -> tuple[float, float]:
        angle = -math.pi / 2 + 2 * math.pi * i / n
        r = radius * max(0.0, min(value, maximum)) / maximum
        return cx + r * math.cos(angle), cy + r * math.sin(angle)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="IRIS radar: {escape(label)}" font-family="sans-serif" font-size="11">'
    ]
    parts += [
        f'<text x="{cx}" y="{16 + 15 * j}" text-anchor="middle" font-size="12" font-weight="bold">{escape(line)}</text>'
        for j, line in enumerate(title)
    ]
    for level in RADAR_RINGS:
        ring = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, level) for i in range(n)))
        parts.append(f'<polygon points="{ring}" fill="none" stroke="{"#999" if level == maximum else "#ddd"}"/>')
        lx, ly = point(0.5, level * math.cos(math.pi / n))  # on the ring, halfway between the first two axes
        parts.append(
            f'<text x="{lx:.1f}" y="{ly + 3:.1f}" fill="#888" font-size="9" text-anchor="middle">{level:g}</text>'
        )
    values = [series.values.get(a, math.nan) for a in axes]
    finite = [_finite(v) for v in values]
    for i, name in enumerate(axes):
        x, y = point(i, maximum)
        dash = "" if finite[i] else ' stroke-dasharray="3,3"'
        parts.append(f'<line x1="{cx}" y1="{cy}" x2="{x:.1f}" y2="{y:.1f}" stroke="#ccc"{dash}/>')
        angle = -math.pi / 2 + 2 * math.pi * i / n
        lx, ly = cx + (radius + 12) * math.cos(angle), cy + (radius + 12) * math.sin(angle)
        anchor = "start" if math.cos(angle) > 0.3 else "end" if math.cos(angle) < -0.3 else "middle"
        first = ly - 18 if math.sin(angle) < -0.9 else ly + 10 if math.sin(angle) > 0.9 else ly - 2
        shown = f"{values[i]:.1f}" if finite[i] else "n/a"
        fill = "#222" if finite[i] else "#999"
        parts.append(
            f'<text x="{lx:.1f}" y="{first:.1f}" text-anchor="{anchor}" fill="{fill}">{escape(name)}'
            f'<tspan x="{lx:.1f}" dy="12" font-weight="bold" data-axis="{escape(name)}">{shown}</tspan></text>'
        )
    if all(finite):
        poly = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, v) for i, v in enumerate(values)))
        parts.append(f'<polygon points="{poly}" fill="{color}" fill-opacity="0.18" stroke="{color}" stroke-width="2"/>')
    else:  # only the sides between two present neighbours: a missing value is a gap, never bridged
        for i in range(n):
            j = (i + 1) % n
            if finite[i] and finite[j] and n > 2:
                (x1, y1), (x2, y2) = point(i, values[i]), point(j, values[j])
                parts.append(
                    f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" stroke-width="2"/>'
                )
    for i, name in enumerate(axes):
        if not finite[i]:
            x, y = point(i, maximum)
            parts.append(
                f'<g data-missing="{escape(name)}"><title>{escape(name)}: not in the results (or undefined)</title>'
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4.5" fill="#fff" stroke="#999" stroke-width="1.5"/></g>'
            )
            continue
        low, high = series.intervals.get(name, (math.nan, math.nan))
        if _finite(low, high):
            (x1, y1), (x2, y2) = point(i, low), point(i, high)
            parts.append(
                f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" stroke-width="4" stroke-opacity="0.35"/>'
            )
        x, y = point(i, values[i])
        tip = f"{escape(name)}: {values[i]:.2f}" + (f" [{low:.2f}, {high:.2f}]" if _finite(low, high) else "")
        if values[i] > maximum:
            angle = -math.pi / 2 + 2 * math.pi * i / n
            ux, uy = math.cos(angle), math.sin(angle)
            tri = [
                (x + 7 * ux, y + 7 * uy),
                (x - 4 * ux - 5 * uy, y - 4 * uy + 5 * ux),
                (x - 4 * ux + 5 * uy, y - 4 * uy - 5 * ux),
            ]
            shape = " ".join(f"{a:.1f},{b:.1f}" for a, b in tri)
            parts.append(
                f'<g data-beyond="{escape(name)}"><title>{tip} (beyond the 0-{maximum:g} scale)</title><polygon points="{shape}" fill="{color}"/></g>'
            )
        else:
            parts.append(f'<g><title>{tip}</title><circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}"/></g>')
    parts.append("</svg>")
    return "".join(parts)


def radar_multiples(all_series: list[RadarSeries], axes: list[str], *, maximum: float = 100.0) -> str:
    """One small radar per model, side by side (wrapping), each in its own colour."""
    charts = [radar(s, axes, color=PALETTE[i % len(PALETTE)], maximum=maximum) for i, s in enumerate(all_series)]
    return '<div class="multiples" role="group" aria-label="IRIS dimension scores">' + "".join(charts) + "</div>"
