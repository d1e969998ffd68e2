"""The report's document model: sections of tables and figures, independent of the output format."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: The most characters a name or value shows in a table cell, a figure or a list item; a longer one is cut with
#: "…" (in HTML its full value is the cell's hover title).
SHOWN = 240
#: The most characters of the report's own prose (titles, captions, notes) that show; ours are far shorter, so only
#: prose that quotes a huge value is cut.
PROSE = 2000
#: The most characters a hover title holds: 4,096 (Linux's PATH_MAX), so any real path or model id shows in full;
#: a longer value (a 20 MB "model name") is cut there too, saying so, and the report stays linear in its input.
TITLE = 4096


def shorten(text: str, limit: int = SHOWN) -> str:
    """``text`` cut to at most ``limit`` characters, the last one "…" where it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def hover(text: str) -> str:
    """``text`` as a hover title: whole up to :data:`TITLE` characters, else cut there, saying how long it was."""
    return text if len(text) <= TITLE else f"{text[:TITLE]}… (the first {TITLE:,} of {len(text):,} characters)"


@dataclass
class Cell:
    """A table cell. ``value`` is the number exactly as in the results file (None for text cells).

    ``source`` names the results-file entry a copied number comes from; ``derived`` says how the report
    computed a number that no results file holds (a plain mean); ``n`` is the denominator shown with the
    number in both formats; ``note`` is the longer explanation shown on hover in HTML.
    """

    text: str
    value: float | None = None
    low: float | None = None
    high: float | None = None
    note: str = ""  # shown on hover in HTML
    source: str = ""  # "<run index>|<task>|<metric>" when the value is copied from a results file
    n: str = ""  # the denominator, shown under the number (HTML) or after it (Markdown)
    derived: str = ""  # how the report computed the value, when it is not copied
    coverage: float | None = None  # the score's ``<name>_coverage``: share of its inputs that counted
    reason: str = ""  # why an undefined value is undefined, shown with its dash
    #: The interval's centre where the interval excludes the estimate (``<name>_ci_centre``: the bias-corrected
    #: estimate), shown under the number; ``note`` then says why (:func:`fairness_evals.centres.why`).
    centre: str = ""
    #: ``(statistic, method)`` of the interval the cell shows, as its statistics table declares them: the table's
    #: caption names each method used (:func:`methods`).
    interval: tuple[str, str] | None = None

    @property
    def coverage_text(self) -> str:
        """``coverage 95%`` (``coverage –`` when undefined, ``coverage ∞ (not a share)`` outside [0, 1]), or "" for
        a number without a coverage."""
        if self.coverage is None:
            return ""
        if math.isnan(self.coverage):
            return "coverage –"
        if not 0.0 <= self.coverage <= 1.0:
            return f"coverage {plain(self.coverage, 3)} (not a share)"
        return f"coverage {share(self.coverage)}"

    @property
    def missing(self) -> bool:
        return self.value is not None and math.isnan(self.value)


def share(value: float) -> str:
    """A share as a whole percentage, with one decimal where rounding would show 0% or 100% for a share that is
    neither (99.6% must not read as everything)."""
    whole = f"{100 * value:.0f}"
    if (whole == "100" and value < 1) or (whole == "0" and value > 0):
        return f"{100 * value:.1f}%"
    return f"{whole}%"


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    caption: str = ""

    @property
    def full_caption(self) -> str:
        """The caption, then the interval methods of the cells that show one (:func:`methods`)."""
        return " ".join(part for part in (self.caption, methods(self.rows)) if part)


def methods(rows: list[list[Cell]]) -> str:
    """``95% intervals: <method> (<statistic>, ...); ...`` for the intervals the cells show, each method named once
    with the statistics (as declared: ``s_e_{axis}``) that use it; "" when no cell shows one."""
    used: dict[str, list[str]] = {}
    for cell in (c for row in rows for c in row):
        if cell.interval is not None and cell.interval[0] not in used.setdefault(cell.interval[1], []):
            used[cell.interval[1]].append(cell.interval[0])
    if not used:
        return ""
    return "95% intervals: " + "; ".join(f"{method} ({', '.join(names)})" for method, names in used.items()) + "."


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
        return "∞" if value > 0 else "-∞"
    return f"{100 * value:.{digits}f}"


def plain(value: float | None, digits: int = 2) -> str:
    """A number as reported (no scaling), or an en dash when undefined."""
    if value is None or math.isnan(value):
        return "–"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return f"{value:.{digits}f}"


def count(value: float | None) -> str:
    """A count from a results file ("?" when the results do not carry it)."""
    if value is None or math.isnan(value):
        return "?"
    return f"{value:.0f}"


def number(
    value: float,
    low: float | None = None,
    high: float | None = None,
    note: str = "",
    scale: bool = True,
    source: str = "",
    n: str = "",
    derived: str = "",
    digits: int = 2,
    coverage: float | None = None,
    reason: str = "",
    centre: float | None = None,
    interval: tuple[str, str] | None = None,
) -> Cell:
    """A numeric cell with its interval, as ``62.13 [55.10, 68.92]`` (x100 when ``scale``), its coverage, when
    undefined the reason, and the interval's ``centre`` where it excludes the estimate (the caller says why in
    ``note``)."""

    def fmt(v: float) -> str:
        return shown(v, scale, digits)

    text = fmt(value)
    if low is not None and high is not None and not (math.isnan(low) or math.isnan(high)):
        text += f" [{fmt(low)}, {fmt(high)}]"
    return Cell(
        text=text, value=value, low=low, high=high, note=note, source=source, n=n, derived=derived,
        coverage=coverage, reason=reason, interval=interval,
        centre="" if centre is None or math.isnan(centre) else f"centred on {fmt(centre)} (bias-corrected)",
    )  # fmt: skip


def shown(value: float, scale: bool = True, digits: int = 2) -> str:
    """A number as a cell shows it: x100 when ``scale`` (:func:`pct`), else as reported (:func:`plain`)."""
    return pct(value, digits) if scale else plain(value, digits)


def text(value: str, note: str = "") -> Cell:
    return Cell(text=value, note=note)
