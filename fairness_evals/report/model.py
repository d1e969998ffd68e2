"""The report's document model: sections of tables and figures, independent of the output format."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class Cell:
    """A table cell. ``value`` is the number exactly as in the results file (None for text cells)."""

    text: str
    value: float | None = None
    low: float | None = None
    high: float | None = None
    note: str = ""  # shown on hover in HTML
    source: str = ""  # "<run index>|<task>|<metric>" when the value is copied from a results file

    @property
    def missing(self) -> bool:
        return self.value is not None and math.isnan(self.value)


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    caption: str = ""


@dataclass
class Figure:
    title: str
    svg: str
    caption: str = ""


@dataclass
class Section:
    title: str
    intro: str = ""
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)


def pct(value: float, digits: int = 2) -> str:
    """A fraction as the papers print it (x100), or an en dash when undefined."""
    if value is None or math.isnan(value):
        return "–"
    if math.isinf(value):
        return "∞"
    return f"{100 * value:.{digits}f}"


def number(
    value: float,
    low: float | None = None,
    high: float | None = None,
    note: str = "",
    scale: bool = True,
    source: str = "",
) -> Cell:
    """A numeric cell with its interval, as ``62.13 [55.10, 68.92]`` (x100 when ``scale``)."""
    fmt = pct if scale else (lambda v: "–" if v is None or math.isnan(v) else f"{v:.2f}")
    text = fmt(value)
    if low is not None and high is not None and not (math.isnan(low) or math.isnan(high)):
        text += f" [{fmt(low)}, {fmt(high)}]"
    return Cell(text=text, value=value, low=low, high=high, note=note, source=source)


def text(value: str, note: str = "") -> Cell:
    return Cell(text=value, note=note)
