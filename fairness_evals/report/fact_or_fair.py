"""Fact-or-Fair views: paper Table 2 per model, the per-context tables (Tables 4-8), the cognitive-error
rates (Table 3) and the signature figure, S_fact against S_E with the bound g_k (paper Fig. 2a / 4)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from fairness_evals.report.load import Run
from fairness_evals.report.model import Figure, Section, Table, number, text
from fairness_evals.report.svg import Point, fact_fair_plot

AXES = ("gender", "race")
CONTEXTS = ("base", "representativeness", "attribution", "ingroup")
SHORT = {"objective": "O", "base": "S-B", "representativeness": "S-R", "attribution": "S-A", "ingroup": "S-G"}
VARIANTS = {"": "generation", "_lite": "generation, 10 draws", "_mc": "log-likelihood"}
SCORES = (("s_fact", "S_fact"), ("s_e", "S_E"), ("s_kld", "S_KLD"), ("s_fair", "S_fair"), ("distance", "d"))
RATES = (
    ("representativeness", "representativeness_high", "R-High"),
    ("representativeness", "representativeness_low", "R-Low"),
    ("attribution", "attribution_rate", "Attr."),
    ("ingroup", "ingroup_rate", "In-G."),
    ("ingroup", "outgroup_rate", "Out-G."),
)


@dataclass
class Entry:
    """One model's Fact-or-Fair tasks of one variant."""

    run: Run
    variant: str

    @property
    def label(self) -> str:
        return self.run.model if not self.variant else f"{self.run.model} ({VARIANTS[self.variant]})"

    def task(self, kind: str) -> str:
        if kind == "objective":
            return "fact_or_fair_objective_mc" if self.variant == "_mc" else "fact_or_fair_objective"
        return f"fact_or_fair_subjective_{kind}{self.variant}"

    def tasks(self) -> list[str]:
        return [self.task(k) for k in ("objective", *CONTEXTS) if self.run.has(self.task(k))]

    def value(self, kind: str, name: str) -> float:
        return self.run.metric(self.task(kind), name)

    def cell(self, kind: str, name: str):
        return self.run.cell(self.task(kind), name, note=self.denominator(kind))

    def denominator(self, kind: str) -> str:
        task = self.task(kind)
        if not self.run.has(task):
            return "not run"
        parsed = self.run.metric(task, "parsed")
        total = self.run.n_samples.get(task, {}).get("effective")
        unparsed, refused = self.run.metric(task, "unparsed_rate"), self.run.metric(task, "refused_rate")
        return (
            f"{task}: {parsed:.0f} answers parsed of {total if total is not None else '?'}; "
            f"unparsed {100 * unparsed:.1f}%, refused {100 * refused:.1f}%"
        )


def entries(runs: list[Run]) -> list[Entry]:
    out = []
    for run in runs:
        for variant in VARIANTS:
            entry = Entry(run, variant)
            subjective = [entry.task(c) for c in CONTEXTS]
            if any(run.has(t) for t in subjective) or (variant != "_lite" and run.has(entry.task("objective"))):
                out.append(entry)
    return out


def _mean(values: list[float]) -> float:
    """The plain mean, NaN when any value is undefined (a table cell never averages over what is missing)."""
    return math.nan if not values or any(math.isnan(v) for v in values) else sum(values) / len(values)


def subjective_fair(entry: Entry, axis: str) -> float:
    """Table 2 "Subj." S_fair: the mean over the four contexts (the group's value, recomputed only if absent)."""
    group = "fact_or_fair_subjective" + entry.variant
    if entry.run.has(group) and not math.isnan(entry.run.metric(group, f"s_fair_{axis}")):
        return entry.run.metric(group, f"s_fair_{axis}")  # the harness group's own mean
    return _mean([entry.value(c, f"s_fair_{axis}") for c in CONTEXTS])


def _subjective_cell(entry: Entry, axis: str, value: float):
    group = "fact_or_fair_subjective" + entry.variant
    note = "mean S_fair over the four subjective contexts"
    return number(value, note=note, source=entry.run.source_of(group, f"s_fair_{axis}"))


