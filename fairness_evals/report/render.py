"""One self-contained HTML file (inline CSS and SVG; no scripts, fonts or links to fetch) or Markdown."""

from __future__ import annotations

import math
from html import escape

from fairness_evals import __version__
from fairness_evals.report.model import PROSE, SHOWN, Cell, Section, Table, hover, shorten

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1400px;color:#222;padding:0 1rem}
h1{font-size:1.6rem}h2{margin-top:2.5rem;border-bottom:2px solid #1b6ca8;padding-bottom:.2rem}
h3{font-size:1.05rem;margin-top:1.6rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.86rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right;white-space:nowrap}
th{background:#eef3f8}td:first-child,th:first-child{text-align:left}
td.missing{color:#999}td.text{text-align:left;white-space:normal}td[title]{cursor:help}
.scroll{overflow-x:auto;max-width:100%}
.caption,.intro,.meta{color:#555;font-size:.85rem;max-width:70rem}
figure{margin:1rem 0}figcaption{color:#555;font-size:.85rem;max-width:560px}
.sources li{font-size:.8rem;color:#555}
td .ctr,td .n,td .cov,td .why{display:block;color:#666;font-size:.75rem;white-space:normal}td .why{font-style:italic}td.text:first-child{white-space:nowrap}td.derived{font-style:italic}
.multiples{display:flex;flex-wrap:wrap;gap:.5rem 1rem}
""".strip()


def _cell_html(cell: Cell, header: bool = False) -> str:
    tag = "th" if header else "td"
    attrs = []
    if cell.value is not None:
        attrs.append(f'data-value="{_raw(cell.value)}"')
    if cell.source:
        attrs.append(f'data-source="{escape(cell.source)}"')
    if cell.value is not None and cell.low is not None and cell.high is not None:
        attrs.append(f'data-low="{_raw(cell.low)}" data-high="{_raw(cell.high)}"')
    if cell.derived:
        attrs.append(f'data-derived="{escape(cell.derived)}"')
    classes = ["missing" if cell.missing else "text" if cell.value is None else "", "derived" if cell.derived else ""]
    if any(classes):
        attrs.append(f'class="{" ".join(c for c in classes if c)}"')
    shown = shorten(cell.text)
    full = cell.text if shown != cell.text else ""  # a cut text shows in full on hover
    title = " ".join(t for t in (full, cell.note, cell.derived and f"({cell.derived})") if t)
    if title:
        attrs.append(f'title="{escape(hover(title))}"')
    if cell.coverage is not None:
        attrs.append(f'data-coverage="{_raw(cell.coverage)}"')
    extra = [(cls, t) for cls, t in (("ctr", cell.centre), ("n", cell.n), ("cov", cell.coverage_text),
                                     ("why", cell.reason)) if t]  # fmt: skip
    body = escape(shown) + "".join(f'<span class="{cls}">{escape(shorten(t))}</span>' for cls, t in extra)
    return f"<{tag} {' '.join(attrs)}>{body}</{tag}>" if attrs else f"<{tag}>{body}</{tag}>"


def _raw(value: float) -> str:
    """The exact value of the results file, as Python writes it (repr round-trips)."""
    if math.isnan(value):
        return "NaN"
    return repr(float(value))


def _prose(text: str) -> str:
    """The report's own prose (a title, caption or note), HTML-escaped, cut at :data:`PROSE` characters."""
    return escape(shorten(text, PROSE))


def _table_html(table: Table) -> str:
    head = "".join(f"<th>{escape(shorten(c))}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(_cell_html(c) for c in row) + "</tr>" for row in table.rows)
    caption = f'<p class="caption">{_prose(table.full_caption)}</p>' if table.full_caption else ""
    return (
        f'<h3>{_prose(table.title)}</h3><div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>{caption}"
    )


def html(title: str, sections: list[Section], sources: list[str], notes: list[str]) -> str:
    """The HTML report. Every string shown is cut (:func:`~fairness_evals.report.model.shorten`): names and values
    at :data:`~fairness_evals.report.model.SHOWN` characters, whole on hover up to
    :data:`~fairness_evals.report.model.TITLE`; prose at :data:`PROSE`."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_prose(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_prose(title)}</h1>",
        f'<p class="meta">fairness-evals {__version__}. {intro()} Hover a cell for the details of its denominator.</p>',
    ]
    parts += [f'<p class="meta">{_prose(n)}</p>' for n in notes]
    for section in sections:
        parts.append(f"<h2>{_prose(section.title)}</h2>")
        if section.intro:
            parts.append(f'<p class="intro">{_prose(section.intro)}</p>')
        for figure in section.figures:
            caption = f"<figcaption>{_prose(figure.caption)}</figcaption>" if figure.caption else ""
            parts.append(f"<figure><h3>{_prose(figure.title)}</h3>{figure.svg}{caption}</figure>")
        parts += [_table_html(t) for t in section.tables]
    parts.append(
        '<h2>Sources</h2><ul class="sources">'
        + "".join(f'<li data-run="{i}">{_prose(s)}</li>' for i, s in enumerate(sources))
        + "</ul>"
    )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def scales(hundred: str, reported: str) -> str:
    """The titles of the benchmarks shown x100 (their ``differences`` scale) followed by ``hundred``, then those of the
    others followed by ``reported``: "Fact-or-Fair and FairLens values are x100 ..., IRIS scores as reported"."""
    from fairness_evals import benchmarks

    def names(titles: list[str]) -> str:
        return " and ".join([", ".join(titles[:-1]), titles[-1]] if len(titles) > 1 else titles)

    registered = benchmarks.registry().values()
    x100 = [b.title for b in registered if b.differences[0] == 100.0]
    others = [b.title for b in registered if b.differences[0] != 100.0]
    parts = []
    if x100:
        parts.append(f"{names(x100)} {hundred}")
    if others:
        parts.append(f"{names(others)} {reported}")
    return ", ".join(parts)


def intro() -> str:
    return INTRO.format(scales=scales("values are x100 as in the papers", "scores as reported"))


INTRO = (
    "Numbers are copied from the results files; the few the report computes (plain means, in italics, named in "
    "each caption) say so. {scales}; "
    "brackets are 95% intervals, each table naming its methods (an interval that corrects a biased estimate can lie "
    "beside it: the cell then shows the bias-corrected estimate it is centred on); n is each score's denominator; "
    "coverage is the share of a score's inputs that "
    "counted (answers parsed, mapped or judged). A dash means undefined, with the reason where the results tell it "
    "(e.g. a score withheld because its coverage is below the task's minimum)."
)


def _md_cell(cell: Cell) -> str:
    text = md_escape(shorten(cell.text))
    text = f"_{text}_" if cell.derived and cell.text not in ("", "–") else text
    extra = [shorten(t) for t in (cell.centre, cell.n, cell.coverage_text, cell.reason) if t]
    return text + (f" ({md_escape('; '.join(extra))})" if extra else "")


def md_escape(text: str, brackets: bool = False, limit: int = PROSE) -> str:
    """``text`` safe in a Markdown line or table cell: no HTML (``&``, ``<``, ``>`` as entities, so a model named
    ``<script>`` is shown, not run, by viewers that render inline HTML), no code span or link the text did not
    mean (backslashes, backticks and ``](`` escaped; every bracket with ``brackets``), no cell or line breaks; cut
    at ``limit`` characters (:func:`~fairness_evals.report.model.shorten`)."""
    text = shorten(text, limit).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\\", "\\\\").replace("`", "\\`")
    text = text.replace("[", "\\[").replace("]", "\\]") if brackets else text.replace("](", "]\\(")
    return " ".join(text.replace("|", "\\|").splitlines())


def markdown(title: str, sections: list[Section], sources: list[str], notes: list[str]) -> str:
    lines = [
        f"# {md_escape(title)}",
        "",
        f"fairness-evals {__version__}. {intro()} Figures are in the HTML report (`--format html`).",
        "",
    ]
    lines += [f"> {md_escape(n)}" for n in notes]
    for section in sections:
        lines += ["", f"## {md_escape(section.title)}", ""]
        if section.intro:
            lines += [md_escape(section.intro), ""]
        for table in section.tables:
            lines += [f"### {md_escape(table.title)}", ""]
            lines.append("| " + " | ".join(md_escape(c, limit=SHOWN) for c in table.columns) + " |")
            lines.append("|" + "|".join("---" for _ in table.columns) + "|")
            for row in table.rows:
                lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
            if table.full_caption:
                lines += ["", f"*{md_escape(table.full_caption)}*"]
            lines.append("")
    lines += ["## Sources", ""] + [f"- {md_escape(s, brackets=True)}" for s in sources]
    return "\n".join(lines) + "\n"
