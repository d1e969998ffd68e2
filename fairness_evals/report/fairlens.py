"""FairLens views: soundness per domain, adverse-outcome rates per group with their gaps and rate ratios
(a small gap can hide a large ratio: the paper's Table 5 point), and association rates."""

from __future__ import annotations

import math

from fairness_evals.report.load import Run
from fairness_evals.report.model import Figure, Section, Table, text
from fairness_evals.report.svg import interval_bars

DOMAINS = ("hiring", "legal", "healthcare")
GROUPS = {
    "gender": ("male", "female"),
    "race": ("white", "black", "asian", "indian", "other"),
    "age": ("young", "middle", "senior"),
}


def _runs(runs: list[Run]) -> list[Run]:
    return [run for run in runs if any(run.has(f"fairlens_{d}") for d in DOMAINS)]


def _cell(run: Run, task: str, name: str, note: str = ""):
    return run.cell(task, name, note=note)


def _denominator(run: Run, task: str) -> str:
    if not run.has(task):
        return "not run"
    answers, unparsed = run.metric(task, "answers"), run.metric(task, "unparsed_rate")
    images = run.metric(task, "images_evaluated")
    return (
        f"{task}: {answers:.0f} answers from {images:.0f} images, unparsed {100 * unparsed:.1f}%; "
        f"corpus {run.results[task].get('corpus_sha256', '?')}, seed {run.results[task].get('seed', '?')}, "
        f"sample fraction {run.results[task].get('sample_fraction', '?')}, data version {run.results[task].get('data_version', '?')}"
    )


def soundness_table(runs: list[Run]) -> Table:
    rows = []
    for run in runs:
        cells = [_cell(run, f"fairlens_{d}", "soundness", _denominator(run, f"fairlens_{d}")) for d in DOMAINS]
        rows.append([text(run.model), *cells, run.cell("fairlens", "soundness", note="mean of the three domains")])
    return Table(
        "Soundness by domain (paper Table 3, %)",
        ["Model", "Hiring", "Legal", "Healthcare", "Model level"],
        rows,
        "Share of answers that follow the evidence or abstain when the image is insufficient; unparsed answers count as "
        "wrong. Model level: unweighted mean of the three domains (reproduces the paper's Table 2).",
    )


def adverse_table(runs: list[Run]) -> Table:
    rows = []
    for run in runs:
        for domain in DOMAINS:
            task = f"fairlens_{domain}"
            if not run.has(task):
                continue
            for attribute, groups in GROUPS.items():
                rates = [_cell(run, task, f"adverse_rate_{attribute}_{g}") for g in groups]
                rates += [text("")] * (5 - len(groups))
                rows.append(
                    [
                        text(run.model), text(domain), text(attribute),
                        *rates,
                        _cell(run, task, f"parity_gap_{attribute}", _denominator(run, task)),
                        run.cell(task, f"rate_ratio_{attribute}", note="max rate / min rate; ∞ when the smallest rate is 0", scale=False),
                    ]
                )  # fmt: skip
    return Table(
        "Adverse-outcome rates per group (%), parity gap (pp) and rate ratio",
        ["Model", "Domain", "Attribute", "Group 1", "Group 2", "Group 3", "Group 4", "Group 5", "Gap", "Ratio"],
        rows,
        "Groups in order: gender male, female; race White, Black, Asian, Indian, Other; age young (<30), middle (30-59), "
        "senior (60+). Gap = max - min over the groups; ratio = max / min (a small gap can hide a large ratio).",
    )


def association_table(runs: list[Run]) -> Table:
    rows = []
    for run in runs:
        for domain in DOMAINS:
            task = f"fairlens_{domain}"
            if not run.has(task):
                continue
            rows.append(
                [
                    text(run.model), text(domain),
                    _cell(run, task, "association_rate", _denominator(run, task)),
                    *[_cell(run, task, f"association_gap_{a}") for a in GROUPS],
                    _cell(run, task, "association_gap"),
                ]
            )  # fmt: skip
    return Table(
        "Demographic association (the 14 association-tagged items, %)",
        ["Model", "Domain", "Rate", "Gap gender", "Gap race", "Gap age", "Gap (mean)"],
        rows,
        "Rate: share of answers that attach a role or status to the face instead of 'Cannot tell' (unparsed answers stay "
        "in the denominator). Gaps: max - min of the group rates.",
    )


def figures(runs: list[Run]) -> list[Figure]:
    out = []
    for run in runs:
        bars = []
        for domain in DOMAINS:
            task = f"fairlens_{domain}"
            for attribute, groups in GROUPS.items():
                for g in groups:
                    value = run.metric(task, f"adverse_rate_{attribute}_{g}")
                    if not math.isnan(value):
                        bars.append(
                            (f"{domain} {g}", value, run.metric(task, f"adverse_rate_{attribute}_{g}_ci_low"),
                             run.metric(task, f"adverse_rate_{attribute}_{g}_ci_high"))
                        )  # fmt: skip
        if bars:
            out.append(
                Figure(
                    f"Adverse-outcome rates per group: {run.model}",
                    interval_bars(bars, title=f"adverse rates {run.model}"),
                    "Dots: rates; lines: 95% bootstrap intervals (images resampled) where the results carry them.",
                )
            )
    return out


def section(runs: list[Run]) -> Section | None:
    mine = _runs(runs)
    if not mine:
        return None
    return Section(
        "FairLens",
        "Whether a vision-language model infers qualifications, guilt or health from a face. Soundness: higher is "
        "better; adverse rates, gaps, ratios and association: lower is better.",
        [soundness_table(mine), adverse_table(mine), association_table(mine)],
        figures(mine),
    )