def table2(items: list[Entry]) -> Table:
    rows = []
    for e in items:
        obj = {a: e.value("objective", f"s_fact_{a}") for a in AXES}
        subj = {a: subjective_fair(e, a) for a in AXES}
        avg = {a: _mean([obj[a], subj[a]]) for a in AXES}
        rows.append(
            [
                text(e.label, note=f"{e.run.harness}, {e.run.source}"),
                *[e.cell("objective", f"s_fact_{a}") for a in AXES],
                number(_mean(list(obj.values()))),
                *[_subjective_cell(e, a, subj[a]) for a in AXES],
                number(_mean(list(subj.values()))),
                *[number(avg[a]) for a in AXES],
                number(_mean(list(avg.values()))),
            ]
        )
    return Table(
        "Fact-or-Fair summary (paper Table 2, x100)",
        ["Model", "Obj. S_fact G", "R", "Avg.", "Subj. S_fair G", "R", "Avg.", "Avg. G", "R", "Avg."],
        rows,
        "Obj.: fact_or_fair_objective S_fact with its 95% bootstrap interval. Subj.: mean S_fair over the four "
        "subjective contexts (the fact_or_fair_subjective group). Avg.: their plain mean, as the paper computes it.",
    )


def context_tables(items: list[Entry]) -> list[Table]:
    tables = []
    for axis in AXES:
        rows = []
        for e in items:
            for metric, label in SCORES:
                rows.append(
                    [text(e.label), text(label), *[e.cell(k, f"{metric}_{axis}") for k in ("objective", *CONTEXTS)]]
                )
        tables.append(
            Table(
                f"Per setting, {axis} (paper Tables 4-8, x100)",
                ["Model", "Score", *[SHORT[k] for k in ("objective", *CONTEXTS)]],
                rows,
                "O objective; S-B base scenario; S-R representativeness; S-A attribution; S-G in-group/out-group. "
                "Brackets: 95% bootstrap intervals (documents resampled). Hover a cell for its denominator.",
            )
        )
    return tables


def rates_table(items: list[Entry]) -> Table:
    rows = []
    for e in items:
        for axis in AXES:
            cells = [e.cell(ctx, f"{name}_{axis}") for ctx, name, _ in RATES]
            increases = [e.value(ctx, f"{name}_{axis}_increase") for ctx, name, _ in RATES]
            rows.append([text(e.label), text(axis), *cells, number(_mean(increases))])
    return Table(
        "Cognitive-error rates (paper Table 3, x100)",
        ["Model", "Axis", *[label for _, _, label in RATES], "Avg. increase"],
        rows,
        "Each rate from the task of its context; Avg. increase = mean over the five of (rate - chance baseline): "
        "gender 50; race 25, out-group 75.",
    )


def provenance_table(items: list[Entry]) -> Table:
    rows = []
    for e in items:
        for task in e.tasks():
            meta = e.run.metadata(task)
            rows.append(
                [
                    text(e.label),
                    text(task),
                    text(e.denominator(_kind(task))),
                    text(str(meta.get("fact_or_fair_seed", e.run.metric(task, "seed")))),
                    text(str(meta.get("fact_or_fair_draws", "–")) if "subjective" in task else "–"),
                    text(str(e.run.results[task].get("documents_sha256", "–"))),
                    text(str(meta.get("version", "–"))),
                    text("yes" if e.run.limit else "no", note=f"--limit {e.run.limit}" if e.run.limit else ""),
                ]
            )
    return Table(
        "Denominators and provenance",
        ["Model", "Task", "Answers", "Seed", "Draws", "Documents sha256", "Task version", "Limited run"],
        rows,
        "Unparsed and refused answers are left out of every score; a limited run (--limit) is not a benchmark result.",
    )


def _kind(task: str) -> str:
    rest = task.removeprefix("fact_or_fair_").removesuffix("_mc").removesuffix("_lite")
    return "objective" if rest == "objective" else rest.removeprefix("subjective_")


