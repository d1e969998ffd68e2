"""Fact-or-Fair views: paper Table 2 per model, the per-context tables (Tables 4-8), the cognitive-error
rates (Table 3) and the signature figure, S_fact against S_E with the bound g_k (paper Fig. 2a / 4)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from fact_fair_tasks.figure import Point, bound_styles, fact_fair_plot
from fact_fair_tasks.scoring import group_mean
from fact_fair_tasks.statistics import TABLE2_S_FAIR
from fairness_evals.report.load import NOT_A_RESULT, ModelRuns, Run, models
from fairness_evals.report.model import Figure, Section, Table, count, number, pct, text

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
    """One model's Fact-or-Fair tasks of one variant (the tasks may come from several runs of the model)."""

    model: ModelRuns
    variant: str

    @property
    def label(self) -> str:
        return self.model.name if not self.variant else f"{self.model.name} ({VARIANTS[self.variant]})"

    def task(self, kind: str) -> str:
        if kind == "objective":
            return "fact_or_fair_objective_mc" if self.variant == "_mc" else "fact_or_fair_objective"
        return f"fact_or_fair_subjective_{kind}{self.variant}"

    def tasks(self) -> list[str]:
        return [self.task(k) for k in ("objective", *CONTEXTS) if self.model.has(self.task(k))]

    def value(self, kind: str, name: str) -> float:
        return self.model.metric(self.task(kind), name)

    def cell(self, kind: str, name: str):
        """The metric's cell, its n the score's own denominator (``n = 90 of 90``: the answers it counts, of the
        documents of its inputs), else, where the results do not carry it, the task's answers parsed (said so)."""
        task = self.task(kind)
        n = self.model.denominator(task, name)
        if not n and self.n(kind) and self.model.raw(task, name, None) is not None:
            n = f"{self.n(kind)} (the task's answers parsed)"
        return self.model.cell(task, name, note=self.denominator(kind), n=n)

    def n(self, kind: str) -> str:
        """The task's short count: answers parsed of documents evaluated."""
        task = self.task(kind)
        if not self.model.has(task):
            return ""
        total = self.model.n_samples(task).get("effective")
        return f"n = {count(self.model.metric(task, 'parsed'))} of {total if total is not None else '?'}"

    def denominator(self, kind: str) -> str:
        task = self.task(kind)
        if not self.model.has(task):
            return "not run"
        parsed = self.model.metric(task, "parsed")
        total = self.model.n_samples(task).get("effective")
        unparsed, refused = self.model.metric(task, "unparsed_rate"), self.model.metric(task, "refused_rate")
        return (
            f"{task}: {count(parsed)} answers parsed of {total if total is not None else '?'}; "
            f"unparsed {pct(unparsed, 1)}%, refused {pct(refused, 1)}%"
        )


def entries(runs: list[Run]) -> list[Entry]:
    """One row per model and variant it ran. The lite variant shares the objective task with the full one: an
    objective task without full subjective contexts belongs to the model's lite row when it has one (a
    ``fact_or_fair_lite`` run is one row, not an objective-only row beside a lite one)."""
    out = []
    for model in models(runs):
        subjective = {v: any(model.has(Entry(model, v).task(c)) for c in CONTEXTS) for v in VARIANTS}
        for variant in VARIANTS:
            entry = Entry(model, variant)
            objective_only = variant == "_mc" or (variant == "" and not subjective["_lite"])
            if subjective[variant] or (objective_only and model.has(entry.task("objective"))):
                out.append(entry)
    return out


def subjective_fair(entry: Entry, axis: str) -> float:
    """Table 2 "Subj." S_fair: the mean over the four contexts (a group's value, recomputed only if absent)."""
    group = _group_of(entry, axis)
    if group:
        return entry.model.metric(group, f"s_fair_{axis}")  # the harness group's own mean
    return TABLE2_S_FAIR.formula()([entry.value(c, f"s_fair_{axis}") for c in CONTEXTS])


