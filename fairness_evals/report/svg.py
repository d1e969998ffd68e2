"""Hand-written inline SVG figures (no plotting library, no scripts, no external resources)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

PALETTE = ("#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#6f42c1", "#00798c", "#8c564b", "#e377c2")
MARKERS = {"O": "square", "S-B": "circle", "S-R": "diamond", "S-A": "triangle", "S-G": "triangle-down"}


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


def fact_fair_plot(points: list[Point], *, ks: tuple[int, ...] = (2, 4), highlight: int = 2, title: str = "") -> str:
    """S_fact (x) against S_E (y) on [0, 1]^2 with the bound curves g_k and each point's 95% intervals."""
    width, height, left, top, plot = 560, 440, 60, 30, 340

    def px(v: float) -> float:
        return left + v * plot

    def py(v: float) -> float:
        return top + (1 - v) * plot

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}" font-family="sans-serif" font-size="12">',
        f'<rect x="{left}" y="{top}" width="{plot}" height="{plot}" fill="#fafafa" stroke="#999"/>',
    ]
    for i in range(0, 11, 2):
        v = i / 10
        parts.append(f'<line x1="{px(v):.1f}" y1="{top + plot}" x2="{px(v):.1f}" y2="{top + plot + 5}" stroke="#555"/>')
        parts.append(f'<text x="{px(v):.1f}" y="{top + plot + 18}" text-anchor="middle">{v:.1f}</text>')
        parts.append(f'<line x1="{left - 5}" y1="{py(v):.1f}" x2="{left}" y2="{py(v):.1f}" stroke="#555"/>')
        parts.append(f'<text x="{left - 8}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
    parts.append(f'<text x="{left + plot / 2}" y="{height - 40}" text-anchor="middle">S_fact (factuality)</text>')
    parts.append(
        f'<text x="16" y="{top + plot / 2}" text-anchor="middle" transform="rotate(-90 16 {top + plot / 2})">'
        "S_E (entropy: evenness of choices)</text>"
    )
    for k in ks:
        path = " ".join(
            f"{'M' if i == 0 else 'L'}{px(a):.1f},{py(bound(a, k)):.1f}"
            for i, a in enumerate(x / 400 for x in range(401))
        )
        dash = "" if k == highlight else ' stroke-dasharray="5,4"'
        parts.append(
            f'<path d="{path}" fill="none" stroke="#333" stroke-width="{1.6 if k == highlight else 1}"{dash}/>'
        )
        parts.append(f'<text x="{px(0.02):.1f}" y="{py(bound(0.02, k)) - 6:.1f}" fill="#333">g_{k}</text>')
    series = list(dict.fromkeys(p.series for p in points))
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
            f"<g><title>{escape(p.series)} {escape(p.label)}: S_fact {p.x:.4f}, S_E {p.y:.4f}</title>"
            + _marker(MARKERS.get(p.label, "circle"), px(p.x), py(p.y), color)
            + "</g>"
        )
    legend_x, legend_y = left + plot + 14, top + 6
    for i, name in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        y = legend_y + 18 * i
        parts.append(f'<rect x="{legend_x}" y="{y}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{legend_x + 14}" y="{y + 9}">{escape(name[:24])}</text>')
    y = legend_y + 18 * len(series) + 10
    for label, shape in MARKERS.items():
        parts.append(_marker(shape, legend_x + 5, y + 5, "#555", 4))
        parts.append(f'<text x="{legend_x + 14}" y="{y + 9}">{label}</text>')
        y += 16
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
        f'role="img" aria-label="{escape(title)}" font-family="sans-serif" font-size="12">'
    ]
    for i in range(0, 6):
        v = scale_max * i / 5
        parts.append(f'<line x1="{px(v):.1f}" y1="20" x2="{px(v):.1f}" y2="{height - 16}" stroke="#ddd"/>')
        parts.append(f'<text x="{px(v):.1f}" y="14" text-anchor="middle">{100 * v:.0f}{unit}</text>')
    for i, (label, value, low, high) in enumerate(rows):
        y = 30 + row_h * i
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


def radar(
    series: list[tuple[str, dict[str, float]]], axes: list[str], *, maximum: float = 100.0, title: str = ""
) -> str:
    """A radar chart of scores in [0, maximum] (larger values are drawn at the rim)."""
    size, cx, cy, radius = 460, 200, 220, 150
    n = len(axes)
    top = max([maximum, *[v for _, s in series for v in s.values() if _finite(v)]])

    def point(i: int, value: float) -> tuple[float, float]:
        angle = -math.pi / 2 + 2 * math.pi * i / n
        r = radius * max(0.0, min(value, top)) / top
        return cx + r * math.cos(angle), cy + r * math.sin(angle)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size}" width="{size}" height="{size}" '
        f'role="img" aria-label="{escape(title)}" font-family="sans-serif" font-size="12">'
    ]
    for level in (0.25, 0.5, 0.75, 1.0):
        ring = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(i, top * level) for i in range(n)))
        parts.append(f'<polygon points="{ring}" fill="none" stroke="#ccc"/>')
    for i, name in enumerate(axes):
        x, y = point(i, top)
        parts.append(f'<line x1="{cx}" y1="{cy}" x2="{x:.1f}" y2="{y:.1f}" stroke="#ccc"/>')
        lx, ly = point(i, top * 1.16)
        parts.append(f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle">{escape(name)}</text>')
    for j, (label, values) in enumerate(series):
        color = PALETTE[j % len(PALETTE)]
        pts = [point(i, values.get(a, math.nan)) for i, a in enumerate(axes) if _finite(values.get(a, math.nan))]
        if len(pts) >= 3:
            poly = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            parts.append(
                f'<polygon points="{poly}" fill="{color}" fill-opacity="0.15" stroke="{color}" stroke-width="2"/>'
            )
        parts.append(f'<rect x="{size - 120}" y="{20 + 18 * j}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{size - 106}" y="{29 + 18 * j}">{escape(label[:16])}</text>')
    parts.append("</svg>")
    return "".join(parts)