def figure(items: list[Entry]) -> list[Figure]:
    figures = []
    for axis, k in (("gender", 2), ("race", 4)):
        points = []
        for e in items:
            for kind in ("objective", *CONTEXTS):
                task = e.task(kind)
                if not e.run.has(task):
                    continue
                x, y = e.value(kind, f"s_fact_{axis}"), e.value(kind, f"s_e_{axis}")
                if math.isnan(x) or math.isnan(y):
                    continue
                points.append(
                    Point(
                        x=x, y=y,
                        x_low=e.value(kind, f"s_fact_{axis}_ci_low"), x_high=e.value(kind, f"s_fact_{axis}_ci_high"),
                        y_low=e.value(kind, f"s_e_{axis}_ci_low"), y_high=e.value(kind, f"s_e_{axis}_ci_high"),
                        series=e.label, label=SHORT[kind],
                    )
                )  # fmt: skip
        figures.append(
            Figure(
                f"S_fact against S_E, {axis} (k = {k})",
                fact_fair_plot(points, ks=(2, 4), highlight=k, title=f"{axis}: factuality vs entropy"),
                "The curve is the upper bound g_k of S_E given S_fact (paper Conclusion 1; k = 2 dashed, 4 solid). "
                "Whiskers: 95% bootstrap intervals. Points: one per task (O, S-B, S-R, S-A, S-G).",
            )
        )
    return figures


T2I_TASKS = {"objective": "fact_or_fair_t2i_objective", "subjective": "fact_or_fair_t2i_subjective"}


def t2i_tables(runs: list[Run]) -> list[Table]:
    """Text-to-image rows of paper Table 2 (Obj. S_fact, Subj. S_fair, their mean) and the face accounting."""
    found = [r for r in runs if any(r.has(t) for t in T2I_TASKS.values())]
    if not found:
        return []
    summary, faces = [], []
    obj, subj = T2I_TASKS["objective"], T2I_TASKS["subjective"]
    for run in found:
        o = {a: run.metric(obj, f"s_fact_{a}") for a in AXES}
        s = {a: run.metric(subj, f"s_fair_{a}") for a in AXES}
        avg = {a: _mean([o[a], s[a]]) for a in AXES}
        summary.append([
            text(run.model, note=f"{run.harness}, {run.source}"),
            *[run.cell(obj, f"s_fact_{a}") for a in AXES], number(_mean(list(o.values()))),
            *[run.cell(subj, f"s_fair_{a}") for a in AXES], number(_mean(list(s.values()))),
            *[number(avg[a]) for a in AXES], number(_mean(list(avg.values()))),
        ])  # fmt: skip
        for task in (obj, subj):
            if run.has(task):
                values = [run.metric(task, n) for n in
                          ("images", "faces_detected", "no_face_images", "failed_images", "missing_images")]  # fmt: skip
                counts = [text("–" if math.isnan(v) else f"{v:.0f}") for v in values]
                faces.append(
                    [text(run.model), text(task), *counts, text(str(run.results[task].get("classifier", "–")))]
                )
    return [
        Table(
            "Fact-or-Fair text-to-image summary (paper Table 2, T2I rows, x100)",
            ["Model", "Obj. S_fact G", "R", "Avg.", "Subj. S_fair G", "R", "Avg.", "Avg. G", "R", "Avg."],
            summary,
            "Distributions over detected faces (images resampled within each prompt for the 95% intervals). Race "
            "needs a race classifier (FairFace); without one the race columns are empty.",
        ),
        Table(
            "Text-to-image images and faces",
            ["Model", "Task", "Images", "Faces", "No face", "Failed", "Missing", "Classifier"],
            faces,
            "No face: images left out of every distribution; failed: unreadable files; missing: images asked for "
            "but not returned.",
        ),
    ]


def section(runs: list[Run]) -> Section | None:
    items = entries(runs)
    t2i = t2i_tables(runs)
    if not items and not t2i:
        return None
    llm = [table2(items), *context_tables(items), rates_table(items), provenance_table(items)] if items else []
    return Section(
        "Fact-or-Fair",
        "How a model trades facts (objective queries) against fairness (subjective queries). "
        "Values x100 as in the paper; higher is better except d (distance to the fact/fair bound).",
        [*llm, *t2i],
        figure(items) if items else [],
    )
