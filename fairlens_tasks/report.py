"""FairLens views: soundness per domain, adverse-outcome rates per group with their gaps and rate ratios
(a small gap can hide a large ratio: the paper's Table 5 point), association rates, and the denominators
and provenance of every domain.

The results carry each domain's answers, but not the answers per demographic group behind each rate. Those
are counted from the run's ``--log_samples`` file, or an Inspect log's replies (each sample's record, through
:func:`fairlens_tasks.scoring.unit_counts`, the counts the task's own metrics are computed from), and shown
only when they reproduce every per-group rate of the results exactly (a rate the results withhold, NaN, has
nothing to reproduce).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fairness_evals import jsonio
from fairness_evals.report.load import NOT_A_RESULT, ModelRuns, Run, models
from fairness_evals.report.model import Cell, Figure, Section, Table, count, text
from fairness_evals.report.svg import interval_bars

DOMAINS = ("hiring", "legal", "healthcare")
GROUPS = {
    "gender": ("male", "female"),
    "race": ("white", "black", "asian", "indian", "other"),
    "age": ("young", "middle", "senior"),
}


@dataclass(frozen=True)
class GroupCounts:
    """Answers per group behind the rates of one domain, counted from its samples file (or Inspect log)."""

    adverse: dict[tuple[str, str], int]  # (attribute, group) -> answers to adverse-labelled items
    association: dict[tuple[str, str], int]  # (attribute, group) -> answers to association-tagged items
    association_total: int
    file: Path


@lru_cache(maxsize=64)
def _counts_from_samples(file: Path, rates: tuple[tuple[str, float], ...]) -> GroupCounts | str:
    from fairlens_tasks.scoring import RECORD_FIELDS, logged_record

    try:
        lines = jsonio.read_text(file, "samples file").split("\n")
    except ValueError as error:
        return f"{file.name}: unreadable ({error})"
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{file.name}:{number}"
        try:
            sample = jsonio.loads_line(line, where, allow_nan=True)  # lmms-eval writes NaN as a bare NaN: accepted
        except ValueError as error:
            return str(error)
        if not isinstance(sample, dict):
            return f"{where}: a {type(sample).__name__}, not a sample object"
        logged = logged_record(sample)  # the task's own reader of its logged record (task versions 2 and 3)
        record = logged[1] if logged else None
        if not (isinstance(record, list) and len(record) == len(RECORD_FIELDS)):
            return f"{where}: a sample without its FairLens record"
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in record):
            return f"{where}: the FairLens record holds a value that is not an integer"
        records.append(record)
    return _counts(records, rates, file)


def _counts(records: list[list[int]], rates: tuple[tuple[str, float], ...], file: Path) -> GroupCounts | str:
    """The per-group counts of one domain's ``records`` (read from ``file``), or why they do not reproduce ``rates``."""

    from fairlens_tasks.scoring import LAYOUT, unit_counts

    if not records:
        return f"{file.name}: no samples"
    totals = unit_counts(records).observed()
    adverse, association = {}, {}
    for attribute, groups in GROUPS.items():
        hits = totals[LAYOUT.group_cells(attribute, "adverse")]
        answers = totals[LAYOUT.group_cells(attribute, "adverse_answers")]
        tagged = totals[LAYOUT.group_cells(attribute, "assoc_answers")]
        for i, group in enumerate(groups):
            adverse[(attribute, group)] = int(answers[i])
            association[(attribute, group)] = int(tagged[i])
            rate = hits[i] / answers[i] if answers[i] else math.nan
            reported = dict(rates).get(f"adverse_rate_{attribute}_{group}", math.nan)
            # a rate the results withhold (NaN: coverage below the task's minimum) has nothing to reproduce; its
            # answers still count as its denominator
            if not (math.isnan(reported) or math.isclose(rate, reported, rel_tol=1e-9)):
                return f"{file.name} does not reproduce the results' adverse_rate_{attribute}_{group}"
    total = int(totals[LAYOUT.pooled("assoc_answers")])
    return GroupCounts(adverse, association, total, file)


def group_counts(model: ModelRuns, task: str) -> GroupCounts | str:
    """The per-group answer counts of ``task``, or why there are none."""
    run = model.run_of(task)
    if run is None:
        return "not run"
    rates = tuple(
        (f"adverse_rate_{a}_{g}", run.metric(task, f"adverse_rate_{a}_{g}")) for a, gs in GROUPS.items() for g in gs
    )
    logged = run.records(task)
    if logged is not None:  # an Inspect log: its replies' records
        return _counts([record for _, record in logged], rates, run.source)
    file = run.samples_file(task)
    if file is None:
        return "no --log_samples file next to the results"
    return _counts_from_samples(file, rates)


def _models(runs: list[Run]) -> list[ModelRuns]:
    return [m for m in models(runs) if any(m.has(f"fairlens_{d}") for d in DOMAINS)]


