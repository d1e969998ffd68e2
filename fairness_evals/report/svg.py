"""Hand-written inline SVG figures (no plotting library, no scripts, no external resources)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from fairness_evals.report.model import PROSE, shorten

PALETTE = ("#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#6f42c1", "#00798c", "#8c564b", "#e377c2")


def marker(shape: str, x: float, y: float, color: str, size: float = 5.0) -> str:
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


def finite(*values: float) -> bool:
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


def interval_bars(rows: list[tuple[str, float, float, float]], *, title: str = "", unit: str = "%") -> str:
    """Horizontal dot-and-whisker chart: (label, value, low, high) with values in [0, 1]."""
    width, left, right, row_h = 560, 190, 40, 22
    height = 40 + row_h * len(rows)
    scale_max = max([1e-9, *[h for _, _, _, h in rows if finite(h)], *[v for _, v, _, _ in rows if finite(v)]])
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
        if finite(low, high):
            parts.append(
                f'<line x1="{px(low):.1f}" y1="{y}" x2="{px(high):.1f}" y2="{y}" stroke="#1b6ca8" stroke-width="2"/>'
            )
        if finite(value):
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


def radar(series: RadarSeries, axes: list[str], *, what: str, color: str = PALETTE[0], maximum: float = 100.0) -> str:
    """One small radar on a fixed scale [0, ``maximum``] with labelled rings, read aloud as ``<what>: <series>``.

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
        f'role="img" aria-label="{escape(what)}: {escape(label)}" font-family="sans-serif" font-size="11">'
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
    present = [finite(v) for v in values]
    for i, name in enumerate(axes):
        x, y = point(i, maximum)
        dash = "" if present[i] else ' stroke-dasharray="3,3"'
        parts.append(f'<line x1="{cx}" y1="{cy}" x2="{x:.1f}" y2="{y:.1f}" stroke="#ccc"{dash}/>')
        angle = -math.pi / 2 + 2 * math.pi * i / n
        lx, ly = cx + (radius + 12) * math.cos(angle), cy + (radius + 12) * math.sin(angle)
        anchor = "start" if math.cos(angle) > 0.3 else "end" if math.cos(angle) < -0.3 else "middle"
        first = ly - 18 if math.sin(angle) < -0.9 else ly + 10 if math.sin(angle) > 0.9 else ly - 2
        shown = f"{values[i]:.1f}" if present[i] else "n/a"
        fill = "#222" if present[i] else "#999"
        parts.append(
            f'<text x="{lx:.1f}" y="{first:.1f}" text-anchor="{anchor}" fill="{fill}">{escape(name)}'
            f'<tspan x="{lx:.1f}" dy="12" font-weight="bold" data-axis="{escape(name)}">{shown}</tspan></text>'
        )
    if all(present):
        poly = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, v) for i, v in enumerate(values)))
        parts.append(f'<polygon points="{poly}" fill="{color}" fill-opacity="0.18" stroke="{color}" stroke-width="2"/>')
    else:  # only the sides between two present neighbours: a missing value is a gap, never bridged
        for i in range(n):
            j = (i + 1) % n
            if present[i] and present[j] and n > 2:
                (x1, y1), (x2, y2) = point(i, values[i]), point(j, values[j])
                parts.append(
                    f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" stroke-width="2"/>'
                )
    for i, name in enumerate(axes):
        if not present[i]:
            x, y = point(i, maximum)
            parts.append(
                f'<g data-missing="{escape(name)}"><title>{escape(name)}: not in the results (or undefined)</title>'
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4.5" fill="#fff" stroke="#999" stroke-width="1.5"/></g>'
            )
            continue
        low, high = series.intervals.get(name, (math.nan, math.nan))
        if finite(low, high):
            (x1, y1), (x2, y2) = point(i, low), point(i, high)
            parts.append(
                f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" stroke-width="4" stroke-opacity="0.35"/>'
            )
        x, y = point(i, values[i])
        tip = f"{escape(name)}: {values[i]:.2f}" + (f" [{low:.2f}, {high:.2f}]" if finite(low, high) else "")
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


def radar_multiples(
    all_series: list[RadarSeries], axes: list[str], *, what: str, group: str, maximum: float = 100.0
) -> str:
    """One small radar per model, side by side (wrapping), each in its own colour; ``what`` names each radar and
    ``group`` the row (their accessible labels)."""
    charts = [
        radar(s, axes, what=what, color=PALETTE[i % len(PALETTE)], maximum=maximum) for i, s in enumerate(all_series)
    ]
    return f'<div class="multiples" role="group" aria-label="{escape(group)}">' + "".join(charts) + "</div>"