def _group_of(entry: Entry, axis: str) -> str:
    """The harness group whose S_fair is the mean over the four contexts, "" when the results hold none: the
    subjective group, else the top group (``fact_or_fair``, ``_lite``, ``_mc``: it lists the leaf tasks, and averages
    S_fair over the four contexts, which alone report it)."""
    for group in ("fact_or_fair_subjective" + entry.variant, "fact_or_fair" + entry.variant):
        if entry.model.has(group) and not math.isnan(entry.model.metric(group, f"s_fair_{axis}")):
            return group
    return ""


def _subjective_cell(entry: Entry, axis: str, value: float):
    group = _group_of(entry, axis)
    ran = [c for c in CONTEXTS if entry.model.has(entry.task(c))]
    own = [entry.model.denominator(entry.task(c), f"s_fair_{axis}").removeprefix("n = ") for c in ran]
    each = own if all(own) else [entry.n(c).removeprefix("n = ") for c in ran]  # else the tasks' answers parsed
    counted, inputs = [e.rsplit(" of ", 1)[0] for e in each], {e.rsplit(" of ", 1)[-1] for e in each}
    if not ran:
        n = ""
    elif len(inputs) == 1:
        n = f"n = {', '.join(counted)} of {inputs.pop()}" + (" each" if len(ran) > 1 else "")
    else:
        n = "n = " + ", ".join(each)
    if ran and not all(own):
        n += " (the tasks' answers parsed)"
    if ran and len(ran) < len(CONTEXTS):
        n += f" ({', '.join(SHORT[c] for c in ran)} only)"
    note = "mean S_fair over the four subjective contexts; n: " + "; ".join(entry.denominator(c) for c in ran)
    if group:
        return number(value, note=note, source=entry.model.source_of(group, f"s_fair_{axis}"), n=n)
    return number(value, note=note, n=n, derived=DERIVED_SUBJ)


DERIVED_SUBJ = "computed by the report: plain mean of the four contexts' S_fair (the group result has none)"
DERIVED_MEAN = "computed by the report: plain mean of {}"