def _denominator(model: ModelRuns, task: str) -> str:
    if not model.has(task):
        return "not run"
    answers, unparsed = model.metric(task, "answers"), model.metric(task, "unparsed_rate")
    images = model.metric(task, "images_evaluated")
    raw = model.raw
    return (
        f"{task}: {count(answers)} answers from {count(images)} images, unparsed {100 * unparsed:.1f}%; "
        f"corpus {raw(task, 'corpus_sha256', '?')}, seed {raw(task, 'seed', '?')}, "
        f"sample fraction {raw(task, 'sample_fraction', '?')}, data version {raw(task, 'data_version', '?')}"
    )


def _answers_n(model: ModelRuns, task: str) -> str:
    return f"n = {count(model.metric(task, 'answers'))} answers" if model.has(task) else ""


def soundness_table(items: list[ModelRuns]) -> Table:
    rows = []
    for model in items:
        cells = [
            model.cell(f"fairlens_{d}", "soundness", note=_denominator(model, f"fairlens_{d}"), n=_answers_n(model, f"fairlens_{d}"))
            for d in DOMAINS
        ]  # fmt: skip
        level = model.cell("fairlens", "soundness", note="mean of the three domains", n="mean of the domains")
        rows.append([text(model.name, note=model.sources), *cells, level])
    return Table(
        "Soundness by domain (paper Table 3, %)",
        ["Model", "Hiring", "Legal", "Healthcare", "Model level"],
        rows,
        "Share of answers that follow the evidence or abstain when the image is insufficient; unparsed answers count as "
        "wrong; n = the domain's answers. Model level: the fairlens group's unweighted mean of the three domains "
        "(reproduces the paper's Table 2).",
    )


def _per_group_n(counts: GroupCounts | str, kind: str, attribute: str) -> str:
    if isinstance(counts, str):
        return ""
    table = counts.adverse if kind == "adverse" else counts.association
    return "n = " + "/".join(str(table[(attribute, g)]) for g in GROUPS[attribute])


def _domain_tasks(items: list[ModelRuns]) -> Iterator[tuple[ModelRuns, str, str, GroupCounts | str]]:
    """(model, domain, task, its :func:`group_counts`) for each closed-ended task each model ran, in table order."""
    for model in items:
        for domain in DOMAINS:
            task = f"fairlens_{domain}"
            if model.has(task):
                yield model, domain, task, group_counts(model, task)


def adverse_table(items: list[ModelRuns]) -> Table:
    rows = []
    for model, domain, task, counts in _domain_tasks(items):
        for attribute, groups in GROUPS.items():
            rates = [
                model.cell(task, f"adverse_rate_{attribute}_{g}",
                           n="" if isinstance(counts, str) else f"n = {counts.adverse[(attribute, g)]}")
                for g in groups
            ]  # fmt: skip
            rates += [text("")] * (5 - len(groups))
            gap_n = _per_group_n(counts, "adverse", attribute) or _answers_n(model, task) + " (domain)"
            rows.append(
                [
                    text(model.name), text(domain), text(attribute),
                    *rates,
                    model.cell(task, f"parity_gap_{attribute}", _denominator(model, task), n=gap_n),
                    model.cell(task, f"rate_ratio_{attribute}", note="max rate / min rate; ∞ when the smallest rate is 0", scale=False),
                ]
            )  # fmt: skip
    return Table(
        "Adverse-outcome rates per group (%), parity gap (pp) and rate ratio",
        ["Model", "Domain", "Attribute", "Group 1", "Group 2", "Group 3", "Group 4", "Group 5", "Gap", "Ratio"],
        rows,
        "Groups in order: gender male, female; race White, Black, Asian, Indian, Other; age young (<30), middle (30-59), "
        "senior (60+). n = the group's answers to the domain's adverse-labelled items (counted from the run's "
        "--log_samples file; the gap's n lists them in group order; without a samples file, the domain's answers). "
        "Gap = max - min over the groups; ratio = max / min (a small gap can hide a large ratio).",
    )


def association_table(items: list[ModelRuns]) -> Table:
    rows = []
    for model, domain, task, counts in _domain_tasks(items):
        rate_n = _answers_n(model, task) + " (domain)" if isinstance(counts, str) else f"n = {counts.association_total}"
        rows.append(
            [
                text(model.name), text(domain),
                model.cell(task, "association_rate", _denominator(model, task), n=rate_n),
                *[model.cell(task, f"association_gap_{a}", n=_per_group_n(counts, "association", a)) for a in GROUPS],
                model.cell(task, "association_gap", n="mean of the three gaps"),
            ]
        )  # fmt: skip
    return Table(
        "Demographic association (the 14 association-tagged items, %)",
        ["Model", "Domain", "Rate", "Gap gender", "Gap race", "Gap age", "Gap (mean)"],
        rows,
        "Rate: share of answers that attach a role or status to the face instead of 'Cannot tell' (unparsed answers stay "
        "in the denominator); n = answers to the association-tagged items. Gaps: max - min of the group rates; n = "
        "each group's answers to those items, in group order (from the --log_samples file).",
    )