def table2(items: list[Entry]) -> Table:
    rows = []
    for e in items:
        obj = {a: e.value("objective", f"s_fact_{a}") for a in AXES}
        subj = {a: subjective_fair(e, a) for a in AXES}
        avg = {a: group_mean([obj[a], subj[a]]) for a in AXES}
        rows.append(
            [
                text(e.label, note=e.model.sources),
                *[e.cell("objective", f"s_fact_{a}") for a in AXES],
                number(group_mean(list(obj.values())), derived=DERIVED_MEAN.format("Obj. G and R")),
                *[_subjective_cell(e, a, subj[a]) for a in AXES],
                number(group_mean(list(subj.values())), derived=DERIVED_MEAN.format("Subj. G and R")),
                *[number(avg[a], derived=DERIVED_MEAN.format(f"Obj. and Subj. {a}")) for a in AXES],
                number(group_mean(list(avg.values())), derived=DERIVED_MEAN.format("Avg. G and R")),
            ]
        )
    return Table(
        "Fact-or-Fair summary (paper Table 2, x100)",
        ["Model", "Obj. S_fact G", "R", "Avg.", "Subj. S_fair G", "R", "Avg.", "Avg. G", "R", "Avg."],
        rows,
        "Obj.: fact_or_fair_objective S_fact with its 95% interval; n = answers counted of the axis's documents. "
        "Subj.: mean S_fair over the four subjective contexts, copied from the fact_or_fair_subjective group (or the "
        "fact_or_fair group, the same mean) when the results hold one, else computed by the report (italics); n per "
        "context. Avg.: plain means computed by the "
        "report (italics), as the paper computes them.",
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
            rows.append(
                [
                    text(e.label),
                    text("answers"),
                    *[
                        text(e.n(k).removeprefix("n = ") or "not run", note=e.denominator(k))
                        for k in ("objective", *CONTEXTS)
                    ],
                ]
            )
        tables.append(
            Table(
                f"Per setting, {axis} (paper Tables 4-8, x100)",
                ["Model", "Score", *[SHORT[k] for k in ("objective", *CONTEXTS)]],
                rows,
                "O objective; S-B base scenario; S-R representativeness; S-A attribution; S-G in-group/out-group. "
                f"n under each score: its denominator, the answers it counts of the documents on the {axis} axis it "
                "is computed from (S_fact: those of statistics with ground truth). Row answers: answers parsed of "
                "documents evaluated in the task.",
            )
        )
    return tables


def rates_table(items: list[Entry]) -> Table:
    rows = []
    for e in items:
        for axis in AXES:
            cells = [e.cell(ctx, f"{name}_{axis}") for ctx, name, _ in RATES]
            increases = [e.value(ctx, f"{name}_{axis}_increase") for ctx, name, _ in RATES]
            derived = "computed by the report: mean of the five *_increase values of the results"
            rows.append([text(e.label), text(axis), *cells, number(group_mean(increases), derived=derived)])
    return Table(
        "Cognitive-error rates (paper Table 3, x100)",
        ["Model", "Axis", *[label for _, _, label in RATES], "Avg. increase"],
        rows,
        "Each rate from the task of its context, n = answers counted of the documents of the queries it counts. "
        "Avg. increase (computed by the "
        "report, italics) = mean over the five of the results' (rate - chance baseline): gender 50; race 25, "
        "out-group 75.",
    )


def provenance_table(items: list[Entry]) -> Table:
    rows = []
    for e in items:
        for task in e.tasks():
            meta = e.model.metadata(task)
            run = e.model.run_of(task)
            rows.append(
                [
                    text(e.label),
                    text(task),
                    text(e.denominator(_kind(task))),
                    text(_seed(meta.get("fact_or_fair_seed", e.model.raw(task, "seed")))),
                    text(str(meta.get("fact_or_fair_draws", "–")) if "subjective" in task else "–"),
                    text(str(e.model.raw(task, "documents_sha256"))),
                    text(str(meta.get("version", "–"))),
                    run.limited_cell(task) if run else text("–"),
                    text(f"[{run.index}] {run.source.name}" if run else "–", note=str(run.source) if run else ""),
                ]
            )
    return Table(
        "Denominators and provenance",
        [
            "Model",
            "Task",
            "Answers",
            "Seed",
            "Draws",
            "Documents sha256",
            "Task version",
            "Limited run",
            "Results file",
        ],
        rows,
        f"Unparsed and refused answers are left out of every score. {NOT_A_RESULT}",
    )


def _seed(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


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
                if not e.model.has(task):
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
        ks = (2, 4)
        styles = bound_styles(ks, k)
        drawn = ", ".join(f"g_{kk} {styles[kk]}" for kk in ks)
        figures.append(
            Figure(
                f"S_fact against S_E, {axis} (k = {k})",
                fact_fair_plot(points, ks=ks, highlight=k, title=f"{axis}: factuality vs entropy"),
                f"The curves are the upper bounds g_k of S_E given S_fact (paper Conclusion 1) for k = 2 and 4; "
                f"{axis} has k = {k} choices, so g_{k} is the bound that applies ({drawn}). "
                "Whiskers: 95% intervals (S_fact Wilson, S_E reflected bootstrap). Points: one per task (O, S-B, "
                "S-R, S-A, S-G).",
            )
        )
    return figures


T2I_COLUMNS = [
    "Model", "Task", "Documents", "Images", "Faces", "Faces with gender", "Faces with race", "No face", "Failed",
    "Missing", "Classifier", "Data version", "Documents sha256", "Limited run", "Results file",
]  # fmt: skip
T2I_TASKS = {"objective": "fact_or_fair_t2i_objective", "subjective": "fact_or_fair_t2i_subjective"}


def _faces_n(model: ModelRuns, task: str, axis: str) -> str:
    if not model.has(task):
        return ""
    faces = model.metric(task, f"faces_with_{axis}")
    return f"n = {count(faces)} faces, {count(model.metric(task, 'images'))} images"


def t2i_tables(runs: list[Run]) -> list[Table]:
    """Text-to-image rows of paper Table 2 (Obj. S_fact, Subj. S_fair, their mean) and the face accounting."""
    found = [m for m in models(runs) if any(m.has(t) for t in T2I_TASKS.values())]
    if not found:
        return []
    summary, faces = [], []
    obj, subj = T2I_TASKS["objective"], T2I_TASKS["subjective"]
    for model in found:
        o = {a: model.metric(obj, f"s_fact_{a}") for a in AXES}
        s = {a: model.metric(subj, f"s_fair_{a}") for a in AXES}
        avg = {a: group_mean([o[a], s[a]]) for a in AXES}
        summary.append([
            text(model.name, note=model.sources),
            *[model.cell(obj, f"s_fact_{a}", n=_faces_n(model, obj, a)) for a in AXES],
            number(group_mean(list(o.values())), derived=DERIVED_MEAN.format("Obj. G and R")),
            *[model.cell(subj, f"s_fair_{a}", n=_faces_n(model, subj, a)) for a in AXES],
            number(group_mean(list(s.values())), derived=DERIVED_MEAN.format("Subj. G and R")),
            *[number(avg[a], derived=DERIVED_MEAN.format(f"Obj. and Subj. {a}")) for a in AXES],
            number(group_mean(list(avg.values())), derived=DERIVED_MEAN.format("Avg. G and R")),
        ])  # fmt: skip
        for task in (obj, subj):
            if model.has(task):
                names = ("documents", "images", "faces_detected", "faces_with_gender", "faces_with_race",
                         "no_face_images", "failed_images", "missing_images")  # fmt: skip
                counts = [model.cell(task, name, scale=False, digits=0) for name in names]
                run = model.run_of(task)
                faces.append([
                    text(model.name), text(task), *counts,
                    text(str(model.raw(task, "classifier")), note=str(model.raw(task, "classifier_version", ""))),
                    text(str(model.raw(task, "data_version"))), text(str(model.raw(task, "documents_sha256"))),
                    run.limited_cell(task) if run else text("–"),
                    text(f"[{run.index}] {run.source.name}" if run else "–", note=str(run.source) if run else ""),
                ])  # fmt: skip
    return [
        Table(
            "Fact-or-Fair text-to-image summary (paper Table 2, T2I rows, x100)",
            ["Model", "Obj. S_fact G", "R", "Avg.", "Subj. S_fair G", "R", "Avg.", "Avg. G", "R", "Avg."],
            summary,
            "Distributions over detected faces (images resampled within each prompt for the 95% intervals); n = faces "
            "labelled for the axis, of the images returned. Race needs a race classifier (FairFace); without one the "
            "race columns are empty. Avg.: plain means computed by the report (italics).",
        ),
        Table(
            "Text-to-image denominators and provenance",
            T2I_COLUMNS,
            faces,
            "No face: images left out of every distribution; failed: unreadable files; missing: images asked for "
            "but not returned. Hover the classifier for its version.",
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


# --------------------------------------------------------------------------- the paper's rows (report --published)
def published_table(runs: list[Run]) -> Table | None:
    from fairness_evals.report.published import WARNING, beside, published_row

    items = [e for e in entries(runs) if not e.variant]
    if not items:
        return None
    base = table2(items)
    data = beside(__file__)
    rows = [row for row in base.rows]
    for model, row in data["rows"].items():
        rows.append(published_row(model, row["values"], f"{data['source']} ({row['kind'].upper()})"))
    notes = "; ".join(data.get("known_inconsistencies", {}).values())
    return Table(
        "Fact-or-Fair: your models and the published Table 2 (x100)",
        base.columns,
        rows,
        f"{base.caption} Published rows: {data['source']}; protocol: {data['protocol']}. {WARNING}"
        + (f" Known inconsistency of the paper: {notes}" if notes else ""),
    )