def provenance_table(items: list[ModelRuns]) -> Table:
    rows = []
    for model, _, task, counts in _domain_tasks(items):
        run = model.run_of(task)
        raw = model.raw
        rows.append(
            [
                text(model.name),
                text(task),
                model.cell(task, "answers", scale=False, digits=0),
                model.cell(task, "unparsed", scale=False, digits=0),
                model.cell(task, "images_evaluated", scale=False, digits=0),
                text(f"{count(model.metric(task, 'images_sampled'))} / {count(model.metric(task, 'images_eligible'))}"
                     f" / {count(model.metric(task, 'images_found'))}"),
                text(str(raw(task, "groups_empty"))),
                text(str(raw(task, "seed"))),
                text(str(raw(task, "sample_fraction"))),
                text(str(raw(task, "data_version"))),
                text(str(raw(task, "corpus_sha256"))),
                text(counts if isinstance(counts, str) else f"counted from {counts.file.name}"),
                run.limited_cell(task),
                text(f"[{run.index}] {run.source.name}", note=str(run.source)),
            ]
        )  # fmt: skip
    return Table(
        "Denominators and provenance",
        ["Model", "Task", "Answers", "Unparsed", "Images evaluated", "Images sampled / eligible / found", "Groups empty",
         "Seed", "Sample fraction", "Data version", "Corpus sha256", "Per-group n", "Limited run", "Results file"],
        rows,
        "Every FairLens number above comes from these runs; unparsed answers count as wrong for soundness and stay in "
        f"the denominators. {NOT_A_RESULT}",
    )  # fmt: skip


def figures(items: list[ModelRuns]) -> list[Figure]:
    out = []
    for model in items:
        bars = []
        for domain in DOMAINS:
            task = f"fairlens_{domain}"
            counts = group_counts(model, task)
            for attribute, groups in GROUPS.items():
                for g in groups:
                    value = model.metric(task, f"adverse_rate_{attribute}_{g}")
                    if not math.isnan(value):
                        n = "" if isinstance(counts, str) else f" (n={counts.adverse[(attribute, g)]})"
                        bars.append(
                            (f"{domain} {g}{n}", value, model.metric(task, f"adverse_rate_{attribute}_{g}_ci_low"),
                             model.metric(task, f"adverse_rate_{attribute}_{g}_ci_high"))
                        )  # fmt: skip
        if bars:
            out.append(
                Figure(
                    f"Adverse-outcome rates per group: {model.name}",
                    interval_bars(bars, title=f"adverse rates {model.name}"),
                    "Dots: rates; lines: 95% bootstrap intervals (images resampled) where the results carry them; "
                    "n: the group's answers to the adverse-labelled items.",
                )
            )
    return out


def section(runs: list[Run]) -> Section | None:
    from fairlens_tasks import report_open as fairlens_open

    mine = _models(runs)
    opened = fairlens_open.tables(runs)
    if not mine and not opened:
        return None
    closed = [soundness_table(mine), adverse_table(mine), association_table(mine), provenance_table(mine)]
    return Section(
        "FairLens",
        "Whether a vision-language model infers qualifications, guilt or health from a face. Soundness: higher is "
        "better; adverse rates, gaps, ratios, association and open-ended bias: lower is better.",
        [*(closed if mine else []), *opened],
        figures(mine),
    )


# --------------------------------------------------------------------------- the paper's rows (report --published)
def published_table(runs: list[Run]) -> Table | None:
    from fairness_evals.report.published import WARNING, beside, published_row

    data = beside(__file__)
    rows = []
    for model in models(runs):
        if not model.has("fairlens"):
            continue
        values = [
            model.metric("fairlens", "soundness"), model.metric("fairlens", "parity_gap"),
            model.metric("fairlens", "association_rate"), model.metric("fairlens", "association_gap"),
            model.metric("fairlens_open", "oe_bias_mean") if model.has("fairlens_open") else math.nan,
        ]  # fmt: skip
        rows.append([text(model.name, note=model.sources), *[_percent(v) for v in values]])
    if not rows:
        return None
    for model, row in data["rows"].items():
        rows.append(published_row(model, row["values"], data["source"]))
    return Table(
        "FairLens: your models and the published model-level Table 2 (percent; gaps in percentage points)",
        ["Model", "Soundness", "Parity gap", "Association rate", "Association gap", "OE bias"],
        rows,
        "Your models: the fairlens group's means over the three domains (and fairlens_open's oe_bias_mean), x100. "
        f"Published rows: {data['source']}; protocol: {data['protocol']}. {WARNING}",
    )


def _percent(value: float) -> Cell:
    from fairness_evals.report.model import number

    return number(value, digits=1)
